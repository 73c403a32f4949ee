#!/usr/bin/env python3
"""Each of PyG's layers here against PyG 2.3.1's own: one training step on a 10,000-node batch (100,000 random
directed edges, 64 channels), ours (bench_layer_steps) and PyG's (bench/reference/pyg_layer_steps.py) one after the
other on one machine, the reference on the OpenBLAS kernels for this CPU (benchutil.reference_env).

  PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 bench/layers_vs_pyg.py [--bin build/release/bench/bench_layer_steps]

Prints one JSON object with each layer's step times and speedup (PyG ms / ours); exit status 1 when a layer
misses --target (3, the bar of the issue that brought these layers).
"""
import argparse
import json
import os
import sys

from benchutil import fail, machine, reference_env, run_json, warn_if_busy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(REPO, "build", "release", "bench", "bench_layer_steps"))
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--nodes", type=int, default=10000)
    p.add_argument("--edges", type=int, default=100000)
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--target", type=float, default=3.0)
    p.add_argument("--layers", help="comma-separated PyG class names (default: every layer of both programs)")
    a = p.parse_args()
    if not os.access(a.bin, os.X_OK):
        fail(f"no executable {a.bin}; build it, or set --bin")
    env = reference_env()
    common = ["--nodes", str(a.nodes), "--edges", str(a.edges), "--channels", str(a.channels), "--threads",
              str(a.threads)] + (["--layers", a.layers] if a.layers else [])
    ours, _ = run_json([a.bin] + common, env)
    ref, _ = run_json([a.python, os.path.join(REPO, "bench", "reference", "pyg_layer_steps.py")] + common, env)
    out = dict(benchmark="layers_vs_pyg", machine=machine(), nodes=a.nodes, edges=a.edges, channels=a.channels,
               threads=a.threads, openblas_coretype=env.get("OPENBLAS_CORETYPE"), target_speedup=a.target, layers={})
    problems = []
    for name, r in ref["layers"].items():
        o = ours["layers"][name]
        s = r["step_ms_median"] / o["step_ms_median"]
        out["layers"][name] = dict(ours_ms=o["step_ms_median"], pyg_ms=r["step_ms_median"], speedup=s)
        if s < a.target:
            problems.append(f"{name}: {s:.2f}x, the target is {a.target:g}x")
    warn_if_busy(out["machine"])
    out["passed"] = not problems
    print(json.dumps(out, indent=1))
    for msg in problems:
        print(f"layers_vs_pyg: bar missed: {msg}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
