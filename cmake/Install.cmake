# Installation, the CMake package, pkg-config and the Debian package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(EMBER_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Ember)

# Every library defined under lib/ and backends/ (and the LLVM interface
# target they use) is installed and exported.
set(EMBER_INSTALL_LIBS ember_llvm)
foreach(dir lib backends backends/CPU backends/CUDA)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${dir}/CMakeLists.txt)
    get_property(targets DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}
      PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t ${targets})
      get_target_property(type ${t} TYPE)
      if(type MATCHES "LIBRARY$")
        list(APPEND EMBER_INSTALL_LIBS ${t})
      endif()
    endforeach()
  endif()
endforeach()
set(EMBER_INSTALL_TOOLS)
foreach(tool model-compiler model-runner image-classifier)
  if(TARGET ${tool})
    list(APPEND EMBER_INSTALL_TOOLS ${tool})
  endif()
endforeach()

install(TARGETS ${EMBER_INSTALL_TOOLS} EXPORT EmberTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${EMBER_INSTALL_LIBS} EXPORT EmberTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/ember DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_BINARY_DIR}/include/ember/Generated
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ember)
install(EXPORT EmberTargets NAMESPACE Ember::
  DESTINATION ${EMBER_INSTALL_CMAKEDIR})

configure_package_config_file(cmake/EmberConfig.cmake.in
  ${CMAKE_BINARY_DIR}/EmberConfig.cmake
  INSTALL_DESTINATION ${EMBER_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/EmberConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/EmberConfig.cmake
  ${CMAKE_BINARY_DIR}/EmberConfigVersion.cmake cmake/EmberBundle.cmake
  DESTINATION ${EMBER_INSTALL_CMAKEDIR})

set(EMBER_PC_LIBS)
foreach(lib ${EMBER_INSTALL_LIBS})
  get_target_property(type ${lib} TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    string(APPEND EMBER_PC_LIBS " -l${lib}")
  endif()
endforeach()
configure_file(cmake/ember.pc.in ${CMAKE_BINARY_DIR}/ember.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ember.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# cpack -G DEB
set(CPACK_PACKAGE_NAME ember)
set(CPACK_PACKAGE_VENDOR "Ember")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Ahead-of-time neural-network compiler: ONNX models to linkable bundles")
set(CPACK_PACKAGE_CONTACT "Ember developers <ember@localhost>")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Ember developers <ember@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# The tools need these runtime libraries; the CMake package also needs the
# -dev packages to link the static libraries, so they are recommended.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libllvm19 (>= 1:19.1), libprotobuf32 (>= 3.21), libonnx1 (>= 1.12), libgoogle-glog0v6 (>= 0.6), libpng16-16, libjpeg62-turbo, libstdc++6, libc6")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
  "cmake, llvm-19-dev, libprotobuf-dev, libonnx-dev, libgoogle-glog-dev")
include(CPack)
