#!/usr/bin/env python3
"""Each of PyG's layers here against PyG 2.3.1's own: one training step on a 10,000-node batch (100,000 random
directed edges, 64 channels), ours (bench_layer_steps) and PyG's (bench/reference/pyg_layer_steps.py) one after the
other on one machine, the reference on the OpenBLAS kernels for this CPU (benchutil.reference_env).

  PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 bench/layers_vs_pyg.py [--bin build/release/bench/bench_layer_steps]

Prints one JSON object with each layer's step times and speedup (PyG ms / ours). The goal: every layer at least
--target (3, the bar of the issue that brought these layers) times faster; the JSON's "goal" object records it,
"passed" and "checked". Exit status 0 when every layer meets it, 1 when one misses it (each on stderr as
`layers_vs_pyg: goal missed: ...`), 2 when a program fails or the command line is bad. --no-goal only reports
(exit 0 unless a program fails).
"""
import argparse
import os

from benchutil import add_goal_args, fail, finish, machine, reference_env, run_json, run_main, warn_if_busy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(REPO, "build", "release", "bench", "bench_layer_steps"))
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--nodes", type=int, default=10000)
    p.add_argument("--edges", type=int, default=100000)
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    add_goal_args(p, 3.0, "required speedup of every layer's step")
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
               threads=a.threads, openblas_coretype=env.get("OPENBLAS_CORETYPE"), layers={})
    problems = []
    for name, r in ref["layers"].items():
        if name not in ours["layers"]:
            fail(f"{a.bin} has no step for {name}, which the reference timed")
        o = ours["layers"][name]
        s = r["step_ms_median"] / o["step_ms_median"]
        out["layers"][name] = dict(ours_ms=o["step_ms_median"], pyg_ms=r["step_ms_median"], speedup=s)
        if s < a.target:
            problems.append(f"{name}: {s:.2f}x, the target is {a.target:g}x")
    warn_if_busy(out["machine"])
    finish(out, problems, "layers_vs_pyg", a.no_goal, dict(target_speedup=a.target))


if __name__ == "__main__":
    run_main(main)
