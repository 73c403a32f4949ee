#!/bin/sh
# build_dataset stopped by a signal mid-build: exit code 128 + signal, a one-line message on stderr, and
# nothing left in the output folder (no .npz, no .jsonl, none of their temp files).
# Usage: build_dataset_interrupt.sh BUILD_DATASET INPUT.csv.gz INT|TERM EXPECTED_EXIT_CODE
set -u
bin=$1 input=$2 sig=$3 want=$4
out=$(mktemp -d "${TMPDIR:-/tmp}/gnn_interrupt.XXXXXX")
err=$(mktemp "${TMPDIR:-/tmp}/gnn_interrupt_err.XXXXXX")
trap 'rm -rf "$out" "$err"' EXIT

"$bin" --input "$input" --target-cols HIV_active --out "$out/hiv.npz" --jsonl "$out/hiv.jsonl" \
  --threads 1 --no-progress 2> "$err" &
pid=$!
# Wait for the build to be under way (its temp files exist), then let it run a little.
tries=0
while [ -z "$(ls -A "$out")" ] && [ $tries -lt 100 ] && kill -0 "$pid" 2> /dev/null; do
  sleep 0.1
  tries=$((tries + 1))
done
sleep 0.5
if ! kill -s "$sig" "$pid" 2> /dev/null; then
  wait "$pid"
  echo "build_dataset finished before the signal (exit $?): nothing to check"
  exit 0
fi
wait "$pid"
code=$?
if [ "$code" -eq 0 ] && [ -e "$out/hiv.npz" ]; then
  echo "build_dataset finished before it saw the signal: nothing to check"
  exit 0
fi
status=0
if [ "$code" -ne "$want" ]; then
  echo "FAIL: exit code $code, expected $want"
  status=1
fi
if [ -n "$(ls -A "$out")" ]; then
  echo "FAIL: files left in the output folder:"
  ls -la "$out"
  status=1
fi
if [ "$(wc -l < "$err")" -ne 1 ] || ! grep -q "interrupted by SIG$sig" "$err"; then
  echo "FAIL: expected one line naming SIG$sig on stderr, got:"
  cat "$err"
  status=1
fi
[ $status -eq 0 ] && echo "ok: exit $code, output folder empty, stderr: $(cat "$err")"
exit $status
