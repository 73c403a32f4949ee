#!/usr/bin/env python3
"""torch.nn.functional.linear at given shapes, forward alone or forward + backward, timed as bench_core_ops's
BM_LinearShape times ours (bench/gemm_vs_openblas.py runs both): x [M, K], weight [N, K], bias [N], float32; the
backward takes the weight's, the bias's and (unless K is 50, SchNet's Gaussians, as BM_LinearShape) the input's
gradient from a fixed output gradient. Debian's torch runs these products on OpenBLAS.

Prints one JSON object: per shape, the median seconds of --repeats timed rounds of --iters calls and the
GFLOP/s (2 M K N per product; three products with the input's gradient, two without, one forward alone).

  /usr/bin/python3 bench/reference/linear_torch.py --threads 2 --shape 2007,300,600,1 --shape 2007,600,300,1
"""
import argparse
import json
import statistics
import time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", action="append", required=True, metavar="M,K,N,BWD",
                   help="rows, inputs, outputs and 1 for forward + backward (0: forward alone); repeatable")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iters", type=int, default=20, help="calls per timed round (default: 20)")
    p.add_argument("--repeats", type=int, default=7, help="timed rounds (default: 7)")
    args = p.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(17)
    out = {"torch": torch.__version__, "threads": args.threads, "shapes": []}
    for text in args.shape:
        try:
            m, k, n, bwd = (int(v) for v in text.split(","))
        except ValueError:
            p.error(f"--shape {text}: expected M,K,N,BWD (four integers)")
        input_grad = k != 50
        x = (torch.rand(m, k) * 2 - 1).requires_grad_(input_grad)
        w = (torch.rand(n, k) * 2 - 1).requires_grad_(True)
        b = (torch.rand(n) * 2 - 1).requires_grad_(True)
        seed = torch.rand(m, n) * 2 - 1

        def call():
            y = torch.nn.functional.linear(x, w, b)
            if bwd:
                y.backward(seed)
                x.grad = None
                w.grad = None
                b.grad = None

        for _ in range(3):
            call()
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            for _ in range(args.iters):
                call()
            times.append((time.perf_counter() - t0) / args.iters)
        products = (3 if input_grad else 2) if bwd else 1
        sec = statistics.median(times)
        out["shapes"].append({"M": m, "K": k, "N": n, "bwd": bwd, "seconds": sec,
                              "gflops": products * 2.0 * m * k * n / sec / 1e9})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
