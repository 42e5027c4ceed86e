# Included before project(): where CMAKE_C_COMPILER is not given, MG_MPI_FAMILY
# (mpich, openmpi, impi; the presets of CMakePresets.json set it) chooses the
# MPI compiler wrapper, looked for in MG_MPI_PREFIX/bin (a cache variable or
# the environment), then under the stacks mpiguide installs
# (MPIGUIDE_HOME/stacks/<family>/prefix, default ~/.local/share/mpiguide), then
# as the family's own name on the PATH (Debian: mpicc.mpich, mpicc.openmpi;
# Intel MPI: mpiicx, mpiicc in I_MPI_ROOT/bin).
set(MG_MPI_FAMILY "" CACHE STRING "MPI family of the build (mpich, openmpi, impi); chooses the compiler wrapper")
set(MG_MPI_PREFIX "$ENV{MG_MPI_PREFIX}" CACHE PATH "installation prefix of the MPI to build with (optional)")
if(MG_MPI_FAMILY AND NOT CMAKE_C_COMPILER)
  set(_mg_families mpich openmpi impi)
  if(NOT MG_MPI_FAMILY IN_LIST _mg_families)
    list(JOIN _mg_families ", " _mg_text)
    message(FATAL_ERROR "MG_MPI_FAMILY=${MG_MPI_FAMILY}: choose one of ${_mg_text}, or give "
                        "-DCMAKE_C_COMPILER=<the MPI's mpicc>")
  endif()
  if(DEFINED ENV{MPIGUIDE_HOME})
    set(_mg_home "$ENV{MPIGUIDE_HOME}")
  else()
    set(_mg_home "$ENV{HOME}/.local/share/mpiguide")
  endif()
  set(_mg_hints "")
  if(MG_MPI_PREFIX)
    list(APPEND _mg_hints "${MG_MPI_PREFIX}/bin")
  endif()
  list(APPEND _mg_hints "${_mg_home}/stacks/${MG_MPI_FAMILY}/prefix/bin")
  if(MG_MPI_FAMILY STREQUAL "impi")
    list(APPEND _mg_hints "$ENV{I_MPI_ROOT}/bin")
    set(_mg_names mpiicx mpiicc mpicc)
  else()
    set(_mg_names mpicc)
  endif()
  find_program(MG_MPICC NAMES ${_mg_names} HINTS ${_mg_hints} NO_DEFAULT_PATH)
  if(NOT MG_MPICC)
    find_program(MG_MPICC NAMES mpicc.${MG_MPI_FAMILY} ${_mg_names})
  endif()
  if(NOT MG_MPICC)
    list(JOIN _mg_names ", " _mg_text)
    list(JOIN _mg_hints ", " _mg_where)
    message(FATAL_ERROR "MG_MPI_FAMILY=${MG_MPI_FAMILY}: no MPI compiler wrapper (${_mg_text}) in ${_mg_where} "
                        "or on the PATH: install the MPI, or give -DMG_MPI_PREFIX=<its prefix> (or "
                        "-DCMAKE_C_COMPILER=<its mpicc>)")
  endif()
  set(CMAKE_C_COMPILER "${MG_MPICC}")
  unset(_mg_families)
  unset(_mg_home)
  unset(_mg_hints)
  unset(_mg_names)
  unset(_mg_text)
  unset(_mg_where)
endif()
# What the MPI compiler wrapper needs in its environment when something other than the build runs it (the
# tests that read mpi.h through it, tests/c/mpi_declared.cmake): Intel MPI's mpicc finds its headers and
# libraries through I_MPI_ROOT, which `mpiguide stack env impi` sets. Taken from the environment of the
# configure, else the wrapper's own prefix (the parent of its bin/), so that ctest needs no environment.
if(CMAKE_C_COMPILER AND NOT DEFINED MG_MPI_COMPILER_ENV)
  get_filename_component(_mg_bin "${CMAKE_C_COMPILER}" DIRECTORY)
  get_filename_component(_mg_prefix "${_mg_bin}" DIRECTORY)
  set(_mg_env "")
  if(MG_MPI_FAMILY STREQUAL "impi" OR EXISTS "${_mg_prefix}/bin/impi_info" OR EXISTS "${_mg_prefix}/etc/impi")
    if(DEFINED ENV{I_MPI_ROOT} AND NOT "$ENV{I_MPI_ROOT}" STREQUAL "")
      set(_mg_env "I_MPI_ROOT=$ENV{I_MPI_ROOT}")
    else()
      set(_mg_env "I_MPI_ROOT=${_mg_prefix}")
    endif()
  endif()
  set(MG_MPI_COMPILER_ENV "${_mg_env}" CACHE STRING "NAME=VALUE list the MPI compiler wrapper needs to run")
  unset(_mg_bin)
  unset(_mg_prefix)
  unset(_mg_env)
endif()
