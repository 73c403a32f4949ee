"""The cost of hostile lines in a molecule file: build_dataset on a clean CSV and on the same CSV with every 10th
line replaced by a molecule over --max-atoms (a 999-carbon chain: under --max-smiles-length, 0.6 s for RDKit to
sanitise), interleaved rounds, medians. The accepted molecules of both builds must be the same, array for array.

    /usr/bin/python3 bench/bounded_work.py [--build build/release] [--lines 20000] [--rounds 3]

Prints one JSON object: each build's median seconds, the ratio hostile / clean, and the per-line cost of a refused
line; exit 1 when the accepted molecules differ."""
import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchutil  # noqa: E402


def build(exe, csv, out, threads):
    cmd = [exe, "-i", csv, "--target-cols", "HIV_active", "-o", out, "--threads", str(threads)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        benchutil.fail(f"{' '.join(cmd)} exited with status {proc.returncode}:\n{proc.stderr[-2000:]}")
    return wall


def same_molecules(a, b):
    """The two datasets' arrays, but for the metadata (which names the input file and its rejected lines) and each
    molecule's position and line in its file (source_index, source_line: the hostile lines shift the clean ones)."""
    skip = ("metadata", "source_index", "source_line")
    with np.load(a) as x, np.load(b) as y:
        keys = sorted(k for k in x.files if k not in skip)
        if keys != sorted(k for k in y.files if k not in skip):
            return False, "different members"
        for k in keys:
            if not np.array_equal(x[k], y[k]):
                return False, f"member {k} differs"
    return True, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build/release")
    ap.add_argument("--lines", type=int, default=20000, help="lines of the hostile file (a tenth of them hostile)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = ap.parse_args()
    exe = benchutil.example_program(args.build, "build_dataset")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "data", "moleculenet", "HIV.csv.gz")
    with gzip.open(src, "rt") as f:
        header = f.readline()
        rows = [line for _, line in zip(range(args.lines), f)]
    hostile_row = "C" * 999 + ",x,0\n"  # HIV's columns: smiles, activity, HIV_active
    work = tempfile.mkdtemp(prefix="gnn_bounded_work.")
    try:
        clean_rows = [r for i, r in enumerate(rows) if i % 10 != 9]
        hostile_rows = [hostile_row if i % 10 == 9 else r for i, r in enumerate(rows)]
        clean, hostile = os.path.join(work, "clean.csv"), os.path.join(work, "hostile.csv")
        with open(clean, "w") as f:
            f.write(header + "".join(clean_rows))
        with open(hostile, "w") as f:
            f.write(header + "".join(hostile_rows))
        m = benchutil.machine()
        times = {"clean": [], "hostile": []}
        for _ in range(args.rounds):
            for name, csv in (("clean", clean), ("hostile", hostile)):
                times[name].append(build(exe, csv, os.path.join(work, name + ".npz"), args.threads))
        same, why = same_molecules(os.path.join(work, "clean.npz"), os.path.join(work, "hostile.npz"))
        benchutil.warn_if_busy(m)
        tc, th = statistics.median(times["clean"]), statistics.median(times["hostile"])
        hostile_lines = len(rows) - len(clean_rows)
        print(json.dumps({
            "benchmark": "bounded_work", "machine": m, "threads": args.threads,
            "lines": len(rows), "hostile_lines": hostile_lines, "clean_lines": len(clean_rows),
            "clean_s": round(tc, 3), "hostile_s": round(th, 3), "ratio": round(th / tc, 3),
            "ms_per_hostile_line": round(1000 * (th - tc) / hostile_lines, 3),
            "seconds": {k: [round(t, 3) for t in v] for k, v in times.items()},
            "same_accepted_molecules": same,
        }, indent=1))
        if not same:
            print(f"bounded_work: the accepted molecules differ: {why}", file=sys.stderr)
            sys.exit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
