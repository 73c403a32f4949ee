#!/usr/bin/env python3
"""Graphormer-slim speed: pcqm4m_graphormer against a plain-PyTorch Graphormer-slim of the same configuration,
one run.

  /usr/bin/python3 bench/graphormer_vs_torch.py [--build build/release] [--data DIR] [--threads 2] [--epochs 1]
      [--bf16]

Runs, one after the other (never side by side, so they do not compete for cores):
  1. ours: pcqm4m_graphormer --model slim --batch-size B --max-node M --epochs E --threads T --json
           (train_graphs_per_s: molecules trained per second of training; infer_graphs_per_s: molecules
           predicted per second), on its default data (the shipped PCQM4Mv2-style set; --data DIR is passed
           on only when it differs from that)
  2. build_dataset --input DIR --graphormer-max-dist 5 --out <temp>.npz   (the same molecules with Graphormer's
     encodings, for the reference)
  3. bench/reference/graphormer_torch.py --npz <temp>.npz --batch-size B --max-node M --epochs E --threads T
     (12 layers, hidden 80, 8 heads, FFN 80, multi_hop_max_dist 5, attention and activation dropout 0.1;
     Graphormer's collator: molecules above M atoms dropped and counted, batches padded to their largest
     molecule, or to M with --fixed-size)
and prints one JSON object: both results, the machine, OPENBLAS_CORETYPE, and the ratios
  speedup_train_vs_torch = our train_graphs_per_s / the reference's train_graphs_per_s
  speedup_infer_vs_torch = our infer_graphs_per_s / the reference's infer_graphs_per_s
(the reference's rates include its collation, as ours include ours; its model-only training rate is beside
them as train_model_graphs_per_s). With --bf16, also (same run, after those) ours with --precision bf16 and the
reference under torch.autocast('cpu', dtype=torch.bfloat16), and the ratios bf16_speedup_train_vs_torch_fp32,
bf16_speedup_train_vs_torch_bf16_autocast (and _infer_ alike); --ours-json covers only the float32 run. A
one-line summary goes to stderr.
The reference is Debian's python3-torch on OpenBLAS, with OpenBLAS's kernel named for this CPU (see
benchutil.reference_env). --ours-json FILE takes our figures from FILE (the JSON object pcqm4m_graphormer
--json prints) instead of running pcqm4m_graphormer; --npz FILE uses an existing .npz instead of building one.

The goal: the docs state no bar for this benchmark, only measured figures (README and docs/benchmarks.md, Zen 5
EPYC, 2026-11-28: training 6.72x, inference 4.72x). The goals are about 0.8 of those figures, rounded down:
speedup_train_vs_torch at least --target (5.3) and speedup_infer_vs_torch at least --infer-target (3.7). The bf16
ratios are reported only. With --steps the two programs see different workloads and no goal is checked. The
JSON's "goal" object records the minimums, "passed" and "checked". Exit status 0 when the goal is met, 1 when it
is missed (each miss on stderr as `graphormer_vs_torch: goal missed: ...`), 2 when a program fails or is not
built, or the command line is bad. --no-goal only reports (exit 0 unless a program fails).
"""
import argparse
import json
import os
import sys
import tempfile

from benchutil import (add_goal_args, bf16_ratios, check_at_least, fail, finish, gemm_peak_gflops, machine,
                       reference_env, run_json, run_main, step_gflops, warn_if_busy)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(REPO, "bench", "reference", "graphormer_torch.py")
DEFAULT_DATA = os.path.join(REPO, "examples", "data", "pcqm4mv2_style")


def read_ours(path):
    try:
        with open(path) as f:
            lines = [l for l in f.read().splitlines() if l.strip()]
        return json.loads(lines[-1])
    except (OSError, IndexError, json.JSONDecodeError) as e:
        fail(f"--ours-json {path}: no JSON object on its last line ({e})")


