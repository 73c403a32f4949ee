#!/bin/sh
# build_dataset --resume killed with SIGKILL (no chance to clean up) at several points, and stopped once with
# SIGINT, then run to the end: the .npz must be byte-identical to a build never stopped, each rerun must say
# it resumed, and nothing but the dataset may be left (the .resume folder goes when the dataset is written).
# Usage: build_dataset_resume.sh BUILD_DATASET INPUT.csv.gz
set -u
bin=$1 input=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/gnn_resume.XXXXXX")
trap 'rm -rf "$dir"' EXIT
args="--input $input --target-cols HIV_active --limit 6000 --chunk 250 --graphormer-max-dist 3 --threads 1 --no-progress"
mkdir "$dir/clean" "$dir/resumed"
# shellcheck disable=SC2086
"$bin" $args --out "$dir/clean/hiv.npz" 2> "$dir/clean.err" || { cat "$dir/clean.err"; exit 1; }

state="$dir/resumed/hiv.npz.resume/state.json"
records() { sed -n 's/.*"records":\([0-9]*\).*/\1/p' "$state" 2> /dev/null; }
status=0
last=0
for sig in KILL KILL INT KILL; do
  # shellcheck disable=SC2086
  "$bin" $args --out "$dir/resumed/hiv.npz" --resume 2> "$dir/run.err" &
  pid=$!
  # Let it finish at least one more chunk than the last run saved, then stop it.
  tries=0
  while [ "$(records)" = "" ] || [ "$(records)" -le "$last" ]; do
    kill -0 "$pid" 2> /dev/null || break
    [ $tries -lt 600 ] || break
    sleep 0.05
    tries=$((tries + 1))
  done
  if ! kill -s "$sig" "$pid" 2> /dev/null; then
    echo "note: the build ended before SIG$sig"
  fi
  wait "$pid"
  code=$?
  now=$(records)
  echo "SIG$sig: exit $code after $now records saved (previous run saved $last)"
  if [ -e "$dir/resumed/hiv.npz" ]; then
    echo "note: the build wrote its dataset before SIG$sig; nothing more to resume"
    break
  fi
  if [ "$sig" = INT ] && { [ "$code" -ne 130 ] || ! grep -q "finished chunks kept" "$dir/run.err"; }; then
    echo "FAIL: SIGINT gave exit $code and: $(cat "$dir/run.err")"
    status=1
  fi
  if [ -n "$now" ] && [ "$now" -le "$last" ]; then
    echo "FAIL: the resumed build did not go further than the previous one ($now <= $last)"
    status=1
  fi
  last=${now:-0}
done
if [ ! -e "$dir/resumed/hiv.npz" ]; then
  # shellcheck disable=SC2086
  "$bin" $args --out "$dir/resumed/hiv.npz" --resume 2> "$dir/run.err"
  code=$?
  if [ $code -ne 0 ]; then
    echo "FAIL: the last resumed run exited $code: $(cat "$dir/run.err")"
    exit 1
  fi
  if [ "$last" -gt 0 ] && ! grep -q "resumed after $last molecules" "$dir/run.err"; then
    echo "FAIL: the last run did not resume after $last molecules: $(cat "$dir/run.err")"
    status=1
  fi
fi
if ! cmp "$dir/clean/hiv.npz" "$dir/resumed/hiv.npz"; then
  echo "FAIL: the resumed dataset differs from the clean build"
  status=1
fi
left=$(ls -A "$dir/resumed")
if [ "$left" != "hiv.npz" ]; then
  echo "FAIL: files left besides the dataset: $left"
  status=1
fi
[ $status -eq 0 ] && echo "ok: resumed dataset identical to the clean build"
exit $status
