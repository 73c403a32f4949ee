#!/usr/bin/env python3
"""Speed of two builds of gnn against each other, in one run, the two builds' runs interleaved round by round so that
a change of machine load hits both alike. The cases (--cases, all by default):

  cora        a Cora epoch (cora_gcn, median ms of 5 x 200 epochs)
  gin         a GIN training step (bench_graph_training, graphs/s per batching strategy)
  schnet      SchNet on QM7 (qm7_schnet, 1,024 molecules, 2 epochs: training and inference molecules/s)
  graphormer  Graphormer-slim (pcqm4m_graphormer, one epoch of the shipped PCQM4Mv2-style set: training and
              inference graphs/s)
  dmpnn       Chemprop's D-MPNN on ESOL (molecule_property --model dmpnn, 20 epochs: training molecules/s)
  layers      one training step of each of PyG's layers (bench_layer_steps: 10,000 nodes, 100,000 edges, 64
              channels, median ms of 10 steps per layer; --layers A,B for some of them); not in the default set
              (about 1 minute a round)

For "no regression" checks, e.g. main against the commit before a change:

  git worktree add /tmp/old <commit> && (cd /tmp/old && cmake --preset release && \\
      cmake --build build/release -j2 --target cora_gcn bench_graph_training)
  /usr/bin/python3 bench/compare_builds.py --old /tmp/old/build/release --new build/release --cases cora,gin

and for a portable build (no GNN_NATIVE: what a package gets) against the native one:

  cmake -S . -B build/portable -DCMAKE_BUILD_TYPE=Release && cmake --build build/portable -j2 --target \\
      cora_gcn bench_graph_training qm7_schnet pcqm4m_graphormer molecule_property build_dataset
  /usr/bin/python3 bench/compare_builds.py --old build/release --new build/portable

Prints one JSON object: each case's figures per round and build, each round's new/old ratio as a speed (above 1:
the new build is faster) and their median. Time it on a quiet machine.

The goal: every speed ratio (the keys ending in _speed_new_over_old) at least --target (0.909 = 1/1.10: the new
build's time within 1.10x of the old one's, the bar the project holds a portable build to against the native one,
and the 1.10x it holds overheads to elsewhere: bench_device's simulated IPU, node_loaders.py's sampler). The JSON's
"goal" object records the minimums, "passed" and "checked". Exit status 0 when the goal is met, 1 when it is
missed (each miss on stderr as `compare_builds: goal missed: ...`), 2 when a program fails or the command line is
bad. --no-goal only reports (exit 0 unless a program fails).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchutil import (add_goal_args, check_at_least, example_program, fail, finish, machine,  # noqa: E402
                       run_json, run_main, warn_if_busy)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bench_program(build):
    exe = os.path.join(build, "bench", "bench_graph_training")
    if not os.access(exe, os.X_OK):
        fail(f"{exe} not found: build the bench_graph_training target")
    return exe


def gin_step(build):
    """bench_graph_training's graphs/s per strategy (it prints one JSON object over several lines)."""
    cmd = [bench_program(build), "--model", "gin", "--rounds", "4", "--steps-per-round", "5"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0 or "{" not in proc.stdout:
        fail(f"{' '.join(cmd)} failed (status {proc.returncode})")
    j = json.loads(proc.stdout[proc.stdout.index("{"):])
    return {s["strategy"]: s["real_graphs_per_s_at_median_step"] for s in j["strategies"]}


def last_json(cmd):
    """The JSON object on the last line of cmd's stdout (its progress goes to stderr, discarded)."""
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if proc.returncode != 0:
        fail(f"{' '.join(cmd)} failed (status {proc.returncode})")
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        fail(f"{' '.join(cmd)} printed no JSON object on its last line")


def cases(args):
    """name -> (function of a build folder giving {quantity: value}, whether higher values are faster)."""
    data = os.path.join(REPO, "examples", "data")
    threads = ["--threads", str(args.threads)]

    def cora(b):
        j = last_json([example_program(b, "cora_gcn"), "--json", "--runs", "5", "--epochs", "200",
                       "--data", args.cora_data] + threads)
        return {"epoch_ms": j["epoch_ms_median"]}

    def schnet(b):
        j = last_json([example_program(b, "qm7_schnet"), "--limit", "1024", "--batch-size", "32", "--epochs", "2",
                       "--json", "--data", os.path.join(data, "qm7_3d", "qm7.xyz.gz")] + threads)
        return {"train_molecules_per_s": j["train_molecules_per_s"],
                "infer_molecules_per_s": j["infer_molecules_per_s"]}

    def graphormer(b):
        j = last_json([example_program(b, "pcqm4m_graphormer"), "--model", "slim", "--batch-size", "64", "--max-node",
                       "30", "--epochs", "1", "--json", "--data", os.path.join(data, "pcqm4mv2_style")] + threads)
        return {"train_graphs_per_s": j["train_graphs_per_s"], "infer_graphs_per_s": j["infer_graphs_per_s"]}

    def dmpnn(b):
        j = last_json([example_program(b, "molecule_property"), "--model", "dmpnn", "--data",
                       os.path.join(data, "moleculenet", "delaney-processed.csv.gz"), "--target-cols",
                       "measured log solubility in mols per litre", "--epochs", "20", "--json"] + threads)
        summary = j.get("summary", j)
        return {"train_molecules_per_s": summary["train_samples_per_s"]}

    def layers(b):
        exe = os.path.join(b, "bench", "bench_layer_steps")
        if not os.access(exe, os.X_OK):
            fail(f"{exe} not found: build the bench_layer_steps target")
        j = last_json([exe, "--reps", "10"] + (["--layers", args.layers] if args.layers else []) + threads)
        return {f"{name}_step_ms": v["step_ms_median"] for name, v in j["layers"].items()}

    return {"cora": (cora, False), "gin": (gin_step, True), "schnet": (schnet, True),
            "graphormer": (graphormer, True), "dmpnn": (dmpnn, True), "layers": (layers, False)}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", required=True, help="build folder of the reference (e.g. the native build)")
    p.add_argument("--new", required=True, help="build folder under test")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                   help="threads of every program (default: the machine's cores)")
    p.add_argument("--cases", default="cora,gin,schnet,graphormer,dmpnn",
                   help="comma-separated cases (default: all but layers): cora, gin, schnet, graphormer, dmpnn, "
                        "layers")
    p.add_argument("--layers", default="",
                   help="the layers case: comma-separated PyG class names (default: every layer bench_layer_steps has)")
    p.add_argument("--cora-data", default=os.path.join(REPO, "examples", "data", "cora"))
    add_goal_args(p, round(1 / 1.10, 3), "required new/old speed ratio of every measured quantity")
    args = p.parse_args()
    if args.rounds < 1:
        p.error(f"--rounds {args.rounds}: must be at least 1")
    table = cases(args)
    chosen = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in table]
    if unknown or not chosen:
        p.error(f"--cases {args.cases}: unknown {', '.join(unknown) or '(none given)'}; known: {', '.join(table)}")
    m = machine()
    builds = {"old": args.old, "new": args.new}
    runs = {c: {k: [] for k in builds} for c in chosen}
    for r in range(args.rounds):
        for c in chosen:
            for k, b in builds.items():
                runs[c][k].append(table[c][0](b))
            line = ", ".join(f"{q} old {runs[c]['old'][-1][q]:.4g} new {runs[c]['new'][-1][q]:.4g}"
                             for q in runs[c]["new"][-1])
            print(f"round {r + 1}: {c}: {line}", file=sys.stderr)
    warn_if_busy(m)
    out = {"benchmark": "compare_builds", "machine": m, "old": args.old, "new": args.new, "threads": args.threads,
           "runs": runs}
    # Each round's ratio of its two runs, side by side in time, then their median: the machine's speed drifts
    # between rounds (a shared host's varied by 2x within minutes), which a ratio of per-build medians mixes in.
    for c in chosen:
        higher_is_faster = table[c][1]
        for q in runs[c]["new"][0]:
            ratios = [n[q] / o[q] if higher_is_faster else o[q] / n[q]
                      for o, n in zip(runs[c]["old"], runs[c]["new"])]
            out[f"{c}_{q}_speed_by_round"] = ratios
            out[f"{c}_{q}_speed_new_over_old"] = statistics.median(ratios)
    minimum = {key: args.target for key in out if key.endswith("_speed_new_over_old")}
    finish(out, check_at_least(out, minimum), "compare_builds", args.no_goal, {"at_least": minimum})


if __name__ == "__main__":
    run_main(main)
