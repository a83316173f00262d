# SPDX-License-Identifier: MIT
# Installs headers, both libraries, the CMake package and broadphase.pc; the build tree is a
# package too (find_package with broadphase_DIR set to the build directory).
include(CMakePackageConfigHelpers)

# mpi.h goes with broadphase::mpi (src/mpi), only where MPI is found.
install(DIRECTORY include/broadphase DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN mpi.h EXCLUDE)
install(TARGETS broadphase broadphase_static EXPORT broadphaseTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT broadphaseTargets NAMESPACE broadphase::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/broadphase)
# The same targets from the build tree, beside the broadphaseConfig.cmake configured below, so
# that find_package works before any install. The static library links the build's
# sanitizer and warning interfaces (empty in a plain build) as link-only dependencies, so they
# are exported with it here; the installed package has neither.
export(TARGETS broadphase broadphase_static bp_sanitize bp_warnings NAMESPACE broadphase::
  FILE ${PROJECT_BINARY_DIR}/broadphaseTargets.cmake)

configure_package_config_file(cmake/broadphaseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/broadphaseConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/broadphase)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/broadphaseConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/broadphaseConfig.cmake ${PROJECT_BINARY_DIR}/broadphaseConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/broadphase)

# Relocatable: paths relative to the .pc file itself, so `cmake --install --prefix P`
# gives a broadphase.pc that points into P, not into the configure-time prefix.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(BP_PC_PCDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
else()
  set(BP_PC_PCDIR "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()
file(RELATIVE_PATH BP_PC_UP "${BP_PC_PCDIR}" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" BP_PC_UP "${BP_PC_UP}")
set(BP_PC_PREFIX "\${pcfiledir}/${BP_PC_UP}")
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(BP_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(BP_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
# The OpenMP flag of the compiler the library was built with (-fopenmp, -fopenmp=libomp).
string(REPLACE ";" " " BP_PC_OPENMP "${OpenMP_C_FLAGS}")
configure_file(cmake/broadphase.pc.in ${PROJECT_BINARY_DIR}/broadphase.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/broadphase.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
