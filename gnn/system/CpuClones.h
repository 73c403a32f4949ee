// GNN_CPU_CLONES: a function (or lambda) compiled for several x86-64 levels, the one for the running CPU chosen
// when the program loads (GCC's function multiversioning, target_clones). The products pick their kernels at
// run time (gnn/kernels/Gemm.h); the memory-bound row loops of the ops are plain C++ that the compiler vectorises,
// and a build without -march=native (GNN_NATIVE off, what a package gets) would run them on SSE2 only: GIN's
// layerNormRelu 11x and reluMessageSum 8x slower than the native build (bench_core_ops), the GIN step 0.77x.
// With the clones those loops run with AVX-512 (x86-64-v4) or AVX2 (x86-64-v3) where the CPU has them.
// Empty when the build's own target has AVX2 already (-march=native), under clang (no clones of lambdas) and
// under the sanitizers (speed does not matter there). Multiply-adds: portable builds compile with
// -ffp-contract=off (cmake/GNNWarnings.cmake), and a clone contracts a * b + c (ops::mulAdd, Lanes' arithmetic)
// by its own optimize("fp-contract=fast"): the AVX2 and AVX-512 clones fuse them into FMAs as the native build
// does (its ops::mulAdd is std::fma), everywhere in the function (vector body and remainder alike, one target), so
// an element's bits do not depend on its position; the baseline clone has no FMA and fuses none. Without it the
// clones ran twice the instructions in the reductions of layer norms and attention products.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__AVX2__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GNN_HAVE_CPU_CLONES 1
#if defined(GNN_CLONES_UP_TO_V3)
// -DGNN_CLONES_UP_TO=x86-64-v3: no AVX-512 clone, what an AVX2-only CPU runs (to measure it on an AVX-512 one).
#define GNN_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default"), optimize("fp-contract=fast")))
#else
#define GNN_CPU_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("fp-contract=fast")))
#endif
#else
#define GNN_CPU_CLONES
#endif
