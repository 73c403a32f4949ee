#!/usr/bin/env python3
"""Fits the IPU cost model's per-op terms to published kernel-level measurements and writes device/CostFit.h.

  /usr/bin/python3 device/costfit/fit.py            # fit kernels.csv, print terms and residuals, write CostFit.h
  /usr/bin/python3 device/costfit/fit.py --points   # also print every point's measured and fitted cycles
  /usr/bin/python3 device/costfit/fit.py --check    # exit 1 if CostFit.h differs from what the CSV gives

Data: device/costfit/kernels.csv (sources in device/costfit/README.md). Whole-model throughputs are not in it:
they are the validation (tests/examples, bench/published_plans.py). The fit is in GC200 tile cycles, which a Mk2
(1.33 GHz) and a Bow (1.85 GHz) IPU share; only the clock differs.

Model (the terms device/CostModel.cpp evaluates, with the FLOPs and bytes the project's ops record, fp32):
  gather-like op:   cycles = gatherCycles + gatherPerIndex x indices + gatherPerTableRow x table rows
                             + bytes / gatherBytesPerCycle
  scatter-like op:  cycles = scatterCycles + scatterPerIndex x indices + bytes / scatterBytesPerCycle
  element-wise op:  cycles = opCycles + bytes / elementwiseBytesPerCycle
  matmul:           cycles = opCycles + flops / (tiles x peak FLOP/cycle/tile x eff(h)),
                    eff(h) = matmulPeakShare x h / (h + matmulHalfDim),  h = MKN / (MK + KN + MN)
                    (h is about the smallest of M, K, N; the cost model reads it as 2 x flops / fp32 bytes)
Fits, each by least squares on relative error (every point weighs the same within a set):
  1. gather (torch index_select) sweep -> gather terms;   2. scatter-add sweep -> scatter terms;
  3. SchNet interaction blocks (whole message-passing blocks: 5 matmuls, 24 element-wise ops, a gather and a
     scatter-add each, at PopTorch's op granularity) minus their fitted gather and scatter, jointly with the dense
     matmuls (each of the two sets weighing half) -> opCycles, elementwiseBytesPerCycle, matmulPeakShare,
     matmulHalfDim. Rows with availableMemoryProportion 0.1 are held out and only predicted.
"""
import argparse
import csv
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "kernels.csv")
HEADER = os.path.join(os.path.dirname(HERE), "CostFit.h")

TILES = 1472                           # GC200 (device/IpuSpec.h)
PEAK = {"fp32": 32.0, "fp16": 128.0}   # FLOP per cycle per tile on the AMP units (IPU-POD64 datasheet)
BOW_HZ = 1.85e9                        # the clock the matmul rates were measured at
MEMORY_BYTES = 1472 * 638976           # In-Processor-Memory per IPU (availableMemoryProportion's base)
GAUSSIANS = 50                         # SchNet's radial basis size in the benchmark (mpbench.py)


def load():
    with open(CSV, newline="") as f:
        return list(csv.DictReader(f))


def fit_relative(X, y, weights=None):
    """Least squares on (prediction - y) / y, optionally weighted per point; returns the coefficients."""
    w = 1.0 / y if weights is None else weights / y
    coef, *_ = np.linalg.lstsq(X * w[:, None], y * w, rcond=None)
    return coef


def gather_features(n_in, f, n_out):
    """index_select of n_out rows of an [n_in, f] table: indices, table rows, the project's gatherRows bytes."""
    return n_out, n_in, n_out * (8 + 4 * f) + n_out * 4 * f


def scatter_features(n_in, f, n_out):
    """scatter-add of n_in rows of f features into n_out rows: the project's scatterSum bytes."""
    idx = n_in
    return idx, n_in * (4 * f + 8) + n_out * 4 * f


def matmul_terms(m, k, n, dtype):
    """(A, B): cycles at full peak, and that over h, so that cycles = A / share + B x halfDim / share."""
    flops = 2.0 * m * k * n
    a = flops / (TILES * PEAK[dtype])
    h = m * k * n / (m * k + k * n + m * n)
    return a, a / h, flops, 4.0 * (m * k + k * n + m * n)


