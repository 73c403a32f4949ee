# Finds oneDNN (Debian: libdnnl-dev), the GEMM kernels behind gnn/kernels/Gemm.h.
#   find_package(DNNL REQUIRED)  ->  DNNL_FOUND, DNNL_VERSION, DNNL::DNNL
# Debian's own dnnl-config.cmake requires OpenCL's CMake files (its library is built for OpenCL GPUs too); gnn
# uses the CPU engine only, so this module finds the header and library directly.
find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
find_library(DNNL_LIBRARY NAMES dnnl)
if(DNNL_INCLUDE_DIR AND EXISTS "${DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h")
  file(STRINGS "${DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h" _dnnl_v REGEX "#define DNNL_VERSION_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*PATCH ([0-9]+).*" "\\1.\\2.\\3" DNNL_VERSION "${_dnnl_v}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(DNNL REQUIRED_VARS DNNL_INCLUDE_DIR DNNL_LIBRARY VERSION_VAR DNNL_VERSION)
if(DNNL_FOUND AND NOT TARGET DNNL::DNNL)
  add_library(DNNL::DNNL UNKNOWN IMPORTED)
  set_target_properties(DNNL::DNNL PROPERTIES IMPORTED_LOCATION "${DNNL_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${DNNL_INCLUDE_DIR}")
endif()
mark_as_advanced(DNNL_INCLUDE_DIR DNNL_LIBRARY)
