#!/usr/bin/env bash
# kill -9 campaign: training runs with --checkpoint-dir/--resume and dataset builds with build_dataset --resume
# are killed with SIGKILL at random moments, resumed, and must end with the same bits as a run never stopped.
#
#   scripts/kill9-campaign.sh [BUILD_DIR]          # default build/release; KILLS=20 SEED=1 by default
#
# Training: molecule_property (GIN, dropout, 16 epochs of 75 steps, --checkpoint-every 10) is run once uninterrupted with --save; then
# trials of KILLS_PER_TRIAL kills each: the same command with --checkpoint-dir DIR --resume is started, killed
# with SIGKILL after a random delay drawn uniformly from [0, the uninterrupted run's time], started again, ...,
# and finally run to the end. The --save checkpoint of every trial must hold the same tensors, byte for byte
# (model weights, the best epoch's weights, the optimizer's moments and step count), the same trainer state
# (metadata "trainer": epochs, loss checksum, best epoch and metrics) and the same JSON result (but for times
# and speeds) as the uninterrupted run's. A kill that comes after the process has already finished is not counted; trials go on
# until KILLS kills have landed.
#
# Dataset build: build_dataset on 20,000 HIV molecules (--chunk 400, Graphormer encodings) once uninterrupted, then the same with
# --resume, killed and resumed the same way; every finished .npz must equal the uninterrupted one byte for byte
# and nothing but the .npz and temp files of the builds killed in that trial (removed by a later build once a
# minute old) may be left in its folder.
#
# Concurrent runs: each start of a trial launches the same --resume command twice at once on one
# --checkpoint-dir: one of them must be refused at once (exit 2, its message naming the other's pid) while the
# other runs; that one is killed with SIGKILL as above, and the final pair's survivor runs to the end. Its --save
# checkpoint and JSON must equal the uninterrupted run's, compared as in the training part.
#
# Prints one line per kill (the delay, and how far the killed process had got) and a summary; exit 1 on any
# mismatch (the files of a failing trial are kept). Environment: KILLS (per campaign, default 20), KILLS_PER_TRIAL (default 2), SEED (default 1; the
# delays come from bash's $RANDOM seeded with it), PARTS ("train build concurrent", default all three), KEEP=1
# keeps the work folder (kept anyway when something failed).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
kills=${KILLS:-20}
per_trial=${KILLS_PER_TRIAL:-2}
parts=${PARTS:-"train build concurrent"}
RANDOM=${SEED:-1}
bin="$build/examples"
for p in molecule_property build_dataset; do
  [ -x "$bin/$p" ] || { echo "kill9-campaign: $bin/$p not built (cmake --build --preset release)" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/gnn_kill9.XXXXXX")
failures=0
# The work folder goes at the end unless KEEP=1 or something failed.
trap 'if [ "${KEEP:-0}" = 1 ] || [ $failures -gt 0 ]; then echo "files kept in $work"; else rm -rf "$work"; fi' EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

now_ms() { date +%s%3N; }
# A random delay in [0, max_ms] milliseconds, printed as seconds for sleep.
delay() { local ms=$(( (RANDOM * 32768 + RANDOM) % ($1 + 1) )); printf '%d.%03d' $((ms / 1000)) $((ms % 1000)); }

# The tensor section of a checkpoint (after magic, version, count, metaBytes and the metadata; without the
# trailing checksum), see gnn/io/Checkpoint.h.
tensor_bytes() {
  local f=$1 meta size
  meta=$(od -An -t u8 -j 16 -N 8 "$f" | tr -d ' ')
  size=$(stat -c %s "$f")
  tail -c +$((24 + meta + 1)) "$f" | head -c $((size - 24 - meta - 8))
}
# The metadata's "trainer" object, one key per line (no JSON tool needed: the metadata is one line of JSON).
trainer_meta() {
  local f=$1 meta
  meta=$(od -An -t u8 -j 16 -N 8 "$f" | tr -d ' ')
  tail -c +25 "$f" | head -c "$meta" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["trainer"], sort_keys=True))'
}
# The JSON result without the fields that measure time or memory, or count this process's host requests.
result_json() {
  python3 -c 'import json,sys
j = json.loads(sys.stdin.read().strip().splitlines()[-1])
for k in list(j):
    if k.endswith(("seconds", "_per_s", "_ms", "_mb")) or "_ms_" in k or k == "host_requests": del j[k]
print(json.dumps(j, sort_keys=True))'
}

# Runs "$@" in the background and kills it with SIGKILL after a random delay up to $max_ms; sets landed=1 when
# the kill hit a live process (exit 137), 0 when the process had ended on its own (its exit code must be 0).
landed=0
killed_pids=""
kill_at_random() {
  local d code
  d=$(delay "$max_ms")
  "$@" > "$work/killed.out" 2> "$work/killed.err" &
  local pid=$!
  killed_pids="$killed_pids $pid"
  sleep "$d"
  kill -KILL "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  code=$?
  if [ $code -eq 137 ]; then
    landed=1
    echo "  kill after ${d}s: $(progress)"
  else
    landed=0
    [ $code -eq 0 ] || fail "a run to be killed after ${d}s exited $code: $(tail -n 3 "$work/killed.err")"
    echo "  (run ended before the kill at ${d}s)"
  fi
}

