# `cmake --install build/<stack> --prefix P` (docs/install.md): the headers,
# libmpiguide-dt and libmpiguide-tune (shared and static), the drivers in
# libexec/mpiguide, the CMake package (find_package(mpiguide)) and pkg-config
# files, all for the MPI library this tree was configured with.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# What a consumer needs to find the same MPI: the compiler wrapper (mpicc) and
# the library's own version string.
set(MG_MPI_C_COMPILER "${CMAKE_C_COMPILER}")
include(${CMAKE_CURRENT_LIST_DIR}/mpiguideFindMPI.cmake)
mpiguide_find_mpi(COMPONENTS C QUIET)
set(MG_MPI_LIBRARY_VERSION "unknown")
if(MPI_C_FOUND)
  foreach(t mpiguide_dt mpiguide_dt_shared mpiguide_tune mpiguide_tune_shared)
    target_link_libraries(${t} INTERFACE $<INSTALL_INTERFACE:MPI::MPI_C>)
  endforeach()
  if(MPI_C_LIBRARY_VERSION_STRING)
    string(REGEX REPLACE "[\n\r\"\\\\].*" "" MG_MPI_LIBRARY_VERSION "${MPI_C_LIBRARY_VERSION_STRING}")
  endif()
endif()

set_target_properties(mpiguide_dt_shared PROPERTIES EXPORT_NAME dt)
set_target_properties(mpiguide_dt PROPERTIES EXPORT_NAME dt_static OUTPUT_NAME mpiguide-dt)
set_target_properties(mpiguide_tune_shared PROPERTIES EXPORT_NAME tune)
set_target_properties(mpiguide_tune PROPERTIES EXPORT_NAME tune_static OUTPUT_NAME mpiguide-tune)
foreach(t mpiguide_dt mpiguide_dt_shared mpiguide_tune mpiguide_tune_shared)
  target_include_directories(${t} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

install(TARGETS mpiguide_dt mpiguide_dt_shared mpiguide_tune mpiguide_tune_shared EXPORT mpiguideTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/mpiguide DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(MG_DRIVERS mg_pingpong mg_dtexplain mg_dtbench mg_ddtbench mg_ddtbench_tuned mg_ddtexchange mg_ddtexchange_tuned
               mg_collbench mg_mpit mg_tuneoverhead mg_tuneoverhead_shared mg_stencil_app)
set_target_properties(${MG_DRIVERS} PROPERTIES INSTALL_RPATH "$ORIGIN/../../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS ${MG_DRIVERS} RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/mpiguide)

set(MG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mpiguide)
install(EXPORT mpiguideTargets NAMESPACE mpiguide:: DESTINATION ${MG_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mpiguideConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/mpiguideConfig.cmake INSTALL_DESTINATION ${MG_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mpiguideConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mpiguideConfig.cmake ${PROJECT_BINARY_DIR}/mpiguideConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/mpiguideFindMPI.cmake
        DESTINATION ${MG_CMAKE_DIR})

# pkg-config: the prefix relative to the .pc file, so that any --prefix works.
file(RELATIVE_PATH MG_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
foreach(lib dt tune)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/mpiguide-${lib}.pc.in ${PROJECT_BINARY_DIR}/mpiguide-${lib}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/mpiguide-${lib}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
