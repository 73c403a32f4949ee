#!/usr/bin/env python3
"""The simulated IPU's plans of published IPU configurations, next to what was measured (docs/device.md).

  /usr/bin/python3 bench/published_plans.py [--build build/release] [--out plans.json]

Plans (pcqm4m_graphormer --plan-only / --plan-inference --report; deterministic, a few seconds each, nothing
timed on this machine):
  port-train      Graphormer-base as ported to IPUs with PopTorch 2.3 (github.com/matildalab/GraphormerIPU,
                  train.sh): Mk2, micro-batch 28, 20 hops, 4 replicas x 4 stages split at layers/1, layers/5,
                  layers/8, accumulation 32, recomputation (PopTorch's default when pipelining), fp32.
                  Measured: ~15,500 samples/s (the port's notes).
  port-infer      the same stages for inference, 32 device iterations. Measured: ~41,300 samples/s.
  port-one-ipu    the same micro-batch on one IPU. Measured: does not fit (the notes' memory profile).
  port-fp16       port-train with every matmul in fp16 (what the port did not do; for the precision question).
  port-2-stages   8 replicas x 2 stages (layers/6): the configuration the notes found slower than 4 x 4.
  gpspp-config    Graphormer-base in GPS++'s configuration (Bow, fp16, AMP 0.2, 4 x 4 auto splits, micro-batch
                  32, accumulation 7). GPS++ (another model) measured 17,800 graphs/s.
  gpspp           GPS++ itself (--model gps, 44M, models/GpsPlusPlus.h) in its configuration
                  (graphcore/examples gnn/ogb_lsc_pcqm4mv2 GPS_PCQ_16gps_44M.yaml): Bow, 4 replicas x 4 stages, fp16,
                  recomputation, AMP 0.2, micro-batches of 8 packs of 60 nodes, 120 edges, 8 graphs (+ a dummy each:
                  488 nodes, 968 edges, 72 graph slots), accumulation 7. Measured 17,800 graphs/s.
  schnet-qm9-R    SchNet (100 wide, 4 interactions, 25 Gaussians, cutoff 6, 28 neighbours) as Helal et al. ran it on
                  QM9 (github.com/graphcore-research/hydronet-gnn, configs/qm9_packed.yml with the
                  sweeps/qm9_packed_scaling.yml runs: molecules padded to 32 atoms, micro-batch 16, accumulation 2,
                  R replicas on Bow IPUs, device iterations 64 / R, synchronous loading); here on QM7's molecules.
                  Measured (experiments/strong_scaling.ipynb): 25,727 (R = 1), 74,985 (4), 141,606 (16) graphs/s.
Prints one JSON object: per plan its flags, whether it fits, the fullest IPU in MB, estimated samples/s (the IPUs'
rate) and the throughput with the host's preparation (this machine's, timed; the loader mode the run used), the
step split, and the ratios to the measurement where there is one; and once, the per-op terms the plans used (fitted
to kernel-level measurements by device/costfit/fit.py, never to these figures). Exit 2 when a program fails.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from benchutil import example_program, fail

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PORT = ["--model", "base", "--device", "ipu", "--ipu", "mk2", "--batch-size", "28", "--multi-hop-max-dist", "20"]
PIPE = ["--replicas", "4", "--pipeline-splits", "layers/1,layers/5,layers/8"]
TRAIN = ["--grad-accum", "32", "--recompute", "--plan-only"]
GPSPP = ["--device", "ipu", "--ipu", "bow", "--replicas", "4", "--pipeline-splits", "auto:4", "--grad-accum", "7",
         "--precision", "fp16", "--recompute", "--available-memory-proportion", "0.2", "--plan-only"]
QM9 = ["--device", "ipu", "--ipu", "bow", "--hidden", "100", "--filters", "100", "--layers", "4", "--gaussians", "25",
       "--cutoff", "6", "--max-neighbors", "28", "--strategy", "pad", "--batch-size", "16", "--num-nodes", "512",
       "--num-edges", "14336", "--num-graphs", "17", "--grad-accum", "2", "--loader-mode", "sync", "--plan-only"]
# name: (program, flags, measured samples/s)
PLANS = {
    "port-train": ("pcqm4m_graphormer", PORT + PIPE + TRAIN, 15500),
    "port-infer": ("pcqm4m_graphormer", PORT + PIPE + ["--device-iterations", "32", "--plan-inference"], 41300),
    "port-one-ipu": ("pcqm4m_graphormer", PORT + TRAIN, None),
    "port-fp16": ("pcqm4m_graphormer", PORT + PIPE + TRAIN + ["--precision", "fp16"], 15500),
    "port-2-stages": ("pcqm4m_graphormer", PORT + ["--replicas", "8", "--pipeline-splits", "layers/6"] + TRAIN, 15500),
    "gpspp-config": ("pcqm4m_graphormer", ["--model", "base", "--batch-size", "32"] + GPSPP, 17800),
    "gpspp": ("pcqm4m_graphormer", ["--model", "gps", "--num-nodes", "488", "--num-edges", "968", "--num-graphs", "72"]
              + GPSPP, 17800),
    "schnet-qm9-1": ("qm7_schnet", QM9 + ["--replicas", "1", "--device-iterations", "64"], 25727),
    "schnet-qm9-4": ("qm7_schnet", QM9 + ["--replicas", "4", "--device-iterations", "16"], 74985),
    "schnet-qm9-16": ("qm7_schnet", QM9 + ["--replicas", "16", "--device-iterations", "4"], 141606),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--out", help="also write the JSON object to this file")
    a = ap.parse_args()
    out = {}
    terms = None
    with tempfile.TemporaryDirectory() as tmp:
        for name, (program, flags, measured) in PLANS.items():
            prog = example_program(a.build, program)
            report = os.path.join(tmp, name + ".json")
            proc = subprocess.run([prog] + flags + ["--quiet", "--report", report], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
            if proc.returncode not in (0, 3):
                fail(f"{' '.join([prog] + flags)} exited with status {proc.returncode}:\n{proc.stderr[-2000:]}")
            with open(report) as f:
                r = json.load(f)
            est = r["estimated_samples_per_s"]
            with_host = r["throughput"]["samples_per_s"]
            terms = terms or {k: v for k, v in r["assumptions"].items() if k.startswith(("op_", "matmul_", "gather_",
                                                                                        "scatter_", "elementwise_"))}
            out[name] = {
                "flags": " ".join(flags),
                "program": r["program"],
                "fits": r["fits"],
                "num_ipus": r["num_ipus"],
                "memory_per_ipu_mb": [round(m, 1) for m in r["memory_per_ipu_mb"]],
                "estimated_samples_per_s": round(est),
                "with_host_samples_per_s": round(with_host),
                "loader_mode": r["throughput"]["loader_mode"],
                "step_split": {k: round(v, 3) for k, v in r["step_split"].items()},
                "measured_samples_per_s": measured,
                "estimate_over_measured": round(est / measured, 2) if measured else None,
                "with_host_over_measured": round(with_host / measured, 2) if measured else None,
            }
            print(f"{name:14s} fits={str(r['fits']):5s} fullest {max(r['memory_per_ipu_mb']):7.1f} MB  "
                  f"{est:9,.0f} samples/s" + (f"  {est / measured:.2f}x of {measured:,}" if measured else "") +
                  f"  (with this host, {r['throughput']['loader_mode']} loading: {with_host:,.0f}" +
                  (f", {with_host / measured:.2f}x)" if measured else ")"), file=sys.stderr)
    out["per_op_terms"] = terms
    text = json.dumps(out, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