# The training runs of the "train" and "concurrent" parts, and their uninterrupted reference (run once).
args=(--limit 6000 --layers 3 --hidden 128 --dropout 0.2 --epochs 16 --batch-size 64 --threads 2 --seed 7 --json --quiet)
train_reference() {
  if [ ! -e "$work/whole.ckpt" ]; then
    # A first run caches the featurised molecules (under $TMPDIR), so the timed run below is mostly training.
    "$bin/molecule_property" "${args[@]}" --epochs 0 > /dev/null 2>&1
    t0=$(now_ms)
    "$bin/molecule_property" "${args[@]}" --save "$work/whole.ckpt" > "$work/whole.json" 2> "$work/whole.err" ||
      { cat "$work/whole.err"; exit 1; }
    train_ms=$(( $(now_ms) - t0 ))
    ref_json=$(result_json < "$work/whole.json")
    ref_trainer=$(trainer_meta "$work/whole.ckpt")
    tensor_bytes "$work/whole.ckpt" > "$work/whole.tensors"
  fi
  max_ms=$train_ms
  echo "uninterrupted: $((max_ms / 1000)).$(printf '%03d' $((max_ms % 1000)))s; kills drawn from [0, that]"
}
# The final --save checkpoint $1.ckpt and JSON $1.json of trial $2 against the uninterrupted run's.
same_as_reference() {
  tensor_bytes "$1.ckpt" > "$1.tensors"
  cmp -s "$work/whole.tensors" "$1.tensors" ||
    fail "trial $2: the final checkpoint's tensors differ from the uninterrupted run's"
  [ "$(trainer_meta "$1.ckpt")" = "$ref_trainer" ] ||
    fail "trial $2: trainer state differs: $(trainer_meta "$1.ckpt") vs $ref_trainer"
  [ "$(result_json < "$1.json")" = "$ref_json" ] ||
    fail "trial $2: JSON result differs: $(result_json < "$1.json")"
}

if [[ " $parts " == *" train "* ]]; then
  echo "== training: molecule_property, $kills kills"
  train_reference
  progress() { echo "checkpoints $(ls "$dir" 2> /dev/null | grep -c '\.ckpt$'), newest $(ls "$dir" 2> /dev/null | grep '\.ckpt$' | sort -V | tail -n 1)"; }
  landed_total=0 trials=0 resumes=0
  while [ $landed_total -lt "$kills" ]; do
    trials=$((trials + 1))
    dir="$work/t$trials" && mkdir "$dir"
    run=("$bin/molecule_property" "${args[@]}" --checkpoint-dir "$dir" --checkpoint-every 10 --resume --save "$work/t$trials.ckpt")
    echo "trial $trials"
    n=0
    while [ $n -lt "$per_trial" ] && [ $landed_total -lt "$kills" ]; do
      kill_at_random "${run[@]}"
      [ $landed -eq 1 ] || break
      n=$((n + 1)) landed_total=$((landed_total + 1)) resumes=$((resumes + 1))
    done
    if ! "${run[@]}" > "$work/t$trials.json" 2> "$work/t$trials.err"; then
      fail "trial $trials: the final resumed run failed: $(tail -n 3 "$work/t$trials.err")"
      continue
    fi
    before=$failures
    same_as_reference "$work/t$trials" "$trials"
    [ $failures -gt "$before" ] || rm -rf "$dir" "$work/t$trials".*
  done
  echo "training: $landed_total kills landed in $trials trials; $resumes resumes from a killed run"
  train_summary="training: $landed_total kills, $trials trials"
fi

