# mpiguide_find_mpi (cmake/mpiguideFindMPI.cmake) with CMAKE_C_COMPILER an MPI
# wrapper: while FindMPI runs, I_MPI_CC and MPICH_CC name the compiler the
# wrapper wraps (the first word of `mpicc -show`), never the wrapper itself
# (Intel MPI's mpicc then calls itself without end), and they are unset after.
# The wrapper here is a fake that logs what it was told and refuses to recurse.
# cmake -DSRC=<source root> -DWORK=<scratch dir> -P find_mpi_wrapper.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/bin" "${WORK}/proj")
set(log "${WORK}/wrapper.log")
file(WRITE "${WORK}/bin/mpicc" "#!/bin/sh
echo \"MPICH_CC=\${MPICH_CC-unset} I_MPI_CC=\${I_MPI_CC-unset}\" >> '${log}'
case \"\$1\" in -show) echo 'cc -I${WORK}/none'; exit 0 ;; esac
case \"\${MPICH_CC}\${I_MPI_CC}\" in *mpicc*) echo RECURSION >> '${log}'; exit 3 ;; esac
exec cc \"\$@\"
")
file(CHMOD "${WORK}/bin/mpicc" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
file(WRITE "${WORK}/proj/CMakeLists.txt" "cmake_minimum_required(VERSION 3.18)
project(find_mpi_wrapper C)
include(\"${SRC}/cmake/mpiguideFindMPI.cmake\")
mpiguide_find_mpi(COMPONENTS C QUIET)
if(DEFINED ENV{MPICH_CC} OR DEFINED ENV{I_MPI_CC})
  message(FATAL_ERROR \"mpiguide_find_mpi left MPICH_CC or I_MPI_CC set\")
endif()
")
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=MPICH_CC --unset=I_MPI_CC
                        ${CMAKE_COMMAND} -S "${WORK}/proj" -B "${WORK}/build"
                        "-DCMAKE_C_COMPILER=${WORK}/bin/mpicc" "-DMPI_C_COMPILER=${WORK}/bin/mpicc"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 300)
file(READ "${log}" calls)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring with the fake wrapper failed (${rc}):\n${out}")
endif()
if(calls MATCHES "RECURSION")
  message(FATAL_ERROR "the wrapper was told to wrap itself:\n${calls}")
endif()
if(NOT calls MATCHES "MPICH_CC=cc I_MPI_CC=cc")
  message(FATAL_ERROR "FindMPI never ran the wrapper with MPICH_CC=cc I_MPI_CC=cc:\n${calls}")
endif()
