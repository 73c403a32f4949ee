# Warning flags applied to every target of ours (not to dependencies' headers, included as SYSTEM).
function(gnn_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unknown-pragmas)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # Lambdas taking gnn/ops/Lanes.h's sixteen floats by value: GCC notes that their ABI differs without AVX-512.
    # They are inlined into the loops that call them; no such call crosses a library boundary.
    target_compile_options(${target} PRIVATE -Wno-psabi)
  endif()
  if(GNN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(GNN_NATIVE)
    # GCC 12 reports false -Wmaybe-uninitialized warnings inside its own AVX-512 intrinsics under Eigen, and
    # false -Wuninitialized ones where they are inlined into our kernels (their `__Y = __Y` in
    # _mm512_undefined_ps; GCC bug 105593, fixed in GCC 13). Builds without GNN_NATIVE keep both warnings.
    target_compile_options(${target} PRIVATE -march=${GNN_MARCH} -Wno-maybe-uninitialized)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE -Wno-uninitialized)
    endif()
  else()
    # No multiply-add is fused outside the row loops' clones (gnn/system/CpuClones.h), which fuse theirs by their
    # own optimize attribute, consistently within each clone: a row's bits never depend on where it sits.
    target_compile_options(${target} PRIVATE -ffp-contract=off)
    if(GNN_CLONES_UP_TO STREQUAL "x86-64-v3")
      target_compile_definitions(${target} PRIVATE GNN_CLONES_UP_TO_V3)
    endif()
  endif()
endfunction()
