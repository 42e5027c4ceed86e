# The LD_PRELOAD use of libmpiguide-tune (docs/tuning.md, "Using it"): a plain
# MPI program (tune_preload_app, not linked with the library) runs under
# mpiexec with the shared library preloaded, every collective it calls forced
# to a mock-up, and a report file; the program checks its results, and the
# report must show that the forced mock-ups ran (so the library was really
# interposed). Matches the report loosely (the collective and the mock-up's
# name on one line), so that any report line format passes.
#
# cmake -DMPIEXEC=... -DNP=... -DAPP=... -DLIB=... -DPRELOAD_FIRST=... -DWORK=...
#       [-DFORCE=coll=mockup,...] [-DMODE=off] [-DCHUNK=n] [-DARGS=...] [-DRECORD=1] -P tune_preload.cmake
# PRELOAD_FIRST: libraries that must come before LIB in LD_PRELOAD (the
# sanitizer runtimes in a sanitizer build: ASan must be the first library).
# FORCE: MPIGUIDE_TUNE_FORCE (every collective named must show its mock-up in
# the report; datatypes=S: some call with a derived datatype must show
# strategy S); MODE=off: the library preloaded in mode off (nothing forced,
# the report only has to exist); MODE=online: online mode, nothing forced, and
# the report must show MPI_Allreduce settled on some implementation; CHUNK: MPIGUIDE_TUNE_CHUNK, if given; ARGS:
# the program's arguments (an unmodified driver that checks its own data);
# RECORD=1: record mode on as well (MPIGUIDE_TUNE_RECORD), and the record file
# must be whole, with a row of every rank.
foreach(v MPIEXEC NP APP LIB WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "tune_preload.cmake: -D${v}=... is missing")
  endif()
endforeach()
separate_arguments(mpiexec_cmd UNIX_COMMAND "${MPIEXEC}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(report "${WORK}/report.txt")
set(preload "${LIB}")
if(PRELOAD_FIRST)
  string(REPLACE ";" ":" first "${PRELOAD_FIRST}")
  set(preload "${first}:${LIB}")
endif()
if(NOT DEFINED MODE)
  set(MODE forced)
endif()
if(MODE STREQUAL "off" OR MODE STREQUAL "online")
  set(FORCE "")
elseif(NOT DEFINED FORCE)
  set(FORCE "allreduce=allreduce_as_reduce_bcast,bcast=bcast_as_scatter_allgather,allgather=allgather_as_gather_bcast")
endif()
set(extra_env "")
if(DEFINED CHUNK)
  list(APPEND extra_env "MPIGUIDE_TUNE_CHUNK=${CHUNK}")
endif()
set(record "${WORK}/record.txt")
if(RECORD)
  list(APPEND extra_env "MPIGUIDE_TUNE_RECORD=${record}")
endif()
separate_arguments(app_args UNIX_COMMAND "${ARGS}")
execute_process(
  COMMAND ${mpiexec_cmd} -n ${NP} env "LD_PRELOAD=${preload}" MPIGUIDE_TUNE_MODE=${MODE}
          "MPIGUIDE_TUNE_FORCE=${FORCE}" "MPIGUIDE_TUNE_REPORT=${report}" ${extra_env} "${APP}" ${app_args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tune_preload: the program failed (exit ${rc})")
endif()
if(NOT EXISTS "${report}")
  message(FATAL_ERROR "tune_preload: no report ${report}: the library was not preloaded or did not write it")
endif()
if(RECORD)
  if(NOT EXISTS "${record}")
    message(FATAL_ERROR "tune_preload: no record file ${record}")
  endif()
  file(READ "${record}" rec)
  math(EXPR last "${NP} - 1")
  foreach(r RANGE ${last})
    if(NOT rec MATCHES "\n${r} MPI_[A-Za-z_]+ ")
      message(FATAL_ERROR "tune_preload: the record has no row of rank ${r}:\n${rec}")
    endif()
  endforeach()
  if(NOT rec MATCHES "#@end=ok\n$")
    message(FATAL_ERROR "tune_preload: the record file is not whole:\n${rec}")
  endif()
endif()
file(READ "${report}" text)
message("report:\n${text}")
if(MODE STREQUAL "online" AND NOT text MATCHES "#@tune_online\\[MPI_Allreduce ${NP} [0-9]+ int sum\\]=chosen=[a-z_]+ ")
  message(FATAL_ERROR "tune_preload: the report has no settled key of MPI_Allreduce (online mode)")
endif()
# allreduce=allreduce_as_reduce_bcast: MPI_Allreduce must have run allreduce_as_reduce_bcast
string(REPLACE "," ";" entries "${FORCE}")
foreach(entry IN LISTS entries)
  if(entry STREQUAL "")
    continue()
  endif()
  string(REGEX REPLACE "^([a-z_]+)=([a-z_]+)$" "\\1;\\2" pair "${entry}")
  list(GET pair 0 coll)
  list(GET pair 1 mockup)
  if(coll STREQUAL "datatypes" AND mockup STREQUAL "native")
    continue() # native calls with derived datatypes are not counted
  elseif(coll STREQUAL "datatypes")
    if(NOT text MATCHES "#@tune_dt\\[[^]\n]* ${mockup}\\]=[1-9]")
      message(FATAL_ERROR "tune_preload: the report has no call with a derived datatype that took ${mockup}")
    endif()
    continue()
  endif()
  string(SUBSTRING "${coll}" 0 1 first_letter)
  string(TOUPPER "${first_letter}" first_letter)
  string(SUBSTRING "${coll}" 1 -1 rest)
  set(coll "MPI_${first_letter}${rest}")
  if(NOT text MATCHES "${coll}[^\n]*[ \t]${mockup}([] \t=]|\n)")
    message(FATAL_ERROR "tune_preload: the report has no line of ${coll} that ran ${mockup}")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
message("tune_preload: ok")
