# The exported symbols of a shared library against the list kept in the repo:
# every defined dynamic symbol (nm -D --defined-only) must be on the list and
# every name on the list must be exported. Fails naming each extra and each
# missing symbol. Hidden visibility (src/dt, src/tune) is what keeps the list
# short: the libraries export their API and nothing else.
#
# cmake -DNM=... -DLIB=... -DEXPECTED=... [-DCC=<mpicc>] -P exports.cmake
# EXPECTED: one name a line, '#' comments; with CC, its MPI_ and MPIX_ names
# that the stack's mpi.h does not declare (MPI-4 large-count forms in Open MPI
# 5, MPI-4.1 functions, extensions) are left out.
cmake_minimum_required(VERSION 3.20)
foreach(v LIB EXPECTED)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "exports.cmake: -D${v}=... is missing")
  endif()
endforeach()
if(NOT NM OR NOT EXISTS "${NM}")
  message("exports: skipped: nm not found (install binutils to check what ${LIB} exports)")
  return()
endif()
get_filename_component(lib_name "${LIB}" NAME)

file(STRINGS "${EXPECTED}" expected REGEX "^[^#]")
list(TRANSFORM expected STRIP)
list(FILTER expected EXCLUDE REGEX "^$")
if(CC)
  include(${CMAKE_CURRENT_LIST_DIR}/mpi_declared.cmake)
  mg_mpi_declared("${CC}" declared unused)
  foreach(name IN LISTS expected)
    if(name MATCHES "^MPIX?_" AND NOT name IN_LIST declared)
      list(REMOVE_ITEM expected "${name}")
    endif()
  endforeach()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/library_exports.cmake)
mg_library_exports("${NM}" "${LIB}" exported)
list(SORT expected)

set(extra "${exported}")
if(expected)
  list(REMOVE_ITEM extra ${expected})
endif()
set(missing "${expected}")
if(exported)
  list(REMOVE_ITEM missing ${exported})
endif()
list(LENGTH exported n)
if(extra OR missing)
  set(msg "exports: ${lib_name} exports ${n} symbol(s), not the ${EXPECTED} list:")
  foreach(s IN LISTS extra)
    string(APPEND msg "\n  extra (exported, not on the list): ${s}")
  endforeach()
  foreach(s IN LISTS missing)
    string(APPEND msg "\n  missing (on the list, not exported): ${s}")
  endforeach()
  message(FATAL_ERROR "${msg}")
endif()
message("exports: ok: ${lib_name} exports exactly the ${n} symbols of ${EXPECTED}")
