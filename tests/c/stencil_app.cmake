# Runs the stencil application driver mg_stencil once and checks its outcome;
# cmake -P with:
#   MPIEXEC NP      launcher and process count (NP 0: run the driver directly)
#   DRIVER          the mg_stencil executable
#   ARGS            driver arguments, space separated (--output is added)
#   OUT             raw output file
#   EXPECT_RC       expected exit status (0, 2 or 3)
#   EXPECT_ERROR    1: the raw file must hold an #@error line matching
#                   ERROR_MATCH (regex); 0: it must hold none, and end with #@end=ok
#   STDERR_MATCH    optional regex the driver's standard error must match
#   RAW_MATCH       optional regex the raw file must match (`.` also matches a
#                   newline, so one regex can require several lines in order)
#   BAD_PGM         optional: write a malformed PGM there first
#   GOOD_PGM        optional: write a valid 7x5 P2 image there first
if(DEFINED BAD_PGM)
  file(WRITE "${BAD_PGM}" "P5\n3 x\n255\nabc")
endif()
if(DEFINED GOOD_PGM)
  file(WRITE "${GOOD_PGM}" "P2\n# test\n7 5\n255\n0 10 20 30 40 50 60\n255 0 255 0 255 0 255\n"
       "1 2 3 4 5 6 7\n200 100 50 25 12 6 3\n9 99 199 254 128 64 32\n")
endif()
separate_arguments(args UNIX_COMMAND "${ARGS}")
if(NP EQUAL 0)
  set(cmd "${DRIVER}")
else()
  separate_arguments(cmd UNIX_COMMAND "${MPIEXEC}")
  list(APPEND cmd -n ${NP} "${DRIVER}")
endif()
file(REMOVE "${OUT}")
execute_process(COMMAND ${cmd} ${args} --output "${OUT}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "exit ${rc}\nstderr:\n${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "mg_stencil exited with '${rc}', expected ${EXPECT_RC}")
endif()
if(DEFINED STDERR_MATCH AND NOT err MATCHES "${STDERR_MATCH}")
  message(FATAL_ERROR "standard error does not match '${STDERR_MATCH}'")
endif()
if(EXPECT_RC EQUAL 2)
  return()
endif()
file(READ "${OUT}" raw)
string(REGEX MATCHALL "#@error\\[[^\n]*" errors "${raw}")
if(EXPECT_ERROR)
  if(NOT errors)
    message(FATAL_ERROR "no #@error line in ${OUT}")
  endif()
  if(DEFINED ERROR_MATCH AND NOT errors MATCHES "${ERROR_MATCH}")
    message(FATAL_ERROR "#@error lines do not match '${ERROR_MATCH}': ${errors}")
  endif()
else()
  if(errors)
    message(FATAL_ERROR "errors in ${OUT}: ${errors}")
  endif()
  if(NOT raw MATCHES "\n#@end=ok\n")
    message(FATAL_ERROR "${OUT} does not end with #@end=ok")
  endif()
  if(NOT raw MATCHES "\napp packing mode gnx gny steps rep time_s\n")
    message(FATAL_ERROR "${OUT} has no column line")
  endif()
endif()
if(DEFINED RAW_MATCH AND NOT raw MATCHES "${RAW_MATCH}")
  message(FATAL_ERROR "${OUT} does not match '${RAW_MATCH}':\n${raw}")
endif()
