#!/usr/bin/env python3
"""Our products against OpenBLAS's on the same shapes, in one run: bench_core_ops's BM_LinearShape (linear forward,
or forward + backward: three products) against torch.nn.functional.linear on Debian's torch (OpenBLAS), with the
kernels a user of the CPU gets (benchutil.reference_env). Default shapes: GIN 5 x 300's two linears on a batch of
128 molecules (2,007 atoms: 300 -> 600 and 600 -> 300), forward and forward + backward, float32.

  /usr/bin/python3 bench/gemm_vs_openblas.py [--build build/release] [--threads 2] [--isa avx2]

--isa avx2 measures the AVX2 path on an AVX-512 machine: ours with oneDNN's and libxsmm's kernels capped at AVX2
(DNNL_MAX_CPU_ISA=AVX2, LIBXSMM_TARGET=hsw), the reference with OpenBLAS's Haswell kernel (and its oneDNN capped
alike), as on an AVX2-only CPU. The products' kernels are generated at run time, so any build measures them.

Prints one JSON object: per shape, both GFLOP/s and their ratio (speedup = ours / OpenBLAS's). The goal: every
shape's speedup at least --target (1.0: the products at least as fast as OpenBLAS's on the same shapes). Exit
status 0 when the goal is met, 1 when it is missed (each miss on stderr as `gemm_vs_openblas: goal missed: ...`),
2 when a program fails or the command line is bad. --no-goal only reports (exit 0 unless a program fails).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchutil import (add_goal_args, fail, finish, machine, reference_env, run_json, run_main,  # noqa: E402
                       warn_if_busy)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(REPO, "bench", "reference", "linear_torch.py")
SHAPES = [(2007, 300, 600, 0), (2007, 600, 300, 0), (2007, 300, 600, 1), (2007, 600, 300, 1)]


def ours(build, shapes, threads, env):
    exe = os.path.join(build, "bench", "bench_core_ops")
    if not os.access(exe, os.X_OK):
        fail(f"{exe} not found: build the bench_core_ops target (or set --build)")
    names = "|".join(f"BM_LinearShape/M:{m}/K:{k}/N:{n}/bwd:{b}/bf16:0/" for m, k, n, b in shapes)
    cmd = [exe, f"--benchmark_filter=^({names})", "--benchmark_format=json", "--benchmark_min_time=0.5",
           "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true"]
    env = dict(env, GNN_OP_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    if proc.returncode != 0:
        fail(f"{' '.join(cmd)} failed (status {proc.returncode})")
    rates = {}
    for b in json.loads(proc.stdout).get("benchmarks", []):
        if b.get("aggregate_name") != "median":
            continue
        parts = dict(p.split(":") for p in b["run_name"].split("/")[1:] if ":" in p)
        rates[(int(parts["M"]), int(parts["K"]), int(parts["N"]), int(parts["bwd"]))] = b["flops"] / 1e9
    missing = [s for s in shapes if s not in rates]
    if missing:
        fail(f"bench_core_ops reported no BM_LinearShape for {missing}")
    return rates


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--isa", choices=["native", "avx2"], default="native",
                   help="the CPU's own kernels (default), or the AVX2 ones on a CPU with more")
    p.add_argument("--python", default="/usr/bin/python3", help="interpreter for the reference (Debian's torch)")
    add_goal_args(p, 1.0, "required speedup of ours over OpenBLAS on every shape")
    args = p.parse_args()
    base = dict(os.environ)
    ref_env = reference_env()
    if args.isa == "avx2":
        caps = dict(DNNL_MAX_CPU_ISA="AVX2", LIBXSMM_TARGET="hsw")
        base.update(caps)
        ref_env.update(caps, OPENBLAS_CORETYPE="Haswell")
    m = machine()
    mine = ours(args.build, SHAPES, args.threads, base)
    cmd = [args.python, REFERENCE, "--threads", str(args.threads)]
    for s in SHAPES:
        cmd += ["--shape", ",".join(str(v) for v in s)]
    ref, _ = run_json(cmd, ref_env)
    theirs = {(r["M"], r["K"], r["N"], r["bwd"]): r["gflops"] for r in ref["shapes"]}
    warn_if_busy(m)
    out = {"benchmark": "gemm_vs_openblas", "machine": m, "isa": args.isa, "threads": args.threads,
           "openblas_coretype": ref_env.get("OPENBLAS_CORETYPE"), "shapes": []}
    problems = []
    for s in SHAPES:
        row = {"M": s[0], "K": s[1], "N": s[2], "bwd": s[3], "gnn_gflops": mine[s], "openblas_gflops": theirs[s],
               "speedup": mine[s] / theirs[s]}
        out["shapes"].append(row)
        if row["speedup"] < args.target:
            problems.append(f"M {s[0]} K {s[1]} N {s[2]} bwd {s[3]}: {mine[s]:.1f} vs {theirs[s]:.1f} GFLOP/s, "
                            f"{row['speedup']:.2f}x; the target is {args.target:g}x")
    finish(out, problems, "gemm_vs_openblas", args.no_goal, {"at_least": args.target})


if __name__ == "__main__":
    run_main(main)
