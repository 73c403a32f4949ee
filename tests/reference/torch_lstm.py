#!/usr/bin/python3
"""Reference outputs and gradients of torch.nn.LSTM (one layer; what PyG 2.3.1's JumpingKnowledge('lstm') holds),
for the C++ tests of gnn/nn/LSTM (tests/gnn/nn/LSTM_test.cpp).

Each case builds torch.nn.LSTM in float64 with its keyword arguments, draws every parameter U(-0.8, 0.8) and an
input U(-1, 1), and runs it once. It writes tests/reference/pyg/lstm_<case>.json:

  {"input_size": 3, "hidden_size": 4, "kwargs": {...}, "torch": "...",
   "x": {"shape": [...], "values": [...]}, "state_dict": {"weight_ih_l0": {"shape": ..., "values": ...}, ...},
   "out": {...}, "out_weights": {...}, "grad": {"x": {...}, "weight_ih_l0": {...}, ...}}

`out` is torch's `output` (the first of the (output, (h_n, c_n)) pair); `grad` holds the gradients of
sum(out * out_weights). Values are flat, in C order. Each case's seed is the CRC-32 of its name. The files are
generated once and committed: CI has no torch.

Usage: /usr/bin/python3 tests/reference/torch_lstm.py [--out DIR] [CASE ...]
"""
import argparse
import json
import os
import sys
import zlib

import torch

# name -> (input_size, hidden_size, batch, steps, LSTM keyword arguments)
CASES = {
    "bidirectional_batch_first": (3, 4, 5, 3, {"bidirectional": True, "batch_first": True}),
    "unidirectional_steps_first": (2, 3, 4, 5, {}),
    "bidirectional_no_bias_two_steps": (4, 2, 3, 2, {"bias": False, "bidirectional": True, "batch_first": True}),
    "one_step": (3, 5, 4, 1, {"bidirectional": True, "batch_first": True}),
}


def entry(t):
    return {"shape": list(t.shape), "values": t.detach().reshape(-1).tolist()}


def run_case(name, out_dir):
    input_size, hidden_size, batch, steps, kwargs = CASES[name]
    torch.manual_seed(zlib.crc32(name.encode()))
    lstm = torch.nn.LSTM(input_size, hidden_size, **kwargs).double()
    with torch.no_grad():
        for p in lstm.parameters():
            p.uniform_(-0.8, 0.8)
    shape = (batch, steps, input_size) if kwargs.get("batch_first") else (steps, batch, input_size)
    x = (torch.rand(shape, dtype=torch.float64) * 2 - 1).requires_grad_()
    out, _ = lstm(x)
    w = torch.rand(out.shape, dtype=torch.float64) * 2 - 1
    (out * w).sum().backward()
    ref = {"input_size": input_size, "hidden_size": hidden_size, "kwargs": kwargs, "torch": torch.__version__,
           "x": entry(x), "state_dict": {k: entry(v) for k, v in lstm.state_dict().items()},
           "out": entry(out), "out_weights": entry(w),
           "grad": dict([("x", entry(x.grad))] + [(k, entry(p.grad)) for k, p in lstm.named_parameters()])}
    with open(os.path.join(out_dir, "lstm_" + name + ".json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))
        f.write("\n")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyg"))
    parser.add_argument("cases", nargs="*")
    a = parser.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print(f"torch {torch.__version__}", file=sys.stderr)
    for name in a.cases or sorted(CASES):
        out = run_case(name, a.out)
        print(f"{name}: out {tuple(out.shape)}", file=sys.stderr)


if __name__ == "__main__":
    main()
