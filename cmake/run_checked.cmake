# For cmake -P scripts (tests/install_consumer, tests/samples):
# run(<what> <command> [args…]) runs a command and, when it fails, stops with
# its output and the command line. The output is left in `out`.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "${what} failed (${result}):\n  ${command}\n${output}")
  endif()
  set(out "${output}" PARENT_SCOPE)
endfunction()
