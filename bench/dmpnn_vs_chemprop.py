#!/usr/bin/python3
"""D-MPNN against Chemprop's published regression table: ESOL, FreeSolv and Lipophilicity, random 80/10/10.

Runs `molecule_property --model dmpnn` with Chemprop's defaults where this program has them (hidden 300, depth 3,
mean aggregation, one FFN hidden layer of 300, dropout 0, batches of 50, 50 epochs; MSE loss on standardised
targets; RDKit 2D descriptors, standardised with the training split's statistics, as Chemprop's
`rdkit_2d_normalized` features; the best epoch by validation RMSE; warmup of two epochs' steps, then cosine decay
where Chemprop uses Noam's) for --seeds seeds per set, and prints a markdown table of the test RMSE (mean +- sample
std over the seeds) beside Chemprop's published figure (chemprop/chemprop README since v1.1: ESOL 0.555 +- 0.047,
FreeSolv 1.075 +- 0.054, Lipophilicity 0.555 +- 0.023; D-MPNN with its features and optimised hyper-parameters,
random splits) and the ratio to it. Every run's JSON is kept as <out>/<set>-seed<k>.json and skipped when it
exists, so seeds can be added later; --report only summarises.

    /usr/bin/python3 bench/dmpnn_vs_chemprop.py --seeds 5 --threads 1 --out runs/dmpnn

The goal (the table's "within 15%" column, docs/programs.md "D-MPNN against Chemprop's published table"): for every
set of --sets, the mean test RMSE at most --target (1.15) times Chemprop's published mean; a set without a finished
run in --out misses it. Exit status 0 when the goal is met, 1 when it is missed (each miss on stderr as
`dmpnn_vs_chemprop: goal missed: ...`), 2 when a program fails or the command line is bad. --no-goal only reports
(exit 0 unless a program fails).
"""
import argparse
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchutil  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "examples", "data", "moleculenet")

# name: (file, target column, Chemprop's published test RMSE mean, std)
SETS = {
    "esol": ("delaney-processed.csv.gz", "measured log solubility in mols per litre", 0.555, 0.047),
    "freesolv": ("SAMPL.csv.gz", "expt", 1.075, 0.054),
    "lipo": ("Lipophilicity.csv.gz", "exp", 0.555, 0.023),
}
BATCH = 50


def molecules(path):
    import gzip
    with gzip.open(path, "rt") as f:
        return sum(1 for _ in f) - 1


def command(exe, name, seed, epochs, threads, log):
    file, column, _, _ = SETS[name]
    path = os.path.join(DATA, file)
    train = int(0.8 * molecules(path))
    warmup = 2 * math.ceil(train / BATCH)
    return [exe, "--model", "dmpnn", "--data", path, "--target-cols", column, "--split", "random",
            "--seed", str(seed), "--epochs", str(epochs), "--batch-size", str(BATCH), "--lr", "1e-3",
            "--schedule", "cosine", "--warmup", str(warmup), "--loss", "mse", "--metric", "rmse,mae",
            "--molecule-features", "rdkit2d", "--threads", str(threads), "--log", log, "--json", "--quiet"]


def run(args, exe, name, seed):
    out = os.path.join(args.out, f"{name}-seed{seed}.json")
    if os.path.exists(out):
        return
    cmd = command(exe, name, seed, args.epochs, args.threads, os.path.join(args.out, f"{name}-seed{seed}.log.jsonl"))
    print("running:", " ".join(cmd), file=sys.stderr, flush=True)
    result, wall = benchutil.run_json(cmd)
    result["wall_seconds"] = wall
    with open(out + ".part", "w") as f:
        json.dump(result, f)
    os.replace(out + ".part", out)


def summary(args, problems):
    """The markdown table of every set's runs in --out; a problem for each set of --sets that misses the goal."""
    within = f"within {(args.target - 1) * 100:.0f}%" if args.target > 1 else f"at most {args.target:g}x"
    rows = [f"| set | seeds | valid RMSE | test RMSE (mean +- std) | Chemprop published | ratio | {within} |",
            "|---|---|---|---|---|---|---|"]
    checked = args.sets.split(",")
    for name, (_, _, ref, ref_std) in SETS.items():
        valid, test = [], []
        for seed in range(args.seeds):
            path = os.path.join(args.out, f"{name}-seed{seed}.json")
            if os.path.exists(path):
                with open(path) as f:
                    r = json.load(f)
                valid.append(r["valid_rmse"])
                test.append(r["test_rmse"])
        if not test:
            rows.append(f"| {name} | 0 | | not run | {ref} +- {ref_std} | | |")
            if name in checked:
                problems.append(f"{name}: no finished run in {args.out}")
            continue
        mean = sum(test) / len(test)
        std = math.sqrt(sum((t - mean) ** 2 for t in test) / (len(test) - 1)) if len(test) > 1 else float("nan")
        vmean = sum(valid) / len(valid)
        ratio = mean / ref
        rows.append(f"| {name} | {len(test)} | {vmean:.3f} | {mean:.3f} +- {std:.3f} | {ref} +- {ref_std} | "
                    f"{ratio:.3f} | {'yes' if ratio <= args.target else 'no'} |")
        if name in checked and ratio > args.target:
            problems.append(f"{name}: test RMSE {mean:.3f} over {len(test)} seeds is {ratio:.3f}x Chemprop's "
                            f"{ref}; the target is at most {args.target:g}x")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "runs", "dmpnn"), help="folder of the runs' JSON")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated: " + ", ".join(SETS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--report", action="store_true", help="only summarise the runs in --out")
    benchutil.add_goal_args(ap, 1.15, "largest ratio of a set's mean test RMSE to Chemprop's published mean")
    args = ap.parse_args()
    for name in args.sets.split(","):
        if name not in SETS:
            benchutil.fail(f"--sets: unknown set '{name}' (known: {', '.join(SETS)})")
    os.makedirs(args.out, exist_ok=True)
    if not args.report:
        exe = benchutil.example_program(args.build, "molecule_property")
        for seed in range(args.seeds):
            for name in args.sets.split(","):
                run(args, exe, name, seed)
    problems = []
    table = summary(args, problems)
    out = {"benchmark": "dmpnn_vs_chemprop", "table": table}
    benchutil.finish(out, problems, "dmpnn_vs_chemprop", args.no_goal, {"max_rmse_ratio": args.target},
                     show=lambda o: print(o["table"]))


if __name__ == "__main__":
    benchutil.run_main(main)
