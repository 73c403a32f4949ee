"""Helpers shared by the benchmark drivers that compare a gnn program with a PyTorch reference."""
import argparse
import json
import os
import platform
import subprocess
import sys
import time
import traceback


def fail(msg, code=2):
    print(f"{os.path.basename(sys.argv[0])}: {msg}", file=sys.stderr)
    sys.exit(code)


def example_program(build, name):
    """Path of an example program in a build folder; fails naming it when it is not built."""
    exe = os.path.join(build, "examples", name)
    if not os.access(exe, os.X_OK):
        fail(f"{exe} not found: build the release preset first")
    return exe


def run_json(cmd, env=None):
    """Runs cmd, returns (its stdout's JSON object, wall seconds). Stderr passes through."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env)
    except OSError as e:
        fail(f"cannot run {cmd[0]}: {e}")
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        fail(f"{' '.join(cmd)} exited with status {proc.returncode}")
    # The JSON object is the last non-empty line (a program may print progress lines before it).
    lines = [l for l in proc.stdout.splitlines() if l.strip()]
    try:
        return json.loads(lines[-1]), wall
    except (IndexError, json.JSONDecodeError):
        fail(f"{' '.join(cmd)} did not print a JSON object on its last line; stdout was:\n{proc.stdout[-2000:]}")


def machine():
    """What the figures were measured on."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gb = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return dict(nproc=len(os.sched_getaffinity(0)), cpu_model=model, mem_total_gb=mem_gb,
                kernel=platform.release(), python=platform.python_version(),
                loadavg_start=[round(x, 2) for x in os.getloadavg()])


def reference_env():
    """Environment for a PyTorch reference: one BLAS thread (torch's own pool is the only parallelism), and the
    OpenBLAS kernels a user of this CPU gets: named by the CPU's flags (SkylakeX with AVX-512, Haswell with
    AVX2), with OPENBLAS_L2_SIZE removed. Debian's OpenBLAS 0.3.21 does not recognise recent CPUs and falls back
    to its generic 'Prescott' kernel (about 30 GFLOP/s here instead of 130). A machine's own settings (a
    workplace may export OPENBLAS_CORETYPE=Haswell and OPENBLAS_L2_SIZE for its other work) are replaced, not
    kept: on an AVX-512 CPU they made the SchNet reference ~25% slower. GNN_REFERENCE_OPENBLAS_CORETYPE names
    another kernel on purpose."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop("OPENBLAS_L2_SIZE", None)
    env.pop("OPENBLAS_CORETYPE", None)
    forced = os.environ.get("GNN_REFERENCE_OPENBLAS_CORETYPE")
    if forced:
        env["OPENBLAS_CORETYPE"] = forced
        return env
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line
                    break
    except OSError:
        pass
    if " avx512f" in flags:
        env["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif " avx2" in flags:
        env["OPENBLAS_CORETYPE"] = "Haswell"
    return env


def warn_if_busy(m):
    """Records the end load in machine() dict m and flags a busy machine (1-minute load above the core count):
    times taken while other work holds the cores say little."""
    m["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    m["busy"] = max(m["loadavg_start"][0], m["loadavg_end"][0]) > m["nproc"]
    if m["busy"]:
        print(f"{os.path.basename(sys.argv[0])}: warning: the machine was busy (load average above its core count); "
              "times are inflated and noisy, re-run on an idle machine", file=sys.stderr)


def step_gflops(ours):
    """GFLOP/s of our training step (forward + backward ops, optimizer not included) from a program's
    --profile rows, or None when the JSON has none."""
    rows = ours.get("profile")
    if not isinstance(rows, list) or not rows:
        return None
    flops = sum(r.get("flops", 0) for r in rows)
    ms = sum(r.get("ms", 0) for r in rows)
    return flops / (ms * 1e6) if ms > 0 else None


def gemm_peak_gflops(build, threads, env=None):
    """The machine's GEMM speed in GFLOP/s, measured now by bench_core_ops's plain Eigen GEMM (512^3, float32,
    on every core), or None when bench_core_ops is not built or `threads` is not every core."""
    if threads != len(os.sched_getaffinity(0)):
        return None
    exe = os.path.join(build, "bench", "bench_core_ops")
    if not os.access(exe, os.X_OK):
        return None
    cmd = [exe, "--benchmark_filter=BM_ReferenceEigenGemm", "--benchmark_format=json",
           "--benchmark_min_time=0.5"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    if proc.returncode != 0:
        return None
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return None
    for b in data.get("benchmarks", []):
        if b.get("name", "").startswith("BM_ReferenceEigenGemm"):
            for key in ("FLOP/s", "flops", "FLOPS"):
                if key in b:
                    return b[key] / 1e9
    return None


def bf16_ratios(out, unit):
    """The bfloat16 ratios of a --bf16 run into out: for training and inference (rates train_<unit>_per_s and
    infer_<unit>_per_s), ours under --precision bf16 (out["gnn_bf16"]) over the reference in float32
    (out["torch"]) and under torch.autocast bf16 (out["torch_bf16_autocast"]). Returns a one-line summary."""
    ours16, ref, ref16 = out["gnn_bf16"], out["torch"], out["torch_bf16_autocast"]
    for kind in ("train", "infer"):
        key = f"{kind}_{unit}_per_s"
        out[f"bf16_speedup_{kind}_vs_torch_fp32"] = ours16[key] / ref[key]
        out[f"bf16_speedup_{kind}_vs_torch_bf16_autocast"] = ours16[key] / ref16[key]
    return (f"bf16 training {ours16[f'train_{unit}_per_s']:.1f} {unit}/s: "
            f"{out['bf16_speedup_train_vs_torch_fp32']:.2f}x torch fp32, "
            f"{out['bf16_speedup_train_vs_torch_bf16_autocast']:.2f}x torch under bf16 autocast "
            f"({ref16[f'train_{unit}_per_s']:.1f}); inference {out['bf16_speedup_infer_vs_torch_fp32']:.2f}x and "
            f"{out['bf16_speedup_infer_vs_torch_bf16_autocast']:.2f}x")


# Goals. A driver that compares our program with a reference (or one build with another) checks the bar the
# project states for it and says so in its exit status: 0 when every goal is met, 1 when one is missed (each
# missed goal on stderr as `NAME: goal missed: ...`), 2 when a program fails or the command line is bad.
# --no-goal only reports: the goal is still evaluated and recorded, but the exit status is 0 unless a program fails.

def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text}: must be > 0")
    return value


def add_goal_args(parser, default_target, what, flag="--target"):
    """Adds the goal's flag (--target X unless `flag` names another, default `default_target`; `what` says what
    it bounds, for --help) and, once per parser, --no-goal. Returns the flag's argparse destination name."""
    dest = flag.lstrip("-").replace("-", "_")
    parser.add_argument(flag, dest=dest, type=_positive_float, default=default_target, metavar="X",
                        help=f"{what} (default: {default_target:g})")
    try:
        parser.add_argument("--no-goal", action="store_true",
                            help="only report: the goal is evaluated and recorded, but the exit status is 0 "
                                 "whether it is met or not (2 still when a program fails)")
    except argparse.ArgumentError:
        pass  # added with the driver's first goal flag
    return dest


