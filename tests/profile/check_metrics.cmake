# bench/gpu/ncu_metrics.txt (used by the GPU recording script) must equal `kiln profile --list-metrics`.
execute_process(COMMAND ${KILN} profile --list-metrics OUTPUT_VARIABLE live RESULT_VARIABLE rc)
file(READ ${LIST} saved)
if(NOT rc EQUAL 0 OR NOT live STREQUAL saved)
  message(FATAL_ERROR "bench/gpu/ncu_metrics.txt is out of date: run `kiln profile --list-metrics > bench/gpu/ncu_metrics.txt`")
endif()
