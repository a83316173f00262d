# SPDX-License-Identifier: MIT
# Installs headers, both libraries, the CMake package and broadphase.pc.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/broadphase DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS broadphase broadphase_static EXPORT broadphaseTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT broadphaseTargets NAMESPACE broadphase::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/broadphase)

configure_package_config_file(cmake/broadphaseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/broadphaseConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/broadphase)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/broadphaseConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/broadphaseConfig.cmake ${PROJECT_BINARY_DIR}/broadphaseConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/broadphase)

configure_file(cmake/broadphase.pc.in ${PROJECT_BINARY_DIR}/broadphase.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/broadphase.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