def check_at_least(out, minimum):
    """The problems of out's ratios against `minimum` (ratio key -> the least it may be; higher is better): one
    message for each ratio below its minimum."""
    return [f"{key} {out[key]:.3g}x, the target is {low:g}x" for key, low in minimum.items() if out[key] < low]


def finish(out, problems, name, no_goal, goal, applies=True, show=None):
    """Ends a driver: records out["goal"] = goal's fields (the targets) with "passed" (no problem) and "checked"
    (the goal applies and --no-goal was not given), prints out (as indented JSON, or by show(out)), prints each
    problem on stderr as `NAME: goal missed: ...`, and exits 1 when a goal was missed and checked, 0 otherwise.
    A goal that does not apply to the run (a driver's test mode, workloads that differ) records "applies": false
    and "passed": null."""
    checked = bool(applies) and not no_goal
    out["goal"] = dict(goal, passed=(not problems) if applies else None, checked=checked)
    if not applies:
        out["goal"]["applies"] = False
    if show is None:
        print(json.dumps(out, indent=1))
    else:
        show(out)
    sys.stdout.flush()
    for msg in problems:
        print(f"{name}: goal missed: {msg}", file=sys.stderr)
    if problems and isinstance(out.get("machine"), dict) and out["machine"].get("busy"):
        print(f"{name}: note: the machine was busy; re-run on an idle machine before calling this a regression",
              file=sys.stderr)
    if problems and no_goal:
        print(f"{name}: --no-goal: exit status 0", file=sys.stderr)
    sys.exit(1 if problems and checked else 0)


def run_main(main):
    """Runs a driver's main(). An exception it does not handle (a program's JSON without an expected key, a bug)
    prints its traceback and exits 2, as a failed program does, so that exit status 1 means a missed goal only."""
    try:
        main()
    except Exception:  # SystemExit and KeyboardInterrupt are no Exception: they pass through
        traceback.print_exc()
        fail("stopped by the error above")
