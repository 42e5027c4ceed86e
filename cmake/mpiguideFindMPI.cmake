# mpiguide_find_mpi(<find_package(MPI) arguments>): find_package(MPI) that
# also works when CMAKE_C_COMPILER is the MPI compiler wrapper itself, as in
# mpiguide's own trees. FindMPI sets I_MPI_CC and MPICH_CC to CMAKE_C_COMPILER
# before it runs the wrapper, so Intel MPI's mpicc, told to wrap itself, calls
# itself without end (hundreds of processes, a configure that never returns).
# Where the compiler is such a wrapper, those variables name the compiler it
# wraps (the first word of `<wrapper> -show`) while FindMPI runs, unless the
# environment sets them already; they are removed again afterwards.
macro(mpiguide_find_mpi)
  set(_mg_env_set "")
  get_filename_component(_mg_cc "${CMAKE_C_COMPILER}" NAME)
  if(_mg_cc MATCHES "^mpi")
    execute_process(COMMAND "${CMAKE_C_COMPILER}" -show OUTPUT_VARIABLE _mg_show ERROR_QUIET
                    RESULT_VARIABLE _mg_rc TIMEOUT 60)
    if(_mg_rc EQUAL 0 AND _mg_show MATCHES "^[ \t]*([^ \t\r\n]+)")
      set(_mg_wrapped "${CMAKE_MATCH_1}")  # kept: the next MATCHES resets CMAKE_MATCH_1
      get_filename_component(_mg_wrapped_name "${_mg_wrapped}" NAME)
      if(NOT _mg_wrapped_name MATCHES "^mpi")
        foreach(_mg_v I_MPI_CC MPICH_CC)
          if(NOT DEFINED ENV{${_mg_v}})
            set(ENV{${_mg_v}} "${_mg_wrapped}")
            list(APPEND _mg_env_set ${_mg_v})
          endif()
        endforeach()
      endif()
    endif()
  endif()
  find_package(MPI ${ARGN})
  foreach(_mg_v IN LISTS _mg_env_set)
    unset(ENV{${_mg_v}})
  endforeach()
  unset(_mg_env_set)
  unset(_mg_cc)
  unset(_mg_show)
  unset(_mg_rc)
  unset(_mg_wrapped)
  unset(_mg_wrapped_name)
endmacro()
