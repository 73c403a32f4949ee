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
Prints one JSON object: per plan its flags, whether it fits, the fullest IPU in MB, estimated samples/s, the
step split, and the ratio to the measurement where there is one; and once, the per-op terms the plans used (fitted
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
PLANS = {
    "port-train": (PORT + PIPE + TRAIN, 15500),
    "port-infer": (PORT + PIPE + ["--device-iterations", "32", "--plan-inference"], 41300),
    "port-one-ipu": (PORT + TRAIN, None),
    "port-fp16": (PORT + PIPE + TRAIN + ["--precision", "fp16"], 15500),
    "port-2-stages": (PORT + ["--replicas", "8", "--pipeline-splits", "layers/6"] + TRAIN, 15500),
    "gpspp-config": (["--model", "base", "--device", "ipu", "--ipu", "bow", "--replicas", "4", "--pipeline-splits",
                      "auto:4", "--grad-accum", "7", "--batch-size", "32", "--precision", "fp16", "--recompute",
                      "--available-memory-proportion", "0.2", "--plan-only"], 17800),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--out", help="also write the JSON object to this file")
    a = ap.parse_args()
    prog = example_program(a.build, "pcqm4m_graphormer")
    out = {}
    terms = None
    with tempfile.TemporaryDirectory() as tmp:
        for name, (flags, measured) in PLANS.items():
            report = os.path.join(tmp, name + ".json")
            proc = subprocess.run([prog] + flags + ["--quiet", "--report", report], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
            if proc.returncode not in (0, 3):
                fail(f"{' '.join([prog] + flags)} exited with status {proc.returncode}:\n{proc.stderr[-2000:]}")
            with open(report) as f:
                r = json.load(f)
            est = r["estimated_samples_per_s"]
            terms = terms or {k: v for k, v in r["assumptions"].items() if k.startswith(("op_", "matmul_", "gather_",
                                                                                        "scatter_", "elementwise_"))}
            out[name] = {
                "flags": " ".join(flags),
                "program": r["program"],
                "fits": r["fits"],
                "num_ipus": r["num_ipus"],
                "memory_per_ipu_mb": [round(m, 1) for m in r["memory_per_ipu_mb"]],
                "estimated_samples_per_s": round(est),
                "step_split": {k: round(v, 3) for k, v in r["step_split"].items()},
                "measured_samples_per_s": measured,
                "estimate_over_measured": round(est / measured, 2) if measured else None,
            }
            print(f"{name:14s} fits={str(r['fits']):5s} fullest {max(r['memory_per_ipu_mb']):7.1f} MB  "
                  f"{est:9,.0f} samples/s" + (f"  {est / measured:.2f}x of {measured:,}" if measured else ""),
                  file=sys.stderr)
    out["per_op_terms"] = terms
    text = json.dumps(out, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
