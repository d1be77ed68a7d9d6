# CatalystPlugin.cmake — catalyst_add_plugin(<name> SOURCES ... [OUTPUT_DIRECTORY dir]
# [NO_INSTALL]) builds libcatalyst-<name>.so exporting only ctl_plugin_query (hidden
# visibility plus a linker version script), the way every Catalyst plugin must be built.
# Used in the Catalyst tree and, installed, by find_package(Catalyst) in a vendor's tree.
function(catalyst_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  set(target catalyst-${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES PREFIX "lib" C_VISIBILITY_PRESET hidden
                        CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(CATALYST_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CATALYST_PLUGIN_OUTPUT_DIR})
  endif()
  if(TARGET catalyst_sdk)
    target_link_libraries(${target} PRIVATE catalyst_sdk)
  else()
    target_link_libraries(${target} PRIVATE Catalyst::sdk)
  endif()
  # plugin.map lies beside this file, in the source tree and when installed.
  target_link_options(${target} PRIVATE "LINKER:--version-script=${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin.map"
                      "LINKER:--no-undefined")
  if(NOT ARG_NO_INSTALL)
    include(GNUInstallDirs)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/catalyst/plugins)
  endif()
endfunction()
