#!/usr/bin/python3
"""Reference outputs and gradients of PyTorch Geometric 2.3.1's HGTConv, for tests/gnn/nn/conv/HGTConv_test.cpp.

pyg_layers.py's conventions on a heterogeneous graph: each case builds HGTConv in float64 from a seeded
state_dict (every parameter uniform in [-1, 1]), runs it on a small graph of three node types and four relations
that has what the layer must get right (node types of different widths, a relation between two types and one
within a type, duplicate edges, a self-loop, a node no edge reaches, a type no relation reaches: PyG's None), and
writes tests/reference/pyg/<case>.json:

  {"layer": "HGTConv", "pyg": "2.3.1", "torch": "...", "args": {...}, "num_nodes": {"paper": 5, ...},
   "edge_index": [{"type": ["author", "writes", "paper"], "edge_index": [[sources], [targets]]}, ...],
   "x": {"paper": [[...]], ...}, "state_dict": {"k_lin.paper.weight": {"shape": [...], "values": [...]}, ...},
   "out": {"paper": [[...]], ...}, "out_none": ["field"], "out_weights": {"paper": [[...]], ...},
   "grad": {"x": {"paper": [[...]], ...}, "k_lin.paper.weight": [...], ...}}

`args` are HGTConv's keyword arguments (metadata as [node types, [[src, rel, dst], ...]]); `edge_index` lists the
relations given to forward, in the order given; `out` holds the types PyG gives a tensor, `out_none` those it gives
None. `grad` holds the gradients of the sum over types of sum(out * out_weights) (out_weights seeded) for every
node type's x and every parameter (zeros where PyG has none: a type's a_lin when no relation reaches it). Each case's
seed is the CRC-32 of its name. The files are generated once and committed: CI has no PyG.

Usage (Debian's python3-torch, PyG 2.3.1's source on the path, as for pyg_layers.py):
  PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 tests/reference/pyg_hgt.py [--out DIR] [CASE ...]
"""
import argparse
import json
import os
import sys
import zlib

import torch
import torch_geometric
from torch_geometric.nn import HGTConv

NODE_TYPES = ["paper", "author", "field"]
NUM_NODES = {"paper": 5, "author": 5, "field": 3}
WRITES = ("author", "writes", "paper")
CITES = ("paper", "cites", "paper")
REV_WRITES = ("paper", "rev_writes", "author")
TOPIC_OF = ("field", "topic_of", "paper")
# Author 0 writes paper 0 twice (a duplicate edge); author 4 writes nothing and, through rev_writes, receives
# nothing; paper 1 cites itself; paper 4 receives no edge of any relation; fields only send (no relation reaches
# them: PyG's None).
EDGES = {
    WRITES: [(0, 0), (0, 0), (1, 0), (1, 2), (2, 3), (3, 3), (3, 1)],
    CITES: [(0, 1), (1, 1), (2, 0), (3, 1), (0, 2), (2, 3)],
    REV_WRITES: [(0, 0), (0, 0), (0, 1), (2, 1), (3, 2), (3, 3), (1, 3)],
    TOPIC_OF: [(0, 0), (1, 2), (2, 2), (1, 1), (0, 3)],
}
ALL = [WRITES, CITES, REV_WRITES, TOPIC_OF]
WIDTHS = {"paper": 4, "author": 3, "field": 2}


def case(args, relations=ALL, given=None, widths=None):
    """args: HGTConv's keyword arguments but metadata (every case's node types and `relations`); given: the
    relations passed to forward, in that order (default: `relations`); widths: x's width per type (default: the
    int in_channels for every type, or the dict)."""
    in_channels = args["in_channels"]
    widths = widths or (dict(in_channels) if isinstance(in_channels, dict) else {t: in_channels for t in NODE_TYPES})
    full = {**args, "metadata": [NODE_TYPES, [list(r) for r in relations]]}
    return {"args": full, "given": given or relations, "widths": widths}


