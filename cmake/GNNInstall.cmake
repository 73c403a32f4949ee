# Installs the libraries, headers and a package config so that another project can find_package(gnn).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
get_property(libs GLOBAL PROPERTY GNN_LIBRARIES)
install(TARGETS ${libs} gnn_all EXPORT gnnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT gnnTargets NAMESPACE gnn:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gnn)
configure_package_config_file(cmake/gnnConfig.cmake.in "${PROJECT_BINARY_DIR}/gnnConfig.cmake"
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gnn)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/gnnConfigVersion.cmake" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/gnnConfig.cmake" "${PROJECT_BINARY_DIR}/gnnConfigVersion.cmake"
              cmake/FindRDKit.cmake cmake/FindMETIS.cmake cmake/FindDNNL.cmake
              cmake/FindLIBXSMM.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gnn)
