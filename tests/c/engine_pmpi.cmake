# The engine inside libmpiguide-tune calls MPI through PMPI_ alone
# (src/dt/mpi_entry.h): none of its objects leaves an MPI_ function undefined,
# so none of its calls can reach the library's own interceptors. The same
# sources built for libmpiguide-dt must call MPI_ functions (else this check
# would pass for a reason other than mpi_entry.h).
# cmake -DNM=... "-DPMPI_OBJECTS=a.o|b.o" "-DMPI_OBJECTS=a.o|b.o" -P engine_pmpi.cmake
foreach(v NM PMPI_OBJECTS MPI_OBJECTS)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "engine_pmpi.cmake: -D${v}=... is missing")
  endif()
endforeach()

function(undefined_mpi objects out)
  string(REPLACE "|" ";" objects "${objects}")
  execute_process(COMMAND "${NM}" -u ${objects} RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "engine_pmpi: ${NM} -u failed (exit ${rc}): ${err}")
  endif()
  string(REGEX MATCHALL "[ \t]U[ \t]+MPI_[A-Za-z0-9_]+" found "${text}")
  list(TRANSFORM found REPLACE "^[ \t]U[ \t]+" "")
  list(REMOVE_DUPLICATES found)
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

undefined_mpi("${PMPI_OBJECTS}" left)
undefined_mpi("${MPI_OBJECTS}" plain)
if(left)
  list(JOIN left ", " text)
  message(FATAL_ERROR "engine_pmpi: the engine built for libmpiguide-tune still calls ${text}: add them to "
                      "src/dt/mpi_entry.h")
endif()
if(NOT plain MATCHES "MPI_Type_commit")
  message(FATAL_ERROR "engine_pmpi: the engine built for libmpiguide-dt calls no MPI_Type_commit ('${plain}'): "
                      "the check reads nm's output wrongly")
endif()
list(LENGTH plain n)
message("engine_pmpi: libmpiguide-dt's engine calls ${n} MPI_ functions; libmpiguide-tune's calls none")
