# Warning flags applied to every target of ours (not to dependencies' headers, included as SYSTEM).
function(gnn_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unknown-pragmas)
  if(GNN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(GNN_NATIVE)
    # GCC 12 reports false -Wmaybe-uninitialized warnings inside its own AVX-512 intrinsics under Eigen.
    target_compile_options(${target} PRIVATE -march=native -Wno-maybe-uninitialized)
  else()
    # The row loops' AVX2 / AVX-512 clones (gnn/system/CpuClones.h) must not fuse a * b + c in one place and not in
    # another: a row's bits would then depend on where it sits.
    target_compile_options(${target} PRIVATE -ffp-contract=off)
  endif()
endfunction()
