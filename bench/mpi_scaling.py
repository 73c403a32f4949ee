#!/usr/bin/env python3
"""Replicas across MPI processes: the all-reduce's time per weight update and the scaling from 1 to 2 ranks.

  /usr/bin/python3 bench/mpi_scaling.py [--build build/release] [--epochs 1] [--replicas 2] [--limit 6000]

Runs molecule_property (GIN 5 x 300 on the shipped PCQM4Mv2-style set, --device ipu, batches of 64 graphs,
--replicas R) one after the other, never side by side:
  1. one process running every replica, on all the machine's cores (the reference of this run)
  2. mpirun -np 2: the same replicas spread over two ranks, the cores shared between them (one each on 2 cores)
and prints one JSON object: each run's training graphs/s, the all-reduce's wall time per update (in the second
run: the exchange of every replica's gradients between the ranks, waiting for the slower rank included), its
share of the training time, the speed-up (2 ranks / 1 process) and whether both ended with the same weights
(param_checksum: they must). On one machine the two ranks share its cores with each other, so the speed-up is
bounded by 1 plus what one process leaves idle (its serial parts: optimizer, host side); across hosts each rank
brings its own cores and the communication share is what remains of the bound.
Exit status 2 when a program fails; no bar is checked here.
"""
import argparse
import json
import os
import shutil
import sys

from benchutil import example_program, fail, machine, run_json, warn_if_busy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--limit", type=int, default=6000, help="molecules of the set used (-1: all)")
    a = ap.parse_args()
    prog = example_program(a.build, "molecule_property")
    if not shutil.which("mpirun"):
        fail("mpirun not found: apt-get install openmpi-bin")
    m = machine()
    common = [prog, "--model", "gin", "--layers", "5", "--hidden", "300", "--batch-size", "64", "--epochs",
              str(a.epochs), "--limit", str(a.limit), "--device", "ipu", "--replicas", str(a.replicas), "--json",
              "--quiet"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    one, _ = run_json(common, env=env)
    two, _ = run_json(["mpirun", "-np", "2", "--bind-to", "none"] + common, env=env)
    warn_if_busy(m)

    def summary(r):
        updates = max(1, r["host_requests"])  # one update per request here (no device iterations)
        return {"train_graphs_per_s": r["train_graphs_per_s"], "train_seconds": r["train_seconds"],
                "all_reduce_ms_per_update": r["all_reduce_seconds"] / updates * 1e3,
                "all_reduce_share": r["all_reduce_seconds"] / r["train_seconds"] if r["train_seconds"] else 0,
                "threads_per_process": r["threads"], "param_checksum": r["param_checksum"]}

    out = {"model": "gin 5x300", "replicas": a.replicas, "batch_size": 64, "epochs": a.epochs,
           "one_process": summary(one), "two_ranks": summary(two),
           "speedup_2_ranks_vs_1_process": two["train_graphs_per_s"] / one["train_graphs_per_s"],
           "same_weights": one["param_checksum"] == two["param_checksum"], "machine": m}
    print(json.dumps(out))
    if not out["same_weights"]:
        fail("the two runs ended with different weights")


if __name__ == "__main__":
    main()
