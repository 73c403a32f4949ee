# FindMETIS: Debian's libmetis-dev ships metis.h and libmetis.so without a CMake config.
#   find_package(METIS REQUIRED)  ->  METIS_FOUND, METIS::METIS
include(FindPackageHandleStandardArgs)
find_path(METIS_INCLUDE_DIR metis.h)
find_library(METIS_LIBRARY NAMES metis)
find_package_handle_standard_args(METIS REQUIRED_VARS METIS_INCLUDE_DIR METIS_LIBRARY)
if(METIS_FOUND AND NOT TARGET METIS::METIS)
  add_library(METIS::METIS SHARED IMPORTED)
  set_target_properties(METIS::METIS PROPERTIES IMPORTED_LOCATION "${METIS_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${METIS_INCLUDE_DIR}")
endif()
mark_as_advanced(METIS_INCLUDE_DIR METIS_LIBRARY)
