#!/usr/bin/env python3
"""GraphSAGE on one large graph with the three node loaders of node_property, one after the other on one machine:
neighbour sampling (PopTorch Geometric's FixedSizeNeighborLoader), Cluster-GCN and full-batch.

  python3 bench/node_loaders.py --data DIR [--epochs 5] [--threads 2] [--repeat 3 --pause 5]
                                [--gnn-bin build/release/examples/node_property] [--add-inverse-edges auto|on|off]

DIR is a graph in OGB's node-property raw layout (bench_make_products_like writes a products-shaped one). For each
loader: time per epoch (median), the validation accuracy of every epoch (from the run log), peak RSS, and for
neighbour sampling the sampled edges per second of an epoch and the share of the epoch the steps waited for the
sampler (its thread runs ahead of the step: the rest of its work overlaps).

"neighbor_presampled" runs the same neighbour batches made before each epoch's steps (node_property --presample):
the same steps without a sampler beside them. With --repeat R the loaders alternate R times, each run after --pause
seconds of an idle machine, and medians are compared (on a shared machine a run started right after another can be
tens of percent slower). Prints one JSON object.

The goal (the issue's bar, docs/loaders.md): the sampler is not the bottleneck, the sampled epoch within --target
(1.10) times the presampled one (sampler_vs_presampled's ratio, median epoch times); checked when both
neighbor and neighbor_presampled run. The JSON's "goal" object records it, "passed" and "checked". Exit status 0
when the goal is met or does not apply, 1 when it is missed (on stderr as `node_loaders: goal missed: ...`), 2
when a program fails or the command line is bad. --no-goal only reports (exit 0 unless a program fails).
"""
import argparse
import json
import os
import sys
import statistics
import tempfile
import time

from benchutil import add_goal_args, fail, finish, machine, run_json, run_main, warn_if_busy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The same model for every loader: OGB's ogbn-products GraphSAGE (3 layers, hidden 256, lr 0.003).
MODEL = "--model sage --layers 3 --hidden 256 --lr 0.003"
LOADERS = {
    "neighbor": "--loader neighbor",  # fan-outs 15,10,5, batches of 1,024 seeds
    "neighbor_presampled": "--loader neighbor --presample",  # the same batches, made before each epoch's steps
    "cluster": "--loader cluster --clusters 16 --clusters-per-batch 4",
    "full": "--loader full",
}


def epoch_accuracies(log_path):
    acc = []
    with open(log_path) as f:
        for line in f:
            rec = json.loads(line)
            if "epoch" in rec and "valid_acc" in rec:
                acc.append(rec["valid_acc"])
    return acc


def run_loader(a, name):
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "run.jsonl")
        cmd = [a.gnn_bin] + MODEL.split() + LOADERS[name].split() + [
            "--data", a.data, "--epochs", str(a.epochs), "--threads", str(a.threads), "--json", "--quiet",
            "--add-inverse-edges", a.add_inverse_edges, "--log", log]
        r, _ = run_json(cmd)
        accs = epoch_accuracies(log) if os.path.exists(log) else []
    row = dict(epoch_ms_median=r["epoch_ms_median"], infer_ms_median=r["infer_ms_median"],
               val_acc_per_epoch=accs, best_val_acc=r["val_acc_mean"], test_acc=r["test_acc_mean"],
               peak_rss_mb=r["peak_rss_mb"], num_edges=r["num_edges"], command=" ".join(cmd[1:]))
    if name.startswith("neighbor"):
        l = r["loader_runs"][0]
        last = l["last_epoch"]
        row.update(fixed_num_nodes=l["fixed_num_nodes"], fixed_num_edges=l["fixed_num_edges"],
                   batches_per_epoch=l["batches_per_epoch"], trimmed_nodes=last["trimmed_nodes"],
                   trimmed_edges=last["trimmed_edges"], inference=r["inference"],
                   sampled_edges_per_s=last["real_edges"] / (r["epoch_ms_median"] / 1000.0),
                   wait_share=l["last_epoch_wait_ms"] / r["epoch_ms_median"])
        if "last_epoch_presample_ms" in l:
            row["presample_ms"] = l["last_epoch_presample_ms"]
    print(f"{name}: {row['epoch_ms_median'] / 1000:.2f} s/epoch, best valid {row['best_val_acc']:.4f}, "
          f"peak {row['peak_rss_mb']:.0f} MB", file=sys.stderr)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--gnn-bin", default=os.path.join(REPO, "build", "release", "examples", "node_property"))
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--loaders", default=",".join(LOADERS), help="comma-separated subset of " + ",".join(LOADERS))
    p.add_argument("--repeat", type=int, default=1, help="alternating runs of each loader (medians compared)")
    p.add_argument("--pause", type=float, default=0.0, help="seconds idle before each run")
    p.add_argument("--add-inverse-edges", default="auto", choices=["auto", "on", "off"],
                   help="node_property's flag: on for a one-way graph whose folder is not named as OGB's")
    # The bar: a sampled epoch within 1.10x of the presampled one.
    add_goal_args(p, 1.10, "largest ratio of the sampled epoch to the presampled one")
    a = p.parse_args()
    if not os.access(a.gnn_bin, os.X_OK):
        fail(f"no executable {a.gnn_bin}; build it, or set --gnn-bin")
    names = a.loaders.split(",")
    for name in names:
        if name not in LOADERS:
            fail(f"unknown loader {name}; choose from {','.join(LOADERS)}")
    out = dict(benchmark="node_loaders", machine=machine(), data=a.data, epochs=a.epochs, threads=a.threads,
               model=MODEL, repeat=a.repeat, pause_s=a.pause, loaders={})
    runs = {name: [] for name in names}
    for _ in range(max(1, a.repeat)):
        for name in names:
            time.sleep(a.pause)
            runs[name].append(run_loader(a, name))
    for name in names:
        # The run whose epoch time is the median stands for the loader; every run's epoch time is kept.
        ordered = sorted(runs[name], key=lambda row: row["epoch_ms_median"])
        row = dict(ordered[(len(ordered) - 1) // 2])
        row["epoch_ms_runs"] = [r["epoch_ms_median"] for r in runs[name]]
        row["epoch_ms_median"] = statistics.median(row["epoch_ms_runs"])
        out["loaders"][name] = row
    problems = []
    applies = "neighbor" in runs and "neighbor_presampled" in runs
    if applies:
        ratio = out["loaders"]["neighbor"]["epoch_ms_median"] / out["loaders"]["neighbor_presampled"]["epoch_ms_median"]
        out["sampler_vs_presampled"] = dict(ratio=ratio)
        print(f"sampled epoch / presampled epoch: {ratio:.3f} (goal <= {a.target:g})", file=sys.stderr)
        if ratio > a.target:
            problems.append(f"sampler_vs_presampled {ratio:.3f}x, the target is at most {a.target:g}x")
    warn_if_busy(out["machine"])
    finish(out, problems, "node_loaders", a.no_goal, dict(max_sampler_vs_presampled=a.target), applies=applies)


if __name__ == "__main__":
    run_main(main)
