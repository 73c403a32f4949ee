#!/usr/bin/python3
"""Molecule scale benchmark: trains Graphormer on N PCQM4Mv2-like molecules from a memory-mapped .npz.

Makes N molecules from the shipped PCQM4Mv2-style set (examples/data/pcqm4mv2_style) as random SMILES of its
molecules in turn (RDKit's MolToSmiles(m, doRandom=True): the same graphs with their atoms in another order, so
the batch shapes match the shipped set's), with their gaps, in the PCQM4Mv2 layout (raw/data.csv.gz, split/
with --valid and --test molecules drawn at random); builds it with `build_dataset --graphormer-max-dist 5`;
trains `pcqm4m_graphormer --data that.npz` for --minutes of training steps, then the same model on the shipped
set for as long, and prints one JSON object: build time, bytes per molecule, peak anonymous and file-backed
resident memory (RssAnon / RssFile, sampled by the program), steps, throughput and its ratio to the shipped set's
(measured in the same run: on a busy machine only the ratio means anything).

    /usr/bin/python3 bench/molecule_scale.py           # N = 100,000: a few minutes
    /usr/bin/python3 bench/molecule_scale.py 1000000 --minutes 5 --build build/release

Needs RDKit in the Python that runs it (Debian: python3-rdkit, in /usr/bin/python3). Files go under --work (default $TMPDIR/molecule_scale) and are deleted
at the end unless --keep.
"""
import argparse
import csv
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchutil  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_molecules(n, folder, valid, test, seed):
    """PCQM4Mv2 layout with n molecules: the shipped ones as random SMILES, in turn."""
    try:
        from rdkit import Chem, RDLogger, rdBase
    except ImportError:
        benchutil.fail("RDKit is needed to write random SMILES (pip install rdkit, or the Python that has it)")
    RDLogger.DisableLog("rdApp.*")
    rdBase.SeedRandomNumberGenerator(seed)
    source = os.path.join(ROOT, "examples", "data", "pcqm4mv2_style", "raw", "data.csv.gz")
    shipped = []
    with gzip.open(source, "rt") as f:
        for row in csv.DictReader(f):
            m = Chem.MolFromSmiles(row["smiles"])
            if m is not None:
                shipped.append((m, row["homolumogap"]))
    os.makedirs(os.path.join(folder, "raw"), exist_ok=True)
    os.makedirs(os.path.join(folder, "split"), exist_ok=True)
    with gzip.open(os.path.join(folder, "raw", "data.csv.gz"), "wt", compresslevel=1) as f:
        f.write("idx,smiles,homolumogap\n")
        for i in range(n):
            m, gap = shipped[i % len(shipped)]
            f.write(f"{i},{Chem.MolToSmiles(m, doRandom=True)},{gap}\n")
    rng = random.Random(seed)
    held = rng.sample(range(n), valid + test)
    parts = {"valid": sorted(held[:valid]), "test": sorted(held[valid:])}
    out = set(held)
    parts["train"] = [i for i in range(n) if i not in out]
    for name, idx in parts.items():
        with gzip.open(os.path.join(folder, "split", f"{name}.csv.gz"), "wt", compresslevel=1) as f:
            f.write("".join(f"{i}\n" for i in idx))


def train(exe, data, minutes, threads, extra):
    cmd = [exe, "--time-budget", str(minutes), "--threads", str(threads), "--json", "--quiet"] + extra
    if data:
        cmd += ["--data", data]
    j, wall = benchutil.run_json(cmd)
    keys = ["epoch_order", "read_ahead", "steps", "train_graphs_per_s", "train_seconds", "peak_rss_mb",
            "peak_rss_anon_mb", "peak_rss_file_mb", "rss_anon_mb", "rss_file_mb", "read_ahead_mb", "released_mb",
            "num_nodes", "num_edges", "num_graphs", "valid_mae", "loss_checksum"]
    r = {k: j.get(k) for k in keys}
    r["wall_seconds"] = round(wall, 1)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="?", type=int, default=100000, help="molecules (default 100,000)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"), help="build folder")
    ap.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "molecule_scale"))
    ap.add_argument("--minutes", type=float, default=1.0, help="training minutes per run (--time-budget)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--valid", type=int, default=1000, help="validation molecules")
    ap.add_argument("--test", type=int, default=1000, help="test molecules")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train-args", default="", help="more flags for both training runs, e.g. '--epoch-order chunks'")
    ap.add_argument("--no-shipped", action="store_true", help="skip the run on the shipped set")
    ap.add_argument("--keep", action="store_true", help="keep the molecules and the .npz")
    a = ap.parse_args()
    if a.n < a.valid + a.test + 1:
        benchutil.fail(f"n = {a.n} leaves no training molecule next to --valid {a.valid} and --test {a.test}")
    build_dataset = benchutil.example_program(a.build, "build_dataset")
    graphormer = benchutil.example_program(a.build, "pcqm4m_graphormer")
    os.makedirs(a.work, exist_ok=True)
    folder, npz = os.path.join(a.work, f"pcqm{a.n}"), os.path.join(a.work, f"pcqm{a.n}.npz")
    threads = a.threads or len(os.sched_getaffinity(0))
    result = {"n": a.n, "machine": benchutil.machine(), "load_average_start": os.getloadavg()[0]}
    try:
        t0 = time.perf_counter()
        make_molecules(a.n, folder, a.valid, a.test, a.seed)
        result["make_seconds"] = round(time.perf_counter() - t0, 1)
        b, wall = benchutil.run_json([build_dataset, "--input", folder, "--out", npz, "--graphormer-max-dist", "5",
                                      "--threads", str(threads), "--json"])
        size = os.path.getsize(npz)
        result["build"] = {"seconds": b.get("seconds", round(wall, 1)), "accepted": b.get("accepted"),
                           "rejected": b.get("rejected"), "peak_rss_mb": b.get("peak_rss_mb"),
                           "file_mb": round(size / 2**20, 1),
                           "bytes_per_molecule": round(size / max(1, b.get("accepted") or a.n), 1)}
        extra = a.train_args.split()
        result["train"] = train(graphormer, npz, a.minutes, threads, extra)
        if not a.no_shipped:
            result["shipped"] = train(graphormer, None, a.minutes, threads, extra)
            s, t = result["shipped"]["train_graphs_per_s"], result["train"]["train_graphs_per_s"]
            result["throughput_ratio"] = round(t / s, 3) if s and t else None
        result["load_average_end"] = os.getloadavg()[0]
        result["busy_machine"] = max(result["load_average_start"], result["load_average_end"]) > threads
    finally:
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)
            if os.path.exists(npz):
                os.remove(npz)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
