# Finds LIBXSMM (Debian: libxsmm-dev), the JIT small-matrix kernels behind gnn/kernels/Gemm.h's float32
# products without a transposed operand.
#   find_package(LIBXSMM REQUIRED)  ->  LIBXSMM_FOUND, LIBXSMM_VERSION, LIBXSMM::LIBXSMM
# Debian ships static archives only (built position-independent). libxsmm's BLAS fallback is not used (gnn calls
# its JIT kernels, and oneDNN where libxsmm has none), so libxsmmnoblas stands in for BLAS.
find_path(LIBXSMM_INCLUDE_DIR libxsmm.h)
find_library(LIBXSMM_LIBRARY NAMES xsmm)
find_library(LIBXSMM_NOBLAS_LIBRARY NAMES xsmmnoblas)
if(LIBXSMM_INCLUDE_DIR AND EXISTS "${LIBXSMM_INCLUDE_DIR}/libxsmm_version.h")
  file(STRINGS "${LIBXSMM_INCLUDE_DIR}/libxsmm_version.h" _xsmm_v
       REGEX "#define LIBXSMM_CONFIG_VERSION_(MAJOR|MINOR|UPDATE) ")
  string(REGEX REPLACE ".*MAJOR +([0-9]+).*MINOR +([0-9]+).*UPDATE +([0-9]+).*" "\\1.\\2.\\3" LIBXSMM_VERSION "${_xsmm_v}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LIBXSMM REQUIRED_VARS LIBXSMM_INCLUDE_DIR LIBXSMM_LIBRARY LIBXSMM_NOBLAS_LIBRARY
                                  VERSION_VAR LIBXSMM_VERSION)
if(LIBXSMM_FOUND AND NOT TARGET LIBXSMM::LIBXSMM)
  find_package(Threads REQUIRED)
  add_library(LIBXSMM::LIBXSMM UNKNOWN IMPORTED)
  set_target_properties(LIBXSMM::LIBXSMM PROPERTIES IMPORTED_LOCATION "${LIBXSMM_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${LIBXSMM_INCLUDE_DIR}"
                        INTERFACE_LINK_LIBRARIES "${LIBXSMM_NOBLAS_LIBRARY};Threads::Threads;${CMAKE_DL_LIBS};rt;m")
endif()
mark_as_advanced(LIBXSMM_INCLUDE_DIR LIBXSMM_LIBRARY LIBXSMM_NOBLAS_LIBRARY)
