#!/usr/bin/env python3
"""Cora speed bar: our GCN (examples/cora_gcn) against a plain-PyTorch GCN, in one run on one machine.

  /usr/bin/python3 bench/cora_vs_torch.py --gnn-bin build/release/examples/cora_gcn [--data DIR] [--runs N]

Runs, one after the other (never side by side, so they do not compete for cores):
  1. ours:  cora_gcn --json --runs N --threads T --data DIR
            (its stdout is one JSON object with test_acc_mean, test_acc_std, val_acc_mean, epoch_ms_median,
            infer_ms_median, threads, peak_rss_mb)
  2. bench/reference/cora_gcn_torch.py with PyG's example hyper-parameters (dropout on the input and hidden)
  3. the same without the input dropout (dropout on a dense 2708 x 1433 input is a large part of its epoch)
and prints one JSON object with the three results, the speed ratios (speedup_vs_* = the reference's median
epoch ms / ours; infer_speedup_vs_torch the same for inference) and a description of the machine.

The goal (the project's bar for Cora): ours at least --target (5) times faster per training epoch than the
faster of the two references (median epoch times), with test accuracy at least the better reference's mean minus
--acc-tolerance (0.01). The JSON's "goal" object records both, "passed" and "checked".
Exit status 0 when the goal is met, 1 when it is missed (each miss on stderr as `cora_vs_torch: goal missed:
...`), 2 when a program fails or the command line is bad. --no-goal only reports (exit 0 unless a program
fails). --torch-only runs the two references alone (no goal is checked).
"""
import argparse
import os

from benchutil import add_goal_args, fail, finish, machine, reference_env, run_json, run_main, warn_if_busy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(REPO, "bench", "reference", "cora_gcn_torch.py")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gnn-bin", default=os.path.join(REPO, "build", "release", "examples", "cora_gcn"),
                   help="our program (default: build/release/examples/cora_gcn in the source tree)")
    p.add_argument("--data", default=os.path.join(REPO, "examples", "data", "cora"),
                   help="dataset, OGB raw layout (default: examples/data/cora in the source tree)")
    p.add_argument("--runs", type=int, default=10, help="trainings per program, different seeds (default: 10)")
    p.add_argument("--threads", type=int, default=2, help="threads of every program (default: 2)")
    p.add_argument("--python", default="/usr/bin/python3", help="interpreter for the reference (Debian's torch)")
    add_goal_args(p, 5.0, "required speedup over the faster reference")
    p.add_argument("--acc-tolerance", type=float, default=0.01,
                   help="accuracy ours may lose to the better reference (default: 0.01)")
    p.add_argument("--torch-only", action="store_true", help="run only the references (test the driver)")
    args = p.parse_args()
    cores = len(os.sched_getaffinity(0))
    if args.runs < 1:
        p.error(f"--runs {args.runs}: must be at least 1")
    if args.threads < 1 or args.threads > cores:
        p.error(f"--threads {args.threads}: must be between 1 and {cores} (the machine's cores)")
    if not args.acc_tolerance >= 0:
        p.error(f"--acc-tolerance {args.acc_tolerance:g}: must be >= 0")
    if not os.path.isdir(args.data):
        fail(f"no dataset at {args.data} (expected raw/ and split/public/ in the OGB raw layout); set --data")
    if not args.torch_only and not os.access(args.gnn_bin, os.X_OK):
        fail(f"no executable {args.gnn_bin}; build it with cmake --build --preset release, or set --gnn-bin")

    out = dict(benchmark="cora_gcn_vs_torch", machine=machine(), data=os.path.abspath(args.data),
               runs=args.runs, threads=args.threads)
    env = reference_env()
    out["openblas_coretype"] = env.get("OPENBLAS_CORETYPE")
    common = ["--data", args.data, "--runs", str(args.runs), "--threads", str(args.threads)]

    if not args.torch_only:
        out["gnn"], out["gnn_wall_s"] = run_json([args.gnn_bin, "--json"] + common, env)
    ref = [args.python, REFERENCE] + common
    out["torch_with_input_dropout"], out["torch_with_input_dropout_wall_s"] = run_json(ref, env)
    out["torch_without_input_dropout"], out["torch_without_input_dropout_wall_s"] = run_json(
        ref + ["--no-input-dropout"], env)
    warn_if_busy(out["machine"])

    tw, tn = out["torch_with_input_dropout"], out["torch_without_input_dropout"]
    faster_torch = min(tw["epoch_ms_median"], tn["epoch_ms_median"])
    best_torch_acc = max(tw["test_acc_mean"], tn["test_acc_mean"])
    problems = []
    if not args.torch_only:
        ours = out["gnn"]
        for key in ("test_acc_mean", "epoch_ms_median", "infer_ms_median"):
            if key not in ours:
                fail(f"{args.gnn_bin} --json printed no '{key}'")
        e, i = ours["epoch_ms_median"], ours["infer_ms_median"]
        out["speedup_vs_torch_with_input_dropout"] = tw["epoch_ms_median"] / e
        out["speedup_vs_torch_without_input_dropout"] = tn["epoch_ms_median"] / e
        out["speedup_vs_faster_torch"] = faster_torch / e
        out["infer_speedup_vs_torch"] = min(tw["infer_ms_median"], tn["infer_ms_median"]) / i
        out["test_acc_minus_best_torch"] = ours["test_acc_mean"] - best_torch_acc
        if out["speedup_vs_faster_torch"] < args.target:
            problems.append(f"speed: ours {e:.3f} ms per epoch is {out['speedup_vs_faster_torch']:.2f}x faster than "
                            f"the faster reference ({faster_torch:.3f} ms); the target is {args.target:g}x")
        if ours["test_acc_mean"] < best_torch_acc - args.acc_tolerance:
            problems.append(f"accuracy: ours {ours['test_acc_mean']:.4f} is below the reference's "
                            f"{best_torch_acc:.4f} - {args.acc_tolerance:g}")
    finish(out, problems, "cora_vs_torch", args.no_goal,
           dict(target_speedup=args.target, acc_tolerance=args.acc_tolerance), applies=not args.torch_only)


if __name__ == "__main__":
    run_main(main)