def schnet_block(nodes, f, edges):
    """PyG's SchNet InteractionBlock as mpbench.py runs it (FastShiftedSoftplus: 7 ops), forward only, fp32.

    Returns the element-wise op count and bytes, the matmuls (m, k, n), and the gather and scatter sizes."""
    ew = []  # (elements read and written) per element-wise op
    ew += [2 * edges] * 4                          # cutoff: mul, cos, add, mul on the E distances
    ew += [2 * edges * f + f]                      # bias of Linear(50, F)
    ew += [2 * edges * f] * 7                      # FastShiftedSoftplus on E x F
    ew += [2 * edges * f + f]                      # bias of Linear(F, F)
    ew += [2 * edges * f + edges]                  # W * C
    ew += [3 * edges * f]                          # message x_j * W
    ew += [2 * nodes * f + f]                      # bias of lin2
    ew += [2 * nodes * f] * 7                      # FastShiftedSoftplus on N x F
    ew += [2 * nodes * f + f]                      # bias of lin
    matmuls = [(edges, GAUSSIANS, f), (edges, f, f), (nodes, f, f), (nodes, f, f), (nodes, f, f)]
    return len(ew), 4.0 * sum(ew), matmuls


class Fit:
    def __init__(self, rows):
        self.rows = rows
        self.sets = {}

    def pick(self, op, amp="default"):
        return [r for r in self.rows if r["op"] == op and r["amp"] == amp]

    @staticmethod
    def sizes(rs):
        return (np.array([float(r[c]) for r in rs]) for c in ("num_inputs", "num_features", "num_outputs"))

    def exchange(self, op, features):
        rs = self.pick(op)
        n_in, f, n_out = self.sizes(rs)
        y = np.array([float(r["value"]) for r in rs])
        cols = features(n_in, f, n_out)
        return fit_relative(np.c_[(np.ones_like(y),) + cols], y)

    def run(self):
        self.gather = self.exchange("gather", gather_features)
        self.scatter = self.exchange("scatter_add", scatter_features)
        blocks = self.pick("schnet_interaction_block")
        mms = self.pick("matmul")
        X, y, w = [], [], []
        for r in blocks:
            n, f, e = (float(r[c]) for c in ("num_inputs", "num_features", "num_outputs"))
            ops, ew_bytes, matmuls = schnet_block(n, f, e)
            a = sum(matmul_terms(*mm, "fp32")[0] for mm in matmuls)
            b = sum(matmul_terms(*mm, "fp32")[1] for mm in matmuls)
            rest = float(r["value"]) - self.exchange_cycles(n, f, e)
            X.append([ops + len(matmuls), ew_bytes, a, b])
            y.append(rest)
            w.append(0.5 / len(blocks) * float(r["value"]) / rest)  # relative to the block's measured cycles
        for r in mms:
            a, b, flops, _ = matmul_terms(float(r["m"]), float(r["k"]), float(r["n"]), r["dtype"])
            X.append([1, 0, a, b])
            y.append(self.matmul_measured(r))
            w.append(0.5 / len(mms))
        X, y, w = np.array(X), np.array(y), np.array(w)
        # cycles = ops x opCycles + bytes / bytesPerCycle + (A + B x halfDim) / share: linear for a given halfDim,
        # which must not be negative (efficiency never above its large-matmul value); scanned on a fine grid.
        best = None
        for half in np.concatenate([[0.0], np.geomspace(0.25, 4096, 400)]):
            Xh = np.c_[X[:, 0], X[:, 1], X[:, 2] + half * X[:, 3]]
            coef = fit_relative(Xh, y, w)
            err = float(np.sum(((Xh @ coef - y) * w / y) ** 2))
            if best is None or err < best[0]:
                best = (err, half, coef)
        _, self.half_dim, (self.op_cycles, per_byte, inv_share) = best
        self.ew_bytes_per_cycle = 1.0 / per_byte
        self.share = 1.0 / inv_share

    @staticmethod
    def matmul_measured(r):
        """Cycles of one dense matmul from the notebook's non-zero TFLOP/s (dense FLOPs x density over time)."""
        flops = 2.0 * float(r["m"]) * float(r["k"]) * float(r["n"])
        seconds = flops * float(r["density"]) / (float(r["value"]) * 1e12)
        return seconds * BOW_HZ

    @staticmethod
    def linear(terms, features):
        return terms[0] + sum(t * x for t, x in zip(terms[1:], features))

    def exchange_cycles(self, nodes, f, edges):
        """A message-passing block's gather (x_j: edges rows of the nodes) and scatter-add (edges into nodes)."""
        return (self.linear(self.gather, gather_features(nodes, f, edges)) +
                self.linear(self.scatter, scatter_features(edges, f, nodes)))

    def matmul_cycles(self, m, k, n, dtype, amp):
        a, _, _, nbytes = matmul_terms(m, k, n, dtype)
        h = m * k * n / (m * k + k * n + m * n)
        eff = self.share * h / (h + self.half_dim)
        amp_bytes = amp * MEMORY_BYTES
        if nbytes > amp_bytes:
            eff *= amp_bytes / nbytes  # serial passes beyond availableMemoryProportion (device/CostModel.cpp)
        return self.op_cycles + a / eff

    def predict(self, r):
        amp = 0.1 if r["amp"] == "0.1" else 0.6
        if r["op"] == "matmul":
            return self.matmul_cycles(float(r["m"]), float(r["k"]), float(r["n"]), r["dtype"], amp)
        n_in, f, n_out = (float(r[c]) for c in ("num_inputs", "num_features", "num_outputs"))
        if r["op"] == "gather":
            return self.linear(self.gather, gather_features(n_in, f, n_out))
        if r["op"] == "scatter_add":
            return self.linear(self.scatter, scatter_features(n_in, f, n_out))
        ops, ew_bytes, matmuls = schnet_block(n_in, f, n_out)
        return (ops * self.op_cycles + ew_bytes / self.ew_bytes_per_cycle + self.exchange_cycles(n_in, f, n_out) +
                sum(self.matmul_cycles(*mm, "fp32", amp) for mm in matmuls))

    def measured(self, r):
        return self.matmul_measured(r) if r["op"] == "matmul" else float(r["value"])


