# Installs and exports Grove for applications outside the tree:
#   find_package(Grove)  ->  Grove::grove_rt, Grove::grovec, grove_add_model()
#   pkg-config grove     ->  -I.../include -L.../lib -lgrove_rt + BLAS
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(GROVE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Grove)

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/GroveConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/GroveConfig.cmake
  INSTALL_DESTINATION ${GROVE_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/cmake/GroveConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
# Relocatable: the prefix is found from the .pc file's own directory, so
# `cmake --install --prefix` anywhere gives a working file.
file(RELATIVE_PATH GROVE_PC_TO_PREFIX
  "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${CMAKE_CURRENT_LIST_DIR}/grove.pc.in
  ${CMAKE_BINARY_DIR}/grove.pc @ONLY)

install(FILES
  ${CMAKE_BINARY_DIR}/cmake/GroveConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/GroveConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/GroveAddModel.cmake
  DESTINATION ${GROVE_INSTALL_CMAKEDIR})
install(FILES ${CMAKE_BINARY_DIR}/grove.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
