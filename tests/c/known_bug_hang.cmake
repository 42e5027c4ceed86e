# The known bugs that make a call hang (tests/c/known_bugs.c, `hangs`): each reproducer runs in a launch of its
# own (test_known_bugs --hang NAME), stopped after WAIT seconds, far beyond the milliseconds it takes where the
# library returns. It must hang where the bug is listed for the library ("known <family> bug <name>: ...") and
# return where it is not; either way round fails, so the list stays true. The MPI segments a stopped launch
# leaves in /dev/shm are removed by SWEEP.
#
# cmake -DMPIEXEC=... -DNP=... -DAPP=<test_known_bugs> -DSWEEP=<cmake/mg-shm-sweep.sh> -DWORK=<scratch dir>
#       [-DWAIT=30] -P known_bug_hang.cmake
cmake_minimum_required(VERSION 3.20)
foreach(v MPIEXEC NP APP SWEEP WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "known_bug_hang.cmake: -D${v}=... is missing")
  endif()
endforeach()
if(NOT DEFINED WAIT)
  set(WAIT 30)
endif()
separate_arguments(mpiexec_cmd UNIX_COMMAND "${MPIEXEC}")
execute_process(COMMAND ${mpiexec_cmd} -n 1 "${APP}" --hangs OUTPUT_VARIABLE names RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "known_bug_hang: ${APP} --hangs failed (${rc})")
endif()
string(REGEX REPLACE "\n$" "" names "${names}")
string(REPLACE "\n" ";" names "${names}")
set(failures "")
foreach(name IN LISTS names)
  file(REMOVE_RECURSE "${WORK}")
  file(MAKE_DIRECTORY "${WORK}")
  file(TOUCH "${WORK}/.started")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "TMPDIR=${WORK}" ${mpiexec_cmd} -n ${NP} "${APP}" --hang ${name}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT ${WAIT})
  execute_process(COMMAND sh "${SWEEP}" "${WORK}/.started")
  file(REMOVE_RECURSE "${WORK}")
  string(REGEX MATCH "known [^\n]*" what "${out}")
  if(out MATCHES "listed=1")
    if(out MATCHES "returned")
      list(APPEND failures "${name} is listed for this library, but its reproducer returned: remove the entry or "
                           "narrow its versions in tests/c/known_bugs.c (${rc})")
    else()
      message("${what} (reproduced: no return within ${WAIT} s)")
    endif()
  elseif(out MATCHES "listed=0")
    if(out MATCHES "returned")
      message("ok: ${name} is not in this library")
    else()
      list(APPEND failures "${name} is not listed for this library, but its reproducer did not return within "
                           "${WAIT} s (${rc}): list this version in tests/c/known_bugs.c")
    endif()
  else()
    list(APPEND failures "${name}: the reproducer did not start (${rc}): ${out}${err}")
  endif()
endforeach()
if(failures)
  string(REPLACE ";" "\n  " text "${failures}")
  message(FATAL_ERROR "known_bug_hang:\n  ${text}")
endif()