def ours_command(ours_bin, args):
    cmd = [ours_bin, "--model", "slim", "--batch-size", str(args.batch_size), "--max-node", str(args.max_node),
           "--epochs", str(args.epochs), "--json", "--profile", "--threads", str(args.threads)]
    if os.path.abspath(args.data) != os.path.abspath(DEFAULT_DATA):
        cmd += ["--data", args.data]
    return cmd


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(REPO, "build", "release"),
                   help="gnn build directory (default: build/release in the source tree)")
    p.add_argument("--data", default=DEFAULT_DATA,
                   help="PCQM4Mv2 raw layout (default: examples/data/pcqm4mv2_style in the source tree)")
    p.add_argument("--threads", type=int, default=2, help="threads of both programs (default: 2)")
    p.add_argument("--epochs", type=int, default=1, help="training epochs of both programs (default: 1)")
    p.add_argument("--batch-size", type=int, default=64, help="molecules per step (default: 64)")
    p.add_argument("--max-node", type=int, default=30, help="largest molecule trained, in atoms (default: 30)")
    p.add_argument("--fixed-size", action="store_true",
                   help="the reference pads every batch to --max-node (default: to the batch's largest molecule)")
    p.add_argument("--steps", type=int, default=0,
                   help="the reference's training steps per epoch and inference batches (0: all; a quick check "
                        "of the driver, the two programs then see different numbers of molecules)")
    p.add_argument("--python", default="/usr/bin/python3", help="interpreter for the reference (Debian's torch)")
    p.add_argument("--ours-json", metavar="FILE", help="our figures from FILE instead of running pcqm4m_graphormer")
    p.add_argument("--bf16", action="store_true",
                   help="also ours with --precision bf16 and the reference under torch.autocast bf16 (same run)")
    p.add_argument("--npz", metavar="FILE", help="an existing .npz with Graphormer encodings (multi_hop_max_dist "
                   ">= 5) of the same molecules, instead of building one")
    add_goal_args(p, 5.3, "required speedup_train_vs_torch (float32)")
    add_goal_args(p, 3.7, "required speedup_infer_vs_torch (float32)", flag="--infer-target")
    args = p.parse_args()
    cores = len(os.sched_getaffinity(0))
    if args.threads < 1 or args.threads > cores:
        p.error(f"--threads {args.threads}: must be between 1 and {cores} (the machine's cores)")
    for name in ("epochs", "batch_size", "max_node"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} {getattr(args, name)}: must be at least 1")
    if args.steps < 0:
        p.error(f"--steps {args.steps}: must be at least 0")
    ours_bin = os.path.join(args.build, "examples", "pcqm4m_graphormer")
    build_bin = os.path.join(args.build, "examples", "build_dataset")
    if args.ours_json is None and not os.access(ours_bin, os.X_OK):
        fail(f"no executable {ours_bin}: build it with cmake --build --preset release --target pcqm4m_graphormer, "
             "set --build, or give its JSON with --ours-json FILE")
    if args.npz is None:
        if not os.path.exists(args.data):
            fail(f"error: no molecule set at {args.data}; set --data")
        if not os.access(build_bin, os.X_OK):
            fail(f"no executable {build_bin}: build it with cmake --build --preset release --target build_dataset, "
                 "set --build, or give a dataset with --npz FILE")
    elif not os.path.isfile(args.npz):
        fail(f"--npz {args.npz}: no such file")

    out = dict(benchmark="graphormer_vs_torch", machine=machine(), data=os.path.abspath(args.data),
               threads=args.threads, epochs=args.epochs, batch_size=args.batch_size, max_node=args.max_node)
    env = reference_env()
    out["openblas_coretype"] = env.get("OPENBLAS_CORETYPE")
    if args.ours_json is not None:
        out["gnn"], out["gnn_source"] = read_ours(args.ours_json), os.path.abspath(args.ours_json)
    else:
        out["gnn"], out["gnn_wall_s"] = run_json(ours_command(ours_bin, args), env)
        out["gnn_source"] = " ".join(ours_command(ours_bin, args))
    for key in ("train_graphs_per_s", "infer_graphs_per_s"):
        if not isinstance(out["gnn"].get(key), (int, float)) or not out["gnn"][key] > 0:
            fail(f"our figures ({out['gnn_source']}) have no positive '{key}'")
    with tempfile.TemporaryDirectory() as tmp:
        npz = args.npz
        if npz is None:
            npz = os.path.join(tmp, "data.npz")
            out["dataset"], _ = run_json([build_bin, "--input", args.data, "--graphormer-max-dist", "5",
                                          "--format-version", "1", "--out", npz, "--threads", str(args.threads),
                                          "--json"], env)
        else:
            out["dataset"] = dict(npz=os.path.abspath(npz))
        ref = [args.python, REFERENCE, "--npz", npz, "--threads", str(args.threads), "--epochs", str(args.epochs),
               "--batch-size", str(args.batch_size), "--max-node", str(args.max_node), "--steps", str(args.steps)]
        if args.fixed_size:
            ref.append("--fixed-size")
        out["torch"], out["torch_wall_s"] = run_json(ref, env)
        if args.bf16:
            if not os.access(ours_bin, os.X_OK):
                fail(f"--bf16 runs {ours_bin}, which is not built")
            out["gnn_bf16"], _ = run_json(ours_command(ours_bin, args) + ["--precision", "bf16"], env)
            out["torch_bf16_autocast"], _ = run_json(ref + ["--autocast", "bf16"], env)
    warn_if_busy(out["machine"])
    ours, torch_ = out["gnn"], out["torch"]
    if args.steps:
        print(f"graphormer_vs_torch: note: --steps {args.steps} limits the reference to "
              f"{torch_['train_graphs']} training molecules; the ratios compare different workloads", file=sys.stderr)
    elif "train_graphs" in ours and ours["train_graphs"] != torch_["train_graphs"]:
        print("graphormer_vs_torch: warning: the two programs trained on different numbers of molecules "
              f"({ours['train_graphs']} vs {torch_['train_graphs']})", file=sys.stderr)
    if "parameters" in ours and ours["parameters"] != torch_["parameters"]:
        print(f"graphormer_vs_torch: note: parameter counts differ ({ours['parameters']} ours, "
              f"{torch_['parameters']} the reference's)", file=sys.stderr)
    out["speedup_train_vs_torch"] = ours["train_graphs_per_s"] / torch_["train_graphs_per_s"]
    out["speedup_infer_vs_torch"] = ours["infer_graphs_per_s"] / torch_["infer_graphs_per_s"]
    summary16 = bf16_ratios(out, "graphs") if args.bf16 else None
    # How close our step comes to the machine: its ops' FLOPs per second (from --profile) beside a plain GEMM
    # measured now.
    out["gnn_step_gflops"] = step_gflops(ours)
    out["gemm_peak_gflops"] = gemm_peak_gflops(args.build, args.threads, env)
    if out["gnn_step_gflops"] and out["gemm_peak_gflops"]:
        out["step_share_of_gemm_peak"] = out["gnn_step_gflops"] / out["gemm_peak_gflops"]
    print(f"graphormer_vs_torch: training {ours['train_graphs_per_s']:.1f} vs {torch_['train_graphs_per_s']:.1f} "
          f"graphs/s ({out['speedup_train_vs_torch']:.2f}x), inference {ours['infer_graphs_per_s']:.1f} vs "
          f"{torch_['infer_graphs_per_s']:.1f} graphs/s ({out['speedup_infer_vs_torch']:.2f}x); "
          f"{torch_['skipped']} molecules above {args.max_node} atoms skipped by the reference", file=sys.stderr)
    if summary16:
        print(f"graphormer_vs_torch: {summary16}", file=sys.stderr)
    # With --steps the reference trains on fewer molecules: the ratios compare different workloads.
    minimum = {"speedup_train_vs_torch": args.target, "speedup_infer_vs_torch": args.infer_target}
    problems = check_at_least(out, minimum) if not args.steps else []
    finish(out, problems, "graphormer_vs_torch", args.no_goal, {"at_least": minimum}, applies=not args.steps)


if __name__ == "__main__":
    run_main(main)
