# FindRDKit: Debian's librdkit-dev installs headers in /usr/include/rdkit and libraries named libRDKit<Part>.so,
# but no CMake config. This module finds them and defines imported targets RDKit::<Part> for the parts gnn
# uses (plus their link dependencies through RDKit::RDKit).
#
#   find_package(RDKit REQUIRED)  ->  RDKit_FOUND, RDKit_INCLUDE_DIRS, RDKit_VERSION, RDKit::RDKit, RDKit::<Part>
include(FindPackageHandleStandardArgs)
find_path(RDKit_INCLUDE_DIR GraphMol/RDKitBase.h PATH_SUFFIXES rdkit)
# Descriptors, Fingerprints and PartialCharges: molecule-level descriptors (data/MoleculeDescriptors.h).
set(_rdkit_parts Descriptors Fingerprints PartialCharges SmilesParse FileParsers ChemTransforms DistGeomHelpers
    ForceFieldHelpers ForceField DistGeometry MolTransforms Alignment EigenSolvers Optimizer SubstructMatch Subgraphs
    GraphMol RDGeometryLib DataStructs Catalogs RDStreams RDGeneral)
set(_rdkit_libs)
foreach(part ${_rdkit_parts})
  find_library(RDKit_${part}_LIBRARY NAMES RDKit${part})
  mark_as_advanced(RDKit_${part}_LIBRARY)
  if(RDKit_${part}_LIBRARY)
    list(APPEND _rdkit_libs RDKit_${part}_LIBRARY)
  endif()
endforeach()
if(RDKit_INCLUDE_DIR AND EXISTS "${RDKit_INCLUDE_DIR}/RDGeneral/versions.h")
  file(STRINGS "${RDKit_INCLUDE_DIR}/RDGeneral/versions.h" _v REGEX "rdkitVersion = \"[^\"]+\"")
  string(REGEX REPLACE ".*rdkitVersion = \"([^\"]+)\".*" "\\1" RDKit_VERSION "${_v}")
endif()
find_package_handle_standard_args(RDKit REQUIRED_VARS RDKit_INCLUDE_DIR RDKit_GraphMol_LIBRARY
  RDKit_SmilesParse_LIBRARY RDKit_RDGeneral_LIBRARY VERSION_VAR RDKit_VERSION)
if(RDKit_FOUND)
  set(RDKit_INCLUDE_DIRS "${RDKit_INCLUDE_DIR}")
  # RDKit's public headers include Boost headers (shared_ptr, dynamic_bitset, ...).
  find_package(Boost 1.74 REQUIRED)
  foreach(part ${_rdkit_parts})
    if(RDKit_${part}_LIBRARY AND NOT TARGET RDKit::${part})
      add_library(RDKit::${part} SHARED IMPORTED)
      set_target_properties(RDKit::${part} PROPERTIES
        IMPORTED_LOCATION "${RDKit_${part}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${RDKit_INCLUDE_DIR}"
        INTERFACE_LINK_LIBRARIES Boost::headers)
    endif()
  endforeach()
  if(NOT TARGET RDKit::RDKit)
    add_library(RDKit::RDKit INTERFACE IMPORTED)
    set(_targets)
    foreach(part ${_rdkit_parts})
      if(TARGET RDKit::${part})
        list(APPEND _targets RDKit::${part})
      endif()
    endforeach()
    set_target_properties(RDKit::RDKit PROPERTIES INTERFACE_LINK_LIBRARIES "${_targets}")
  endif()
endif()
