#!/usr/bin/env bash
# Builds and runs bench/gemm/gemm_libraries.cpp against Debian's OpenBLAS, oneDNN and BLIS (not dependencies of
# gnn: installed here when missing) and the release build's gnn_core (for gnn's own op; it links libxsmm, whose
# BLAS fallback resolves to OpenBLAS here).
#
#   bench/gemm/run.sh [M] [D] [THREADS] [ROUNDS]       # default 2007 300 2 5: GIN 5x300, batch of 128 molecules
#
# OpenBLAS is given its AVX-512 kernels (OPENBLAS_CORETYPE=SkylakeX, OPENBLAS_L2_SIZE unset) in this command only,
# as a user of this CPU gets them; the JSON names the core OpenBLAS chose. GNN_GEMM_ISA=avx2 measures the AVX2
# path on an AVX-512 CPU: OpenBLAS's Haswell kernel, oneDNN capped at AVX2 (DNNL_MAX_CPU_ISA) and libxsmm's
# Haswell code (LIBXSMM_TARGET=hsw), as on an AVX2-only CPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${GNN_BUILD:-build/release}
for p in libopenblas-dev libdnnl-dev libblis-dev libxsmm-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || sudo_apt="${sudo_apt:-} $p"
done
if [ -n "${sudo_apt:-}" ]; then
  $( [ "$(id -u)" = 0 ] || echo sudo ) apt-get install -y $sudo_apt >/dev/null
fi
[ -f "$build/gnn/libgnn_core.a" ] || { echo "run.sh: $build/gnn/libgnn_core.a not built (cmake --build --preset release)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
g++ -std=c++17 -O3 -march=native -fopenmp -I. -I/usr/include/eigen3 \
  -I/usr/include/x86_64-linux-gnu/openblas-pthread bench/gemm/gemm_libraries.cpp \
  "$build/gnn/libgnn_core.a" -lxsmm -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas -ldnnl -ldl \
  /usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4 -o "$out/gemm_libraries"
if [ "${GNN_GEMM_ISA:-native}" = avx2 ]; then
  env -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=Haswell DNNL_MAX_CPU_ISA=AVX2 LIBXSMM_TARGET=hsw OMP_PROC_BIND=false \
    "$out/gemm_libraries" "$@"
else
  env -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=SkylakeX OMP_PROC_BIND=false "$out/gemm_libraries" "$@"
fi
