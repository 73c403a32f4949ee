#!/usr/bin/env python3
"""node_property's models against PyTorch Geometric 2.3.1's own (the same classes and widths) on Cora, full-batch
training epochs, one run after the other on one machine.

  PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 bench/node_models_vs_pyg.py \
      [--gnn-bin build/release/examples/node_property]

For each case: ours (node_property --json --epochs E --threads T, epoch_ms_median) and the reference
(bench/reference/pyg_models_torch.py, PyG's model class, torch's thread pool of T threads, OpenBLAS kernels for this
CPU: benchutil.reference_env). With --repeat R the two alternate R times, each after --pause seconds of an idle
machine (a run right after the other side's ran measurably slower on a shared 2-core VM, either side), and the
speedup is the ratio of the medians; every run's figure is kept. Prints one JSON object with each case's times and
speedup (reference ms / ours). The goal: every case at least --target (10: the bar of the issue that brought these
models) times faster; the JSON's "goal" object records it, "passed" and "checked". Exit status 0 when every case
meets it, 1 when one misses it (each on stderr as `node_models_vs_pyg: goal missed: ...`), 2 when a program fails
or the command line is bad. --no-goal only reports (exit 0 unless a program fails).
"""
import argparse
import json
import os
import statistics
import sys
import time

from benchutil import add_goal_args, fail, finish, machine, reference_env, run_json, run_main, warn_if_busy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(REPO, "bench", "reference", "pyg_models_torch.py")

# name -> (node_property flags, PyG class, PyG arguments).
CASES = {
    "gat_h64_8heads": ("--model gat --hidden 64 --heads 8 --out-heads 8 --act relu", "GAT",
                       {"hidden_channels": 64, "num_layers": 2, "heads": 8}),
    "sage_h64": ("--model sage --hidden 64", "GraphSAGE", {"hidden_channels": 64, "num_layers": 2}),
    "gin_h64": ("--model gin --hidden 64", "GIN", {"hidden_channels": 64, "num_layers": 2}),
    "gatv2_h64": ("--model gatv2 --hidden 64", "GAT", {"hidden_channels": 64, "num_layers": 2, "v2": True}),
    "gcn_h64": ("--model gcn --hidden 64", "GCN", {"hidden_channels": 64, "num_layers": 2}),
    "pna_h64": ("--model pna --hidden 64", "PNA", {"hidden_channels": 64, "num_layers": 2}),
    "edgecnn_h64": ("--model edgecnn --hidden 64", "EdgeCNN", {"hidden_channels": 64, "num_layers": 2}),
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gnn-bin", default=os.path.join(REPO, "build", "release", "examples", "node_property"))
    p.add_argument("--data", default=os.path.join(REPO, "examples", "data", "cora"))
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--python", default="/usr/bin/python3")
    add_goal_args(p, 10.0, "required speedup of every case's training epoch")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of " + ",".join(CASES))
    p.add_argument("--repeat", type=int, default=1, help="alternating runs of each side (medians compared)")
    p.add_argument("--pause", type=float, default=0.0, help="seconds idle before each run")
    a = p.parse_args()
    for name in a.cases.split(","):
        if name not in CASES:
            p.error(f"--cases: unknown case '{name}' (known: {', '.join(CASES)})")
    if not os.access(a.gnn_bin, os.X_OK):
        fail(f"no executable {a.gnn_bin}; build it, or set --gnn-bin")
    env = reference_env()
    out = dict(benchmark="node_models_vs_pyg", machine=machine(), threads=a.threads, epochs=a.epochs,
               repeat=a.repeat, pause_s=a.pause,
               openblas_coretype=env.get("OPENBLAS_CORETYPE"), cases={})
    problems = []
    for name in a.cases.split(","):
        flags, cls, args = CASES[name]
        ours_runs, ref_runs = [], []
        for _ in range(max(1, a.repeat)):
            time.sleep(a.pause)
            ours, _ = run_json([a.gnn_bin] + flags.split() + ["--data", a.data, "--epochs", str(a.epochs),
                                                               "--threads", str(a.threads), "--json", "--quiet"], env)
            time.sleep(a.pause)
            ref, _ = run_json([a.python, REFERENCE, "--data", a.data, "--model", cls, "--args", json.dumps(args),
                               "--epochs", str(a.epochs), "--threads", str(a.threads)], env)
            ours_runs.append(ours["epoch_ms_median"])
            ref_runs.append(ref["epoch_ms_median"])
        ours_ms, ref_ms = statistics.median(ours_runs), statistics.median(ref_runs)
        speedup = ref_ms / ours_ms
        out["cases"][name] = dict(flags=flags, pyg_class=cls, pyg_args=args,
                                  ours_epoch_ms=ours_ms, pyg_epoch_ms=ref_ms, speedup=speedup,
                                  ours_epoch_ms_runs=ours_runs, pyg_epoch_ms_runs=ref_runs,
                                  ours_infer_ms=ours["infer_ms_median"],
                                  pyg_infer_ms=ref["infer_ms_median"], ours_test_acc=ours["test_acc_mean"],
                                  pyg_test_acc_last_epoch=ref["test_acc"], ours_peak_rss_mb=ours["peak_rss_mb"])
        print(f"{name}: ours {ours_ms:.2f} ms, PyG {ref_ms:.2f} ms per epoch: {speedup:.1f}x "
              f"(runs: ours {', '.join(f'{v:.2f}' for v in ours_runs)}; PyG {', '.join(f'{v:.1f}' for v in ref_runs)})",
              file=sys.stderr)
        if speedup < a.target:
            problems.append(f"{name}: {speedup:.2f}x, the target is {a.target:g}x")
    warn_if_busy(out["machine"])
    finish(out, problems, "node_models_vs_pyg", a.no_goal, dict(target_speedup=a.target))


if __name__ == "__main__":
    run_main(main)
