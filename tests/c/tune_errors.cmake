# Erroneous calls under libmpiguide-tune are never worse than native. For every
# case of tune_errors_app (MPICH's errors/coll calls and a few more) the native
# call runs first, then every mock-up of the collective, forced (all in one
# launch, or each in a launch of its own where that one does not end cleanly).
# Each run's status is the one the app prints (an exit status alone cannot
# tell an abort by MPI from the app's own statuses):
#   - where the native call reports the error as the case expects (status 0),
#     the mock-up must too; where it completes without (status 1), the mock-up
#     must complete;
#   - no run may hang (HANG seconds, far beyond any run's time), end without
#     its status, write outside the buffers (status 3) or draw a sanitizer's
#     report (a leak at exit too), and the communicator's error handler runs
#     at most once, and for every error returned (status 4);
#   - a "signature" case (a type signature mismatch, MPICH's truncmsg2) may
#     complete without the native call's error under a datatype strategy,
#     which receives the bytes as MPI_PACKED (a note), but not hang or write
#     outside the buffers;
#   - a "hidden" case (counts that differ between ranks in a Bcast or a
#     reduction: no rank's own arguments show the error, and nothing short of
#     an extra message per call could) only has to stay inside its buffers:
#     MPI may abort or hang inside an inner call whose counts disagree (MPICH's
#     own Allgather and Allreduce do), which is reported, not failed
#     (docs/tuning.md, "Erroneous calls");
#   - a mock-up whose inner call hangs on a case by a known bug of the MPI
#     library (tests/c/known_bugs.c; tune_errors_app --list marks it
#     IMPL!BUG) runs alone and its hang is reported as that bug's.
# Where MPI ends the job natively (Open MPI 5.0 aborts an aliased Allreduce
# with MPI_ERR_BUFFER on MPI_COMM_WORLD, whatever the call's communicator's
# error handler), the mock-up may report the error or end the job too. A case
# whose native call crashes (Open MPI 5.0 with NULL buffers; an exit status
# alone tells neither from an abort nor from status 1, the sanitizers' report
# does) or does not end within NATIVE_WAIT seconds (some hang
# natively; one that ends takes 1-3 s under the sanitizers on the 2-core test
# machine) is left out with a note: nothing to compare with. Waiting is never a
# failure but for HANG; the short waits only cost notes on a loaded machine.
#
# cmake -DMPIEXEC=... -DNP=... -DAPP=... -DSWEEP=<cmake/mg-shm-sweep.sh> [-DNATIVE_WAIT=10] [-DHANG=300]
#       -P tune_errors.cmake
cmake_minimum_required(VERSION 3.20)
foreach(v MPIEXEC NP APP SWEEP)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "tune_errors.cmake: -D${v}=... is missing")
  endif()
endforeach()
if(NOT DEFINED NATIVE_WAIT)
  set(NATIVE_WAIT 10)
endif()
if(NOT DEFINED HANG)
  set(HANG 300)
endif()
separate_arguments(mpiexec_cmd UNIX_COMMAND "${MPIEXEC}")
# What a run stopped by its timeout leaves behind (a killed launcher cleans
# nothing up) goes to a directory of this test's, removed after every run; the
# MPI segments such a run or an abort leaves in /dev/shm are removed by SWEEP.
set(scratch "${CMAKE_CURRENT_BINARY_DIR}/tune_errors.tmp")
# what a sanitizer's report (AddressSanitizer, LeakSanitizer, UBSan) contains
set(sanitizer_report "AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error")
execute_process(COMMAND "${APP}" --list OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tune_errors: ${APP} --list failed (${rc})")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(failures "")
set(notes "")
set(runs 0)
set(compared 0)

# One launch of the app with one implementation or several (a list): sets text (its output), rc (its exit)
# and statuses, one per implementation: the status the app printed for it, else how the launch ended
# ("exit N", or the timeout), and counts the launch.
function(launch case impls limit)
  file(MAKE_DIRECTORY "${scratch}")
  file(TOUCH "${scratch}/.started")
  string(JOIN "," joined ${impls})
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "TMPDIR=${scratch}" ${mpiexec_cmd} -n ${NP} "${APP}" ${case} ${joined}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${limit})
  execute_process(COMMAND sh "${SWEEP}" "${scratch}/.started")
  file(REMOVE_RECURSE "${scratch}")
  list(LENGTH impls several)
  set(found "")
  foreach(impl IN LISTS impls)
    set(printed "")
    if(out MATCHES "status ${case} ${impl} ([0-9]+)\n")
      set(printed ${CMAKE_MATCH_1})
    endif()
    # a launch of one ends with its status, unless something came after it (a leak report at exit)
    if(NOT printed STREQUAL "" AND (several GREATER 1 OR code STREQUAL printed))
      list(APPEND found ${printed})
    elseif(code MATCHES "^[0-9]+$")
      list(APPEND found "exit ${code}")
    else()
      list(APPEND found "${code}")
    endif()
  endforeach()
  math(EXPR n "${runs} + 1")
  set(runs ${n} PARENT_SCOPE)
  set(rc "${code}" PARENT_SCOPE)
  set(statuses "${found}" PARENT_SCOPE)
  set(text "${out}${err}" PARENT_SCOPE)
