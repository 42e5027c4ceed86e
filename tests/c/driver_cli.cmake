# Runs a driver once on a command line and checks its exit status, its
# standard error and (for --list) its standard output; cmake -P with:
#   MPIEXEC NP     launcher and process count
#   DRIVER         the driver executable
#   ARGS           driver arguments, space separated
#   EXPECT_RC      expected exit status
#   SET_ENV        optional NAME=VALUE: the driver runs with it in its environment
#   STDERR_MATCH   optional regex standard error must match exactly once (an
#                  error is printed by rank 0 alone); write ';' as '.', since
#                  add_test splits arguments at ';'
#   PYTHON         optional python3: with a JSON_* check, standard output
#                  must be exactly one JSON document (json.loads rejects
#                  anything after it)
#   JSON_HAS       optional: standard output is one JSON object holding these
#                  members, space separated; a member is a path with parts
#                  separated by '.', array elements by index
#                  (collectives.0.mockups.0.guideline)
#   JSON_EQUAL     optional: PATH=VALUE pairs, space separated, the members
#                  must equal (strings without quotes)
#   JSON_ABSENT    optional: members that must not be there
if(DEFINED SET_ENV)
  string(FIND "${SET_ENV}" "=" eq)
  string(SUBSTRING "${SET_ENV}" 0 ${eq} name)
  math(EXPR eq "${eq} + 1")
  string(SUBSTRING "${SET_ENV}" ${eq} -1 value)
  set(ENV{${name}} "${value}")
endif()
separate_arguments(args UNIX_COMMAND "${ARGS}")
separate_arguments(cmd UNIX_COMMAND "${MPIEXEC}")
execute_process(COMMAND ${cmd} -n ${NP} "${DRIVER}" ${args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "${DRIVER} exited with '${rc}', expected ${EXPECT_RC}")
endif()
if(DEFINED STDERR_MATCH)
  string(REGEX MATCH "${STDERR_MATCH}" first "${err}")
  if(first STREQUAL "")
    message(FATAL_ERROR "standard error does not match '${STDERR_MATCH}'")
  endif()
  string(FIND "${err}" "${first}" pos)
  string(LENGTH "${first}" len)
  math(EXPR pos "${pos} + ${len}")
  string(SUBSTRING "${err}" ${pos} -1 rest)
  if(rest MATCHES "${STDERR_MATCH}")
    message(FATAL_ERROR "standard error matches '${STDERR_MATCH}' more than once")
  endif()
endif()

set(json_checks 0)
if(DEFINED JSON_HAS OR DEFINED JSON_EQUAL OR DEFINED JSON_ABSENT)
  set(json_checks 1)
endif()
if(PYTHON AND json_checks)
  execute_process(COMMAND "${PYTHON}" -c "import json, sys; json.loads(sys.argv[1])" "${out}"
                  RESULT_VARIABLE prc ERROR_VARIABLE perr)
  if(NOT prc EQUAL 0)
    message(FATAL_ERROR "standard output is not one JSON document: ${perr}")
  endif()
endif()

# A path "a.0.b" as the argument list of string(JSON ... GET).
function(json_get path var found)
  string(REPLACE "." ";" parts "${path}")
  string(JSON value ERROR_VARIABLE error GET "${out}" ${parts})
  set(${var} "${value}" PARENT_SCOPE)
  if(error)
    set(${found} 0 PARENT_SCOPE)
  else()
    set(${found} 1 PARENT_SCOPE)
  endif()
endfunction()

if(json_checks)
  string(JSON type ERROR_VARIABLE error TYPE "${out}")
  if(error OR NOT type STREQUAL "OBJECT")
    message(FATAL_ERROR "standard output is not a JSON object: ${error}")
  endif()
endif()
separate_arguments(has UNIX_COMMAND "${JSON_HAS}")
foreach(path IN LISTS has)
  json_get("${path}" value found)
  if(NOT found)
    message(FATAL_ERROR "--list has no member ${path}")
  endif()
endforeach()
separate_arguments(equal UNIX_COMMAND "${JSON_EQUAL}")
foreach(pair IN LISTS equal)
  string(FIND "${pair}" "=" eq)
  string(SUBSTRING "${pair}" 0 ${eq} path)
  math(EXPR eq "${eq} + 1")
  string(SUBSTRING "${pair}" ${eq} -1 want)
  json_get("${path}" value found)
  if(NOT found OR NOT value STREQUAL want)
    message(FATAL_ERROR "--list: ${path} is '${value}', expected '${want}'")
  endif()
endforeach()
separate_arguments(absent UNIX_COMMAND "${JSON_ABSENT}")
foreach(path IN LISTS absent)
  json_get("${path}" value found)
  if(found)
    message(FATAL_ERROR "--list has the member ${path}, which it must not have")
  endif()
endforeach()
