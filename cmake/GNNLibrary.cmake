# Libraries are compiled as unity builds (GNN_UNITY_BUILD, on by default): a batch of their .cpp files per
# translation unit, so the headers every file includes (Eigen, nlohmann::json, the op and layer headers) are parsed,
# and their inline functions instantiated and compiled, once a batch instead of once a file: the libraries build in
# about half the time. Names at file scope (anonymous namespaces included) must then differ between a library's
# files; -DGNN_UNITY_BUILD=OFF builds file by file (faster rebuilds after a one-file change).
option(GNN_UNITY_BUILD "Compile the libraries as unity builds (batches of GNN_UNITY_BATCH_SIZE files)" ON)
set(GNN_UNITY_BATCH_SIZE 8 CACHE STRING "Files per unity translation unit (GNN_UNITY_BUILD)")
function(gnn_unity_build target)
  if(GNN_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${GNN_UNITY_BATCH_SIZE})
  endif()
endfunction()

# gnn_add_library(<name> DEPS <targets...>): one library per top-level folder, built from every .cpp in it
# (and its subfolders), exported as gnn::<name without the gnn_ prefix>.
function(gnn_add_library name)
  cmake_parse_arguments(ARG "" "" "PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}/*.h")
  if(sources)
    add_library(${name} ${sources})
    target_include_directories(${name} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
      $<INSTALL_INTERFACE:include/gnn>)
    target_link_libraries(${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
    gnn_set_warnings(${name})
    gnn_unity_build(${name})
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
      $<INSTALL_INTERFACE:include/gnn>)
    target_link_libraries(${name} INTERFACE ${ARG_PUBLIC_DEPS})
  endif()
  string(REGEX REPLACE "^gnn_" "" short "${name}")
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${short})
  add_library(gnn::${short} ALIAS ${name})
  foreach(h ${headers})
    get_filename_component(dir "${h}" DIRECTORY)
    install(FILES "${PROJECT_SOURCE_DIR}/${h}" DESTINATION "include/gnn/${dir}")
  endforeach()
  set_property(GLOBAL APPEND PROPERTY GNN_LIBRARIES ${name})
endfunction()
