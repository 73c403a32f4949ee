#!/usr/bin/env bash
# Replicas across two MPI processes on this machine (loopback): the weights are the same bits as one process
# running every replica (Cora GCN full-graph and cluster batches, GIN on the PCQM4Mv2-style set), as one device
# with the doubled batch (Cora bit-identical; GIN within 1e-6 relative: its sums split differently), a run
# resumed with another process count ends with the same weights, and a rank that is killed or hangs ends the
# job within 60 s with a message naming it.
#   two_ranks.sh BUILD/examples
set -euo pipefail
bin=$1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # CI runs as root in a container
export OMPI_MCA_btl_vader_single_copy_mechanism=none                 # containers often forbid cross-memory attach
mpi="mpirun -np 2 --bind-to none --oversubscribe"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); v=d[sys.argv[2]]; print(v[0] if isinstance(v, list) else v)" "$1" "$2"; }

same() {  # name, then two JSON files: param_checksum must match
  local a b; a=$(field "$2" param_checksum); b=$(field "$3" param_checksum)
  [ "$a" = "$b" ] || fail "$1: weights differ ($a vs $b)"
  echo "ok: $1 ($a)"
}

cora="$bin/cora_gcn --epochs 15 --json --quiet --device ipu"
$cora --replicas 2 > "$tmp/c1.json"
$mpi $cora --replicas 2 > "$tmp/c2.json"
same "cora full graph: 2 ranks = 1 process, 2 replicas" "$tmp/c1.json" "$tmp/c2.json"
[ "$(field "$tmp/c2.json" processes)" = 2 ] || fail "cora: the JSON does not say 2 processes"
$cora --replicas 2 --dropout 0 > "$tmp/c3.json"
$mpi $cora --replicas 2 --dropout 0 > "$tmp/c4.json"
$cora --replicas 1 --dropout 0 > "$tmp/c5.json"
same "cora, no dropout: 2 ranks = 1 process" "$tmp/c3.json" "$tmp/c4.json"
same "cora, no dropout: 2 replicas = 1 device, the doubled batch" "$tmp/c4.json" "$tmp/c5.json"
$cora --loader cluster --replicas 4 --grad-accum 2 > "$tmp/c6.json"
$mpi $cora --loader cluster --replicas 4 --grad-accum 2 > "$tmp/c7.json"
same "cora clusters, 4 replicas x 2 micro-batches (short last request): 2 ranks = 1 process" "$tmp/c6.json" "$tmp/c7.json"

# LayerNorm (--norm auto's choice with replicas) on every side: BatchNorm's batch statistics are no sum of parts.
gin="$bin/molecule_property --limit 600 --hidden 64 --layers 2 --norm layer --json --quiet --strategy pad"
$gin --epochs 2 --batch-size 32 --device ipu --replicas 2 > "$tmp/g1.json"
$mpi $gin --epochs 2 --batch-size 32 --device ipu --replicas 2 > "$tmp/g2.json"
same "GIN: 2 ranks = 1 process, 2 replicas" "$tmp/g1.json" "$tmp/g2.json"
$gin --epochs 2 --batch-size 64 --device ipu --replicas 1 > "$tmp/g3.json"
python3 - "$tmp/g2.json" "$tmp/g3.json" <<'PY' || fail "GIN: 2 ranks vs the doubled batch differ by more than 1e-6"
import json, sys
a, b = (json.load(open(p))["param_l2"] for p in sys.argv[1:])
rel = abs(a - b) / abs(b)
print(f"ok: GIN: 2 ranks vs one device with the doubled batch: param_l2 relative difference {rel:.2e}")
sys.exit(0 if rel <= 1e-6 else 1)
PY

# Resume with another process count: 1 epoch on 2 ranks, then on to 2 epochs in one process (--load: --resume
# continues only the same command, and this one asks for more epochs).
$mpi $gin --batch-size 32 --device ipu --replicas 2 --epochs 1 --checkpoint-dir "$tmp/ck" > /dev/null
$gin --epochs 2 --batch-size 32 --device ipu --replicas 2 --load "$(ls "$tmp"/ck/ckpt-*.ckpt | tail -n 1)" > "$tmp/g4.json"
same "GIN: 1 epoch on 2 ranks, resumed in 1 process = 2 epochs uninterrupted" "$tmp/g1.json" "$tmp/g4.json"

# A rank killed mid-epoch, then a rank that hangs: the job ends within 60 s, naming the rank.
rank_pid() {  # the pid of rank $1 of a running molecule_property job
  for d in /proc/[0-9]*; do
    tr '\0' ' ' < "$d/cmdline" 2>/dev/null | grep -q "molecule_property --limit 3000" || continue
    if tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then echo "${d#/proc/}"; return; fi
  done
}
long="$bin/molecule_property --limit 3000 --hidden 64 --layers 2 --epochs 200 --batch-size 16 --device ipu --replicas 2"
for how in KILL STOP; do
  start=$(date +%s)
  $mpi $long --mpi-timeout 10 > "$tmp/$how.out" 2> "$tmp/$how.err" &
  job=$!
  pid=""
  for _ in $(seq 1 120); do
    pid=$(rank_pid 1)
    [ -n "$pid" ] && grep -q "epoch\|molecules" "$tmp/$how.err" 2>/dev/null && break
    sleep 0.5
  done
  [ -n "$pid" ] || { kill $job 2>/dev/null; fail "$how: rank 1 never started"; }
  sleep 3
  kill -$how "$pid"
  t0=$(date +%s)
  code=0
  timeout 90 tail --pid=$job -f /dev/null || true
  wait $job || code=$?
  waited=$(( $(date +%s) - t0 ))
  [ "$code" -ne 0 ] || fail "$how: the job exited 0 after rank 1 was stopped"
  [ "$waited" -le 60 ] || fail "$how: the job took ${waited} s to end"
  grep -q "rank 1" "$tmp/$how.err" || { cat "$tmp/$how.err" >&2; fail "$how: no message names rank 1"; }
  kill -9 "$pid" 2>/dev/null || true
  echo "ok: SIG$how to rank 1: the job ended in ${waited} s, exit $code, message: $(grep -m1 "rank 1" "$tmp/$how.err")"
done
