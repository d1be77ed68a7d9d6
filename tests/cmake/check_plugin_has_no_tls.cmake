# Checks that a plugin has no thread-local storage (no PT_TLS segment). A plugin is a library
# the core may unload, and a thread-local in one outlives it in every thread that touched it:
# glibc keeps a library with thread_local destructors mapped until each such thread exits
# (so memory stays behind after the runtime is released), and the dynamic TLS block it gets
# in each thread is what LeakSanitizer (GCC 12's) misread at exit when the block happened to
# start 16 bytes into a page ("DTLS ... at 0x1af-0x28000012b1", a crash after a passing
# test). Per-thread state belongs to the plugin's objects instead.
# Usage: cmake -DREADELF=<readelf> -DPLUGIN=<file> -P check_plugin_has_no_tls.cmake
if(NOT READELF)
  set(READELF readelf)
endif()
if(NOT EXISTS "${PLUGIN}")
  message(FATAL_ERROR "plugin file '${PLUGIN}' does not exist")
endif()
execute_process(COMMAND ${READELF} -lW "${PLUGIN}" OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${READELF} -lW ${PLUGIN} failed (${rc}): ${err}")
endif()
if(out MATCHES "\n +TLS ")
  message(FATAL_ERROR "${PLUGIN} has thread-local storage (a PT_TLS segment); keep per-thread state in the "
                      "plugin's objects (readelf -sW shows the TLS symbols)")
endif()
message(STATUS "${PLUGIN}: no thread-local storage")
