# Erroneous calls under libmpiguide-tune are never worse than native. For every
# case of tune_errors_app (MPICH's errors/coll calls and a few more) the native
# call runs first, then every mock-up of the collective, forced:
#   - where the native call reports the error as the case expects (exit 0),
#     the mock-up must too; where it completes without (exit 1), the mock-up
#     must complete;
#   - no run may hang (HANG seconds, far beyond any run's time) or write
#     outside the buffers (exit 3; a
#     sanitizer build also reports it), and the communicator's error handler
#     runs at most once, and for every error returned (exit 4);
#   - a "signature" case (a type signature mismatch, MPICH's truncmsg2) may
#     complete without the native call's error under a datatype strategy,
#     which receives the bytes as MPI_PACKED (a note), but not hang or write
#     outside the buffers;
#   - a "hidden" case (counts that differ between ranks in a Bcast or a
#     reduction: no rank's own arguments show the error, and nothing short of
#     an extra message per call could) only has to stay inside its buffers:
#     MPI may abort or hang inside an inner call whose counts disagree (MPICH's
#     own Allgather and Allreduce do), which is reported, not failed
#     (docs/tuning.md, "Erroneous calls").
# A case whose native call crashes, or does not end within NATIVE_WAIT seconds
# (some hang natively; one that ends takes 1-3 s under the sanitizers on the
# 2-core test machine), is left out with a note: nothing to compare with.
# Waiting is never a failure but for HANG; the short waits only cost notes on
# a loaded machine.
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
execute_process(COMMAND "${APP}" --list OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tune_errors: ${APP} --list failed (${rc})")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(failures "")
set(notes "")
set(runs 0)
set(compared 0)
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(REPLACE " " ";" words "${line}")
  list(POP_FRONT words case kind)
  # a hidden case's mock-ups may hang, which is no failure: a short wait
  set(wait ${HANG})
  if(kind STREQUAL "hidden")
    set(wait 10)
  endif()
  foreach(impl IN ITEMS native LISTS words)
    if(impl STREQUAL "native")
      set(limit ${NATIVE_WAIT})
    else()
      set(limit ${wait})
    endif()
    file(MAKE_DIRECTORY "${scratch}")
    file(TOUCH "${scratch}/.started")
    execute_process(COMMAND "${CMAKE_COMMAND}" -E env "TMPDIR=${scratch}" ${mpiexec_cmd} -n ${NP} "${APP}" ${case} ${impl}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${limit})
    execute_process(COMMAND sh "${SWEEP}" "${scratch}/.started")
    file(REMOVE_RECURSE "${scratch}")
    math(EXPR runs "${runs} + 1")
    if(impl STREQUAL "native")
      if(NOT rc MATCHES "^[01]$")
        list(APPEND notes "left out ${case}: the native call ends with '${rc}'")
        break()
      endif()
      set(native_rc ${rc})
      continue()
    endif()
    math(EXPR compared "${compared} + 1")
    set(text "${out}${err}")
    if(rc EQUAL 0 OR (rc EQUAL 1 AND native_rc EQUAL 1))
      continue()
    endif()
    # a type signature mismatch under a datatype strategy: the bytes that arrived are received as MPI_PACKED,
    # whose signature matches anything (docs/tuning.md); it must still end and stay inside the buffers
    if(kind STREQUAL "signature" AND rc EQUAL 1 AND NOT text MATCHES "AddressSanitizer|runtime error")
      list(APPEND notes "${case} ${impl}: completed without the error the native call reports (a type signature mismatch packing hides)")
      continue()
    endif()
    if(kind STREQUAL "hidden" AND NOT rc MATCHES "^[34]$" AND NOT text MATCHES "AddressSanitizer|runtime error")
      if(rc EQUAL 1)
        set(how "completed without reporting the error (native: ${native_rc})")
      elseif(rc MATCHES "timeout")
        set(how "hung in an inner call, stopped by the timeout")
      else()
        set(how "MPI aborted inside an inner call (exit ${rc})")
      endif()
      list(APPEND notes "${case} ${impl}: ${how}")
      continue()
    endif()
    string(REGEX REPLACE "\n" "\n    " shown "${text}")
    list(APPEND failures "${case} ${impl}: exit ${rc} (native: ${native_rc})\n    ${shown}")
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
