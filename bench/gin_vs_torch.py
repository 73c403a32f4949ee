#!/usr/bin/env python3
"""Graph-level speed: molecule_property's GIN against a plain-PyTorch GIN of the same architecture, one run.

  /usr/bin/python3 bench/gin_vs_torch.py [--build build/release] [--data DIR] [--threads 2] [--epochs 1]

Runs, one after the other (never side by side, so they do not compete for cores):
  1. ours: molecule_property --model gin --layers 5 --hidden 300 --batch-size 128 --strategy plan
           --epochs E --threads T --json   (real_graphs_per_s: training graphs per second of training time)
  2. build_dataset --input DIR --out <temp>.npz   (the same graphs, featurised once, for the reference)
  3. bench/reference/gin_torch.py --npz <temp>.npz --threads T --epochs E   (the same model: 1,885,501
     parameters; PyTorch Geometric-style batches of 128 graphs, nothing padded)
and prints one JSON object: both results, their ratio, ours against --anchor (PyTorch Geometric's 550 real
graphs/s for this configuration, measured on this machine kind outside this run and given in the issue), and
a description of the machine. The reference is Debian's python3-torch on OpenBLAS, with OpenBLAS's kernel
named for this CPU (see benchutil.reference_env: left alone, Debian's OpenBLAS falls back to a generic kernel
on recent Xeons and the reference would be several times slower than PyTorch is).
Exit status 2 when a program fails; no bar is checked here.
"""
import argparse
import json
import os
import sys
import tempfile

from benchutil import fail, machine, reference_env, run_json, warn_if_busy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(REPO, "bench", "reference", "gin_torch.py")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(REPO, "build", "release"), help="gnn build directory")
    p.add_argument("--data", default=os.path.join(REPO, "examples", "data", "pcqm4mv2_style"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--python", default="/usr/bin/python3", help="interpreter for the reference (Debian's torch)")
    p.add_argument("--anchor", type=float, default=550.0, help="PyTorch Geometric's real graphs/s (issue)")
    args = p.parse_args()
    ours_bin = os.path.join(args.build, "examples", "molecule_property")
    build_bin = os.path.join(args.build, "examples", "build_dataset")
    for b in (ours_bin, build_bin):
        if not os.access(b, os.X_OK):
            fail(f"no executable {b}; build with cmake --build --preset release, or set --build")

    out = dict(benchmark="gin_vs_torch", machine=machine(), data=os.path.abspath(args.data),
               threads=args.threads, epochs=args.epochs)
    env = reference_env()
    out["openblas_coretype"] = env.get("OPENBLAS_CORETYPE")
    model = ["--model", "gin", "--layers", "5", "--hidden", "300", "--batch-size", "128"]
    out["gnn"], _ = run_json([ours_bin, "--data", args.data, "--strategy", "plan", "--epochs", str(args.epochs),
                              "--threads", str(args.threads), "--json"] + model, env)
    with tempfile.TemporaryDirectory() as tmp:
        npz = os.path.join(tmp, "data.npz")
        out["dataset"], _ = run_json([build_bin, "--input", args.data, "--out", npz, "--threads",
                                      str(args.threads), "--json"], env)
        out["torch"], _ = run_json([args.python, REFERENCE, "--npz", npz, "--threads", str(args.threads),
                                    "--epochs", str(args.epochs)], env)
    warn_if_busy(out["machine"])
    ours, ref = out["gnn"]["real_graphs_per_s"], out["torch"]["real_graphs_per_s"]
    if out["gnn"].get("train_graphs") != out["torch"].get("train_graphs"):
        print("gin_vs_torch: warning: the two programs trained on different numbers of graphs "
              f"({out['gnn'].get('train_graphs')} vs {out['torch'].get('train_graphs')})", file=sys.stderr)
    out["speedup_vs_torch"] = ours / ref
    out["anchor_pyg_graphs_per_s"] = args.anchor
    out["speedup_vs_anchor"] = ours / args.anchor
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
