# run_install_test.cmake — installs the build into a fresh prefix, then builds and runs
# consumers of the installed package exactly as a user would:
#  1. cmake --install <build> --prefix <tmp>
#  2. gcc -std=c99 -pedantic -Wall -Werror $(pkg-config --cflags catalyst) consumer.c
#     $(pkg-config --libs catalyst), run with no CATALYST_* variable (plugins must be found
#     from the installed layout; LD_LIBRARY_PATH=<tmp>/lib only if the loader needs it)
#  3. the installed headers compiled as C++20
#  4. a find_package(Catalyst) project (cmake_consumer/) configured with
#     CMAKE_PREFIX_PATH=<tmp>, built and run;
#  5. a C++ find_package project on Catalyst::cpp (cpp_consumer/), which also checks that
#     every documented target name exists, built and run;
#  6. the installed skeleton (<tmp>/share/catalyst/skeleton) copied, built as a vendor
#     would, loaded by the installed `catalyst devices --plugin`, and run through the
#     installed `catalyst conformance`, which must find no failure and report that the
#     `core` level is not reached (exit status 2: the skeleton implements no op).
#  7. the worked vendor plugin (examples/vendor_plugin/, docs/vendor-guide.md: host memory,
#     matmul through OpenBLAS) copied out of the tree, built against the prefix alone as a
#     vendor would, and run through the installed `catalyst conformance --level core`, which
#     must find no failure and report the `core` level reached (exit status 0).
# Arguments: BUILD_DIR WORK_DIR SOURCE_DIR DATADIR C_COMPILER CXX_COMPILER GENERATOR, and
# VENDOR_PLUGIN_DIR (step 7; empty when OpenBLAS was not found at configure time).
function(run)
  cmake_parse_arguments(R "" "WHAT;EXPECT" "COMMAND;ENV" ${ARGN})
  if(NOT DEFINED R_EXPECT)
    set(R_EXPECT 0)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CATALYST_PLUGINS --unset=CATALYST_PLUGIN_PATH
                          --unset=CATALYST_LOG ${R_ENV} ${R_COMMAND}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL R_EXPECT)
    message(FATAL_ERROR "${R_WHAT} failed (exit ${rc}, expected ${R_EXPECT}):\n  ${R_COMMAND}\n${out}\n${err}")
  endif()
  message(STATUS "${R_WHAT}: ok ${out}")
  set(LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

run(WHAT "cmake --install" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# Where did the library and the pkg-config file go (lib or lib/<multiarch>)?
file(GLOB_RECURSE pc_files ${prefix}/*/catalyst.pc)
if(NOT pc_files)
  message(FATAL_ERROR "no catalyst.pc under ${prefix}: install rules for pkg-config are missing")
endif()
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
get_filename_component(libdir ${pc_dir} DIRECTORY)
file(GLOB plugins ${libdir}/catalyst/plugins/libcatalyst-*.so)
if(NOT plugins)
  message(FATAL_ERROR "no plugin installed in ${libdir}/catalyst/plugins")
endif()
foreach(test_plugin no-entry query-null abi-major2 null-entry older-abi garbage)
  if(EXISTS ${libdir}/catalyst/plugins/libcatalyst-test-${test_plugin}.so)
    message(FATAL_ERROR "test plugin libcatalyst-test-${test_plugin}.so was installed")
  endif()
endforeach()

set(pc_env PKG_CONFIG_PATH=${pc_dir})
run(WHAT "pkg-config --cflags" ENV ${pc_env} COMMAND pkg-config --cflags catalyst)
separate_arguments(cflags UNIX_COMMAND "${LAST_OUTPUT}")
run(WHAT "pkg-config --libs" ENV ${pc_env} COMMAND pkg-config --libs catalyst)
separate_arguments(libs UNIX_COMMAND "${LAST_OUTPUT}")

run(WHAT "compile consumer.c" COMMAND ${C_COMPILER} -std=c99 -pedantic -Wall -Werror ${cflags}
    ${SOURCE_DIR}/consumer.c ${libs} -lm -o ${WORK_DIR}/consumer)

# Does the loader find libcatalyst without help (rpath)? If not, LD_LIBRARY_PATH=<libdir>
# and nothing more; the plugins must then be found from libcatalyst's own location.
execute_process(COMMAND ldd ${WORK_DIR}/consumer OUTPUT_VARIABLE ldd_out)
set(run_env "")
if(ldd_out MATCHES "libcatalyst[^\n]*not found")
  set(run_env LD_LIBRARY_PATH=${libdir})
  message(STATUS "libcatalyst needs LD_LIBRARY_PATH=${libdir} (no rpath from pkg-config)")
endif()
run(WHAT "run consumer" ENV ${run_env} COMMAND ${WORK_DIR}/consumer)

run(WHAT "installed headers as C++20" COMMAND ${CXX_COMPILER} -std=c++20 -Wall -Wextra -pedantic -Werror
    ${cflags} ${SOURCE_DIR}/headers_cxx.cpp -fsyntax-only)
foreach(header catalyst catalyst_plugin)
  run(WHAT "installed ${header}.h as C99" COMMAND ${C_COMPILER} -std=c99 -Wall -Wextra -pedantic -Werror
      ${cflags} -x c ${prefix}/include/catalyst/${header}.h -fsyntax-only)
endforeach()

run(WHAT "configure the find_package consumer"
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/cmake_consumer -B ${WORK_DIR}/cmake_consumer -G ${GENERATOR}
            -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER})
run(WHAT "build the find_package consumer" COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake_consumer)
run(WHAT "run the find_package consumer" ENV ${run_env} COMMAND ${WORK_DIR}/cmake_consumer/cmake_consumer)

run(WHAT "configure the C++ find_package consumer"
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/cpp_consumer -B ${WORK_DIR}/cpp_consumer -G ${GENERATOR}
            -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
run(WHAT "build the C++ find_package consumer" COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/cpp_consumer)
run(WHAT "run the C++ find_package consumer" ENV ${run_env} COMMAND ${WORK_DIR}/cpp_consumer/cpp_consumer)

# The vendor's path: copy the installed skeleton, build it against the prefix, load it.
set(skeleton_src ${prefix}/${DATADIR}/catalyst/skeleton)
if(NOT EXISTS ${skeleton_src}/CMakeLists.txt)
  message(FATAL_ERROR "the skeleton plugin is not installed in ${skeleton_src}")
endif()
file(COPY ${skeleton_src}/ DESTINATION ${WORK_DIR}/mydevice)
run(WHAT "configure the skeleton plugin"
    COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/mydevice -B ${WORK_DIR}/mydevice/build -G ${GENERATOR}
            -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
run(WHAT "build the skeleton plugin" COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/mydevice/build)
set(skeleton_plugin ${WORK_DIR}/mydevice/build/libcatalyst-skeleton.so)
run(WHAT "catalyst devices --plugin <skeleton>" ENV ${run_env}
    COMMAND ${prefix}/bin/catalyst devices --plugin ${skeleton_plugin})
if(NOT LAST_OUTPUT MATCHES "skeleton")
  message(FATAL_ERROR "catalyst devices did not list the skeleton plugin:\n${LAST_OUTPUT}")
endif()
run(WHAT "catalyst conformance --plugin <skeleton>" EXPECT 2 ENV ${run_env}
    COMMAND ${prefix}/bin/catalyst conformance --plugin ${skeleton_plugin} --jobs 2
            --report ${WORK_DIR}/skeleton-conformance.json)
if(NOT LAST_OUTPUT MATCHES " 0 failed, 0 crashed, 0 timed out" OR NOT LAST_OUTPUT MATCHES "level reached: none")
  message(FATAL_ERROR "the suite should find nothing wrong with the skeleton and report no level reached:\n${LAST_OUTPUT}")
endif()

# The worked vendor plugin: its own project, built from the prefix, must reach `core`.
if(NOT VENDOR_PLUGIN_DIR)
  message(STATUS "worked vendor plugin: skipped, OpenBLAS (libopenblas-dev) was not found at configure time")
  return()
endif()
file(COPY ${VENDOR_PLUGIN_DIR}/ DESTINATION ${WORK_DIR}/vendor_plugin)
run(WHAT "configure the worked vendor plugin"
    COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/vendor_plugin -B ${WORK_DIR}/vendor_plugin/build -G ${GENERATOR}
            -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release
            "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror")
run(WHAT "build the worked vendor plugin" COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/vendor_plugin/build)
set(vendor_plugin ${WORK_DIR}/vendor_plugin/build/libcatalyst-hostblas.so)
run(WHAT "catalyst conformance --plugin <hostblas> --level core" ENV ${run_env}
    COMMAND ${prefix}/bin/catalyst conformance --plugin ${vendor_plugin} --level core --jobs 2
            --report ${WORK_DIR}/vendor-plugin-conformance.json)
if(NOT LAST_OUTPUT MATCHES " 0 failed, 0 crashed, 0 timed out" OR NOT LAST_OUTPUT MATCHES "level reached: core")
  message(FATAL_ERROR "the worked vendor plugin should pass every core case and reach the core level:\n${LAST_OUTPUT}")
endif()