def summary(fit, rows):
    """Per set: points, rms of relative error, median |log ratio|, and the extreme ratios fitted / measured."""
    out = []
    for op in ("gather", "scatter_add", "schnet_interaction_block", "matmul"):
        for amp in ("default", "0.1"):
            rs = [r for r in rows if r["op"] == op and r["amp"] == amp]
            if not rs:
                continue
            ratio = np.array([fit.predict(r) / fit.measured(r) for r in rs])
            out.append((op, amp, len(rs), float(np.sqrt(np.mean((ratio - 1) ** 2))),
                        float(np.median(np.abs(np.log(ratio)))), float(ratio.min()), float(ratio.max())))
    return out


def header(fit, rows, table):
    g, s = fit.gather, fit.scatter
    fitted = sum(n for op, amp, n, *_ in table if amp == "default")
    lines = [
        "// CostFit: the IPU cost model's per-op terms, fitted to published kernel-level measurements of Graphcore",
        "// IPUs (device/costfit/kernels.csv; sources in device/costfit/README.md). Written by device/costfit/fit.py;",
        "// do not edit by hand (tests/device/CostFit_test.cpp checks that the script reproduces it). Cycles are",
        "// GC200 tile cycles: a Mk2 IPU (1.33 GHz) and a Bow IPU (1.85 GHz) run the same cycles, at their clocks.",
        "#pragma once",
        "",
        "namespace gnn::costfit {",
        "",
        "// Gathers (index_select: indices = rows gathered, table rows, bytes as gatherRows counts them).",
        f"inline constexpr double kGatherCycles = {g[0]:.4g};",
        f"inline constexpr double kGatherCyclesPerIndex = {g[1]:.4g};",
        f"inline constexpr double kGatherCyclesPerTableRow = {g[2]:.4g};",
        f"inline constexpr double kGatherBytesPerCycle = {1 / g[3]:.4g};",
        "// Scatter-adds (indices = rows scattered; bytes as scatterSum counts them, the target rows included).",
        f"inline constexpr double kScatterCycles = {s[0]:.4g};",
        f"inline constexpr double kScatterCyclesPerIndex = {s[1]:.4g};",
        f"inline constexpr double kScatterBytesPerCycle = {1 / s[2]:.4g};",
        "// Every other op: a fixed cost (PopTorch's op granularity), element-wise bytes, and matmul efficiency",
        "// eff(h) = kMatmulPeakShare x h / (h + kMatmulHalfDim), h = MKN / (MK + KN + MN), of the AMP units' peak.",
        f"inline constexpr double kOpCycles = {fit.op_cycles:.4g};",
        f"inline constexpr double kElementwiseBytesPerCycle = {fit.ew_bytes_per_cycle:.4g};",
        f"inline constexpr double kMatmulPeakShare = {fit.share:.4g};",
        f"inline constexpr double kMatmulHalfDim = {fit.half_dim:.4g};",
        "",
        f"// The fit: {fitted} points; fitted / measured per set (rms of relative error, median |log ratio|, range).",
    ]
    for op, amp, n, rms, med, lo, hi in table:
        held = "held out, " if amp != "default" else ""
        lines.append(f"//   {op} (availableMemoryProportion {amp}, {held}{n} points): "
                     f"rms {rms:.2f}, median {med:.2f}, {lo:.2f}..{hi:.2f}")
    lines += ["", "}  // namespace gnn::costfit", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", action="store_true", help="print every point's measured and fitted cycles")
    ap.add_argument("--check", action="store_true", help="compare with the committed CostFit.h; write nothing")
    a = ap.parse_args()
    rows = load()
    fit = Fit(rows)
    fit.run()
    table = summary(fit, rows)
    text = header(fit, rows, table)
    if a.check:
        with open(HEADER) as f:
            same = f.read() == text
        print("device/CostFit.h " + ("matches" if same else "differs from") + " the fit of device/costfit/kernels.csv")
        return 0 if same else 1
    print(f"gather:  {fit.gather[0]:.0f} cycles + {fit.gather[1]:.3f} per index + {fit.gather[2]:.3f} per table row"
          f" + bytes / {1 / fit.gather[3]:.0f} B/cycle")
    print(f"scatter: {fit.scatter[0]:.0f} cycles + {fit.scatter[1]:.3f} per index + bytes / {1 / fit.scatter[2]:.0f} B/cycle")
    print(f"other ops: {fit.op_cycles:.0f} cycles each; element-wise bytes / {fit.ew_bytes_per_cycle:.0f} B/cycle; "
          f"matmul efficiency {fit.share:.3f} x h / (h + {fit.half_dim:.1f})")
    print(f"{'set':26s} {'AMP':>7s} {'points':>6s} {'rms':>6s} {'median':>6s} {'min':>5s} {'max':>5s}  (fitted / measured)")
    for op, amp, n, rms, med, lo, hi in table:
        print(f"{op:26s} {amp:>7s} {n:6d} {rms:6.3f} {med:6.3f} {lo:5.2f} {hi:5.2f}")
    if a.points:
        print("op,amp,dtype,num_inputs,num_features,num_outputs,m,k,n,measured_cycles,fitted_cycles,ratio")
        for r in rows:
            m, p = fit.measured(r), fit.predict(r)
            sizes = ",".join(r[c] for c in ("num_inputs", "num_features", "num_outputs", "m", "k", "n"))
            print(f"{r['op']},{r['amp']},{r['dtype']},{sizes},{m:.0f},{p:.0f},{p / m:.3f}")
    with open(HEADER, "w") as f:
        f.write(text)
    print("wrote " + os.path.relpath(HEADER, os.getcwd()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
