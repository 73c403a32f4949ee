#!/usr/bin/env python3
"""GraphSAGE on one large graph with the three node loaders of node_property, one after the other on one machine:
neighbour sampling (PopTorch Geometric's FixedSizeNeighborLoader), Cluster-GCN and full-batch.

  python3 bench/node_loaders.py --data DIR [--epochs 5] [--threads 2] [--gnn-bin build/release/examples/node_property]

DIR is a graph in OGB's node-property raw layout (bench_make_products_like writes a products-shaped one). For each
loader: time per epoch (median), the validation accuracy of every epoch (from the run log), peak RSS, and for
neighbour sampling the sampled edges per second of an epoch and the share of the epoch the steps waited for the
sampler (its thread runs ahead of the step: the rest of its work overlaps). Prints one JSON object.
"""
import argparse
import json
import os
import sys
import tempfile

from benchutil import fail, machine, run_json, warn_if_busy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The same model for every loader: OGB's ogbn-products GraphSAGE (3 layers, hidden 256, lr 0.003).
MODEL = "--model sage --layers 3 --hidden 256 --lr 0.003"
LOADERS = {
    "neighbor": "--loader neighbor",  # fan-outs 15,10,5, batches of 1,024 seeds
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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--gnn-bin", default=os.path.join(REPO, "build", "release", "examples", "node_property"))
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--loaders", default=",".join(LOADERS), help="comma-separated subset of " + ",".join(LOADERS))
    a = p.parse_args()
    if not os.access(a.gnn_bin, os.X_OK):
        fail(f"no executable {a.gnn_bin}; build it, or set --gnn-bin")
    out = dict(benchmark="node_loaders", machine=machine(), data=a.data, epochs=a.epochs, threads=a.threads,
               model=MODEL, loaders={})
    for name in a.loaders.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "run.jsonl")
            cmd = [a.gnn_bin] + MODEL.split() + LOADERS[name].split() + [
                "--data", a.data, "--epochs", str(a.epochs), "--threads", str(a.threads), "--json", "--quiet",
                "--log", log]
            r, _ = run_json(cmd)
            accs = epoch_accuracies(log) if os.path.exists(log) else []
        row = dict(epoch_ms_median=r["epoch_ms_median"], infer_ms_median=r["infer_ms_median"],
                   val_acc_per_epoch=accs, best_val_acc=r["val_acc_mean"], test_acc=r["test_acc_mean"],
                   peak_rss_mb=r["peak_rss_mb"], command=" ".join(cmd[1:]))
        if name == "neighbor":
            l = r["loader_runs"][0]
            last = l["last_epoch"]
            row.update(fixed_num_nodes=l["fixed_num_nodes"], fixed_num_edges=l["fixed_num_edges"],
                       batches_per_epoch=l["batches_per_epoch"], trimmed_nodes=last["trimmed_nodes"],
                       trimmed_edges=last["trimmed_edges"], inference=r["inference"],
                       sampled_edges_per_s=last["real_edges"] / (r["epoch_ms_median"] / 1000.0),
                       wait_share=l["last_epoch_wait_ms"] / r["epoch_ms_median"])
        out["loaders"][name] = row
        print(f"{name}: {row['epoch_ms_median'] / 1000:.1f} s/epoch, best valid {row['best_val_acc']:.4f}, "
              f"peak {row['peak_rss_mb']:.0f} MB", file=sys.stderr)
    warn_if_busy(out["machine"])
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
