#!/usr/bin/env bash
# Runs every fuzz target on its seed corpus and dictionary; fails on any crash, leak, sanitizer report, timeout
# (-timeout=10 per input) or out-of-memory (-rss_limit_mb=2048).
#
#   fuzz/run.sh SECONDS               each target for SECONDS (default 60): a random exploration, for campaigns
#   fuzz/run.sh --runs N [--seed S]   each target for N inputs from random seed S (default 1): the same inputs
#                                     on every run of the same build, so it fails only on what a commit changed
#                                     (the CI step)
#
#   cmake --preset fuzz && cmake --build --preset fuzz -j2 && fuzz/run.sh 30
#
# New inputs the fuzzer finds go to a scratch corpus (the committed seeds under fuzz/corpus are only read);
# a failing input is kept as fuzz/artifacts/<target>-crash-*, with the log, and the script says which.
# FUZZ_BUILD (default build/fuzz) is the fuzz preset's build folder; FUZZ_TARGETS limits the targets run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
runs=""
seed=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *[!0-9]*|"") echo "fuzz/run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    *) seconds=$1; shift ;;
  esac
done
# A fixed campaign is deterministic only without address-space randomisation (libFuzzer's comparison tracing
# sees pointer values) and without re-reading the corpus folder on a timer (-reload=0).
norand=()
if [ -n "$runs" ]; then
  budget=(-runs="$runs" -seed="$seed" -reload=0)
  what="$runs inputs from seed $seed"
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    norand=(setarch "$(uname -m)" -R)
  else
    echo "fuzz/run.sh: setarch -R is not permitted here: addresses are randomised, so the inputs may differ between runs" >&2
  fi
else
  budget=(-max_total_time="$seconds")
  what="${seconds}s runs"
fi
build=${FUZZ_BUILD:-build/fuzz}
targets=${FUZZ_TARGETS:-"smiles csv pcqm4mv2 sdf xyz ogb_node ogb_hetero npz checkpoint state_dict"}

# The folder targets (ogb_node, ogb_hetero) write each input as a dataset folder of up to 16 files under $TMPDIR
# (fuzz/FuzzInput.h): in memory where the machine has it, about 10x the inputs a second of a disk.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  export TMPDIR=/dev/shm
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p fuzz/artifacts
# Suppressions match function names, so stacks must be symbolized: without llvm-symbolizer (package llvm) an
# RDKit leak would be reported as ours.
symbolizer=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
if [ -z "$symbolizer" ]; then
  echo "fuzz/run.sh: llvm-symbolizer not found (apt-get install llvm): leak reports cannot be matched to fuzz/lsan.supp" >&2
  exit 2
fi
export ASAN_SYMBOLIZER_PATH="$symbolizer"
# RDKit's own leaks on malformed mol blocks (not ours) are named in fuzz/lsan.supp; everything else leaks loudly.
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

failed=()
printf '%-11s %10s %9s %7s %7s\n' target runs exec/s cov ft
for t in $targets; do
  bin="$build/fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz/run.sh: $bin not built (cmake --build --preset fuzz)" >&2; exit 2; }
  mkdir -p "$scratch/$t"
  log="fuzz/artifacts/$t.log"
  # sdf: full stacks for RDKit's frames (built without frame pointers), which fuzz/lsan.supp names.
  asan="$ASAN_OPTIONS"
  [ "$t" = sdf ] && asan="$asan:fast_unwind_on_malloc=0"
  if ASAN_OPTIONS="$asan" ${norand[@]+"${norand[@]}"} "$bin" "$scratch/$t" "fuzz/corpus/$t" -dict="fuzz/dict/$t.dict" "${budget[@]}" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t-" >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed+=("$t")
  fi
  # The last status line holds the coverage (cov: edges, ft: features) and the speed.
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
  executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  printf '%-11s %10s %9s %7s %7s %s\n' "$t" "${executed:--}" "${eps:--}" "${cov:--}" "${ft:--}" "$status"
  [ "$status" = ok ] || grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 8 >&2
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz/run.sh: failed: ${failed[*]} (logs and inputs in fuzz/artifacts/)" >&2
  exit 1
fi
echo "fuzz/run.sh: all clean ($what per target)"