CASES = {
    # One head, sum: widths differ (paper's 4 = out_channels: its skip mixes; author's and field's do not).
    "hgt_conv": case({"in_channels": WIDTHS, "out_channels": 4}),
    "hgt_conv_heads2": case({"in_channels": WIDTHS, "out_channels": 4, "heads": 2}),
    "hgt_conv_heads2_mean": case({"in_channels": WIDTHS, "out_channels": 6, "heads": 2, "group": "mean"}),
    "hgt_conv_heads2_max": case({"in_channels": WIDTHS, "out_channels": 4, "heads": 2, "group": "max"}),
    "hgt_conv_min": case({"in_channels": 3, "out_channels": 3, "group": "min"}),
    # One width for every type, given as an int; three heads.
    "hgt_conv_int_in_heads3": case({"in_channels": 3, "out_channels": 6, "heads": 3}),
    # Relations given in another order than the metadata's, and not all of them: authors get None too.
    "hgt_conv_subset": case({"in_channels": WIDTHS, "out_channels": 4, "heads": 2}, given=[TOPIC_OF, WRITES]),
    # "cat" where each type receives one relation (with more, PyG's a_lin fails on the wider rows).
    "hgt_conv_cat": case({"in_channels": WIDTHS, "out_channels": 4, "heads": 2, "group": "cat"},
                         relations=[WRITES, REV_WRITES]),
}


def as_list(t):
    return t.detach().reshape(-1).tolist() if t.dim() != 2 else t.detach().tolist()


def run_case(name, c):
    torch.set_default_dtype(torch.float32)
    torch.manual_seed(zlib.crc32(name.encode()))
    layer = HGTConv(**c["args"]).double()
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.empty_like(p).uniform_(-1, 1))
    layer.eval()
    x = {t: torch.empty(NUM_NODES[t], c["widths"][t], dtype=torch.float64).uniform_(-1, 1).requires_grad_()
         for t in NODE_TYPES}
    edge_index = {r: torch.tensor(EDGES[r], dtype=torch.long).t().contiguous() for r in c["given"]}
    out = layer(x, edge_index)
    present = [t for t in out if out[t] is not None]
    out_weights = {t: torch.empty_like(out[t]).uniform_(-1, 1) for t in present}
    sum((out[t] * out_weights[t]).sum() for t in present).backward()
    grad = {"x": {t: as_list(x[t].grad) if x[t].grad is not None else [[0.0] * c["widths"][t]] * NUM_NODES[t]
                  for t in NODE_TYPES}}
    for pname, p in layer.named_parameters():
        grad[pname] = p.grad.reshape(-1).tolist() if p.grad is not None else [0.0] * p.numel()
    return {
        "layer": "HGTConv", "pyg": "2.3.1", "torch": torch.__version__, "args": c["args"], "num_nodes": NUM_NODES,
        "edge_index": [{"type": list(r), "edge_index": edge_index[r].tolist()} for r in c["given"]],
        "x": {t: as_list(x[t]) for t in NODE_TYPES},
        "state_dict": {k: {"shape": list(v.shape), "values": v.reshape(-1).tolist()}
                       for k, v in layer.state_dict().items()},
        "out": {t: as_list(out[t]) for t in present}, "out_none": [t for t in out if out[t] is None],
        "out_weights": {t: as_list(out_weights[t]) for t in present}, "grad": grad,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyg"))
    parser.add_argument("cases", nargs="*", help="cases to (re)make; default: all")
    a = parser.parse_args()
    unknown = [n for n in a.cases if n not in CASES]
    if unknown:
        sys.exit(f"unknown case(s) {unknown}; known: {sorted(CASES)}")
    os.makedirs(a.out, exist_ok=True)
    print(f"PyG {torch_geometric.__version__} (the 2.3.1 tag reports 2.3.0), torch {torch.__version__}",
          file=sys.stderr)
    for name in sorted(a.cases or CASES):
        data = run_case(name, CASES[name])
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            json.dump(data, f, indent=None, separators=(",", ":"))
            f.write("\n")
        shapes = ", ".join(f"{t} {len(v)}x{len(v[0])}" for t, v in data["out"].items())
        print(f"{name}: out {shapes}; None: {data['out_none']}", file=sys.stderr)


if __name__ == "__main__":
    main()