if [[ " $parts " == *" build "* ]]; then
  echo "== dataset build: build_dataset --resume, $kills kills"
  input=examples/data/moleculenet/HIV.csv.gz
  args=(--input "$input" --target-cols HIV_active --limit 20000 --chunk 400 --graphormer-max-dist 3 --threads 1 --no-progress)
  mkdir "$work/clean"
  t0=$(now_ms)
  "$bin/build_dataset" "${args[@]}" --out "$work/clean/hiv.npz" 2> "$work/clean.err" || { cat "$work/clean.err"; exit 1; }
  max_ms=$(( $(now_ms) - t0 ))
  echo "uninterrupted: $((max_ms / 1000)).$(printf '%03d' $((max_ms % 1000)))s; kills drawn from [0, that]"
  progress() { echo "$(sed -n 's/.*"records":\([0-9]*\).*/\1/p' "$out.resume/state.json" 2> /dev/null || true) records saved"; }
  landed_total=0 trials=0 stale=0
  while [ $landed_total -lt "$kills" ]; do
    trials=$((trials + 1))
    mkdir "$work/b$trials"
    out="$work/b$trials/hiv.npz"
    run=("$bin/build_dataset" "${args[@]}" --out "$out" --resume)
    echo "trial $trials"
    n=0
    while [ $n -lt "$per_trial" ] && [ $landed_total -lt "$kills" ] && [ ! -e "$out" ]; do
      kill_at_random "${run[@]}"
      [ $landed -eq 1 ] || break
      n=$((n + 1)) landed_total=$((landed_total + 1))
    done
    if [ ! -e "$out" ] && ! "${run[@]}" 2> "$work/b$trials.err"; then
      fail "build trial $trials: the final resumed build failed: $(tail -n 3 "$work/b$trials.err")"
      continue
    fi
    before=$failures
    cmp -s "$work/clean/hiv.npz" "$out" || fail "build trial $trials: the .npz differs from the uninterrupted build's"
    # Besides the dataset, only temp files of builds killed here (the next build removes them once they are a
    # minute old: tests/examples/build_dataset_test.cpp).
    for f in $(ls -A "$work/b$trials"); do
      [ "$f" = hiv.npz ] && continue
      pid=$(sed -n 's/^hiv\.npz\.tmp-\([0-9]*\).*/\1/p' <<< "$f")
      if [ -n "$pid" ] && [[ " $killed_pids " == *" $pid "* ]]; then
        stale=$((stale + 1))
      else
        fail "build trial $trials: file left besides the dataset: $f"
      fi
    done
    [ $failures -gt "$before" ] || rm -rf "$work/b$trials"
  done
  echo "dataset build: $landed_total kills landed in $trials trials; $stale temp files of killed builds left"
  build_summary="dataset build: $landed_total kills, $trials trials"
fi

if [[ " $parts " == *" concurrent "* ]]; then
  echo "== concurrent runs: molecule_property --resume started twice at once on one --checkpoint-dir, $kills kills"
  train_reference
  progress() { echo "checkpoints $(ls "$dir" 2> /dev/null | grep -c '\.ckpt$'), newest $(ls "$dir" 2> /dev/null | grep '\.ckpt$' | sort -V | tail -n 1)"; }
  # Starts "$@" twice at once; the one that ends first must have been refused (exit 2, naming the other's pid)
  # while the other goes on: its pid is left in $survivor, its output in $work/$survivor_out.{out,err}.
  survivor="" survivor_out=""
  start_pair() {
    "$@" > "$work/a.out" 2> "$work/a.err" &
    local a=$!
    "$@" > "$work/b.out" 2> "$work/b.err" &
    local b=$!
    killed_pids="$killed_pids $a $b"
    while kill -0 "$a" 2> /dev/null && kill -0 "$b" 2> /dev/null; do sleep 0.02; done
    local loser=a loser_pid=$a code
    survivor=$b survivor_out=b
    if kill -0 "$a" 2> /dev/null; then loser=b loser_pid=$b survivor=$a survivor_out=a; fi
    wait "$loser_pid"
    code=$?
    if [ $code -eq 2 ] && grep -q "is in use by pid $survivor " "$work/$loser.err"; then
      refused=$((refused + 1))
    else
      fail "trial $trials: of two runs started at once, the first to end exited $code without naming pid $survivor: $(tail -n 3 "$work/$loser.err")"
    fi
  }
  landed_total=0 trials=0 refused=0
  while [ $landed_total -lt "$kills" ]; do
    trials=$((trials + 1))
    dir="$work/c$trials" && mkdir "$dir"
    run=("$bin/molecule_property" "${args[@]}" --checkpoint-dir "$dir" --checkpoint-every 10 --resume --save "$work/c$trials.ckpt")
    echo "trial $trials"
    before=$failures
    n=0
    while [ $n -lt "$per_trial" ] && [ $landed_total -lt "$kills" ]; do
      start_pair "${run[@]}"
      d=$(delay "$max_ms")
      sleep "$d"
      kill -KILL "$survivor" 2> /dev/null
      wait "$survivor" 2> /dev/null
      code=$?
      if [ $code -ne 137 ]; then
        [ $code -eq 0 ] || fail "trial $trials: a run to be killed after ${d}s exited $code: $(tail -n 3 "$work/$survivor_out.err")"
        echo "  (run ended before the kill at ${d}s)"
        break
      fi
      echo "  one of two refused, the other killed after ${d}s: $(progress)"
      n=$((n + 1)) landed_total=$((landed_total + 1))
    done
    start_pair "${run[@]}"
    if ! wait "$survivor"; then
      fail "trial $trials: the final resumed run failed: $(tail -n 3 "$work/$survivor_out.err")"
      continue
    fi
    cp "$work/$survivor_out.out" "$work/c$trials.json"
    same_as_reference "$work/c$trials" "$trials"
    [ $failures -gt "$before" ] || rm -rf "$dir" "$work/c$trials".*
  done
  echo "concurrent runs: $refused second runs refused, $landed_total kills landed in $trials trials"
  concurrent_summary="concurrent runs: $refused refused, $landed_total kills, $trials trials"
fi

echo "== ${train_summary:-} ${build_summary:+; $build_summary}${concurrent_summary:+; $concurrent_summary}; $failures failures"
[ $failures -eq 0 ]
