#!/usr/bin/env bash
# Installs everything gnn needs to build, test and benchmark on Debian 12 (bookworm), with apt-get.
# Run as root, or as a user with sudo. Safe to run again: packages already present are left alone.
#
#   sudo scripts/install-deps.sh              (or, as root: scripts/install-deps.sh)
#   sudo scripts/install-deps.sh --build-only  what `cmake --preset release` and the library and programs need
#                                              (GoogleTest and Google Benchmark included: the preset configures
#                                              the tests and benchmarks): no Python, clang, or browser
set -euo pipefail

build_only=0
case "${1:-}" in
  "") ;;
  --build-only) build_only=1 ;;
  -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
  *) echo "install-deps.sh: unknown argument '$1' (--build-only, --help)" >&2; exit 2 ;;
esac

build_packages=(
  build-essential cmake git pkg-config ca-certificates
  libeigen3-dev libboost-program-options-dev zlib1g-dev nlohmann-json3-dev
  librdkit-dev libmetis-dev libdnnl-dev libxsmm-dev
  # tests and benchmarks (configured by the presets)
  libgtest-dev libgmock-dev libbenchmark-dev
  # replicas across processes (device/MpiReplicas): found at configure time, so the build is the same either way
  libopenmpi-dev openmpi-bin
)
packages=(
  "${build_packages[@]}"
  # Python references in bench/ (run with /usr/bin/python3)
  python3 python3-numpy python3-rdkit python3-torch libopenblas0-pthread
  # fuzz targets (fuzz preset): clang, its libFuzzer and sanitizer runtimes, its OpenMP (libomp), and
  # llvm-symbolizer (llvm): without it sanitizer stacks have no names and fuzz/lsan.supp matches nothing
  clang libclang-rt-14-dev libomp-dev llvm
  # headless browser: tests/examples/HtmlReport_test.cpp renders molecule_property --report-html's page
  chromium
)
# OpenMP: g++ uses GCC's libgomp (in libgcc-12-dev, pulled in by build-essential), which is what CMake's
# FindOpenMP finds for GCC; clang (the fuzz preset only) needs LLVM's libomp-dev.

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps.sh: run as root, or install sudo and run as a user allowed to use it" >&2
  exit 1
fi

if [ "$build_only" = 1 ]; then packages=("${build_packages[@]}"); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps.sh: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps.sh: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {
  if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive "$@" >"$log" 2>&1; then
    echo "install-deps.sh: failed: $*" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}
run apt-get update -q
run apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps.sh: done"