endfunction()

# Whether a mock-up's run (its status, the launch's output text) is as good as the native call's
# (native_status); appends to failures or notes.
function(judge case kind impl status text)
  math(EXPR n "${compared} + 1")
  set(compared ${n} PARENT_SCOPE)
  set(clean TRUE)
  if(text MATCHES "${sanitizer_report}")
    set(clean FALSE)
  endif()
  if(clean AND (status STREQUAL "0" OR (status STREQUAL "1" AND native_status STREQUAL "1")))
    return()
  endif()
  # where MPI ends the job natively, the mock-up may too
  if(clean AND native_status MATCHES "^exit" AND status MATCHES "^exit")
    return()
  endif()
  # a type signature mismatch under a datatype strategy: the bytes that arrived are received as MPI_PACKED,
  # whose signature matches anything (docs/tuning.md); it must still end and stay inside the buffers
  if(clean AND kind STREQUAL "signature" AND status STREQUAL "1")
    list(APPEND notes "${case} ${impl}: completed without the error the native call reports (a type signature mismatch packing hides)")
    set(notes "${notes}" PARENT_SCOPE)
    return()
  endif()
  if(clean AND kind STREQUAL "hidden" AND NOT status MATCHES "^[34]$")
    if(status STREQUAL "1")
      set(how "completed without reporting the error (native: ${native_status})")
    elseif(status MATCHES "timeout")
      set(how "hung in an inner call, stopped by the timeout")
    else()
      set(how "MPI aborted inside an inner call (${status})")
    endif()
    list(APPEND notes "${case} ${impl}: ${how}")
    set(notes "${notes}" PARENT_SCOPE)
    return()
  endif()
  string(REGEX REPLACE "\n" "\n    " shown "${text}")
  list(APPEND failures "${case} ${impl}: status ${status} (native: ${native_status})\n    ${shown}")
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(REPLACE " " ";" impls "${line}")
  list(POP_FRONT impls case kind)
  # IMPL!BUG: a known bug of the library (tests/c/known_bugs.c) makes IMPL's inner call hang on this case: it
  # runs alone, with a short wait, and a hang is reported as the bug's
  set(known_hangs "")
  foreach(entry IN LISTS impls)
    if(entry MATCHES "^([^!]+)!(.+)$")
      list(APPEND known_hangs "${CMAKE_MATCH_1}")
      set(bug_of_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  list(FILTER impls EXCLUDE REGEX "!")
  launch(${case} native ${NATIVE_WAIT})
  if(NOT statuses MATCHES "^([01]|exit [0-9]+)$")
    list(APPEND notes "left out ${case}: the native call ends with '${statuses}'")
    continue()
  endif()
  if(text MATCHES "${sanitizer_report}")
    list(APPEND notes "left out ${case}: the native call crashes ('${statuses}', a sanitizer's report)")
    continue()
  endif()
  set(native_status ${statuses})
  # All mock-ups of a case in one launch, each on a communicator of its own (launches are most of this
  # test's time). Where that launch does not end cleanly with a status for each, every mock-up runs in a
  # launch of its own, so that one that hangs, aborts or breaks the process is judged alone. A hidden
  # case's mock-ups may hang, which is no failure: each runs alone, with a short wait.
  set(alone "${impls}")
  if(NOT kind STREQUAL "hidden")
    launch(${case} "${impls}" ${HANG})
    if(rc STREQUAL "0" AND NOT statuses MATCHES "[^0-9;]" AND NOT text MATCHES "${sanitizer_report}")
      set(alone "")
      foreach(impl status IN ZIP_LISTS impls statuses)
        judge(${case} ${kind} ${impl} "${status}" "${text}")
      endforeach()
    else()
      list(APPEND notes "${case}: the launch of all its mock-ups ended with '${rc}', each ran alone")
    endif()
  endif()
  set(wait ${HANG})
  if(kind STREQUAL "hidden")
    set(wait 10)
  endif()
  foreach(impl IN LISTS alone)
    launch(${case} ${impl} ${wait})
    judge(${case} ${kind} ${impl} "${statuses}" "${text}")
  endforeach()
  foreach(impl IN LISTS known_hangs)
    launch(${case} ${impl} 10)
    if(statuses MATCHES "timeout" AND NOT text MATCHES "${sanitizer_report}")
      list(APPEND notes "${case} ${impl}: hung in an inner call, stopped by the timeout (known bug ${bug_of_${impl}})")
    else()
      judge(${case} ${kind} ${impl} "${statuses}" "${text}")
    endif()
  endforeach()
endforeach()
message("tune_errors: ${runs} runs at ${NP} processes, ${compared} compared with the native call")
foreach(n IN LISTS notes)
  message("  ${n}")
endforeach()
if(compared EQUAL 0)
  message(FATAL_ERROR "tune_errors: no mock-up run could be compared with its native call (see the notes)")
endif()
if(failures)
  string(REPLACE ";" "\n" text "${failures}")
  message(FATAL_ERROR "tune_errors: worse than native:\n${text}")
endif()
