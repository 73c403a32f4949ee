#!/usr/bin/python3
"""Reference outputs and gradients of PyTorch Geometric 2.3.1's layers, for the C++ layer table (tests/gnn/nn).

Each case builds a PyG layer in float64 from a seeded state_dict, runs it on a small graph that has what a
layer must get right (duplicate edges, a node with one self-loop, a node with two, an isolated node), and
writes one JSON file tests/reference/pyg/<case>.json:

  {"layer": "GCNConv", "pyg": "2.3.1", "torch": "...", "args": {...}, "num_nodes": N,
   "edge_index": [[sources], [targets]], "x": [[...]], "edge_attr": [[...]] (layers given edge_dim),
   "state_dict": {"lin.weight": {"shape": [...], "values": [...]}, ...}, "out": [[...]], "out_weights": [[...]],
   "grad": {"x": [[...]], "edge_attr": [[...]], "lin.weight": [...], ...}}

`args` are the constructor's keyword arguments as the C++ layer reads them (PyG's names; a module argument such
as GINConv's `nn` is described as JSON, e.g. {"class": "MLP", ...}). `grad` holds the gradients of
sum(out * out_weights) (out_weights seeded), so a test checks the backward of every input and parameter against
PyG's autograd. Each case's seed is the CRC-32 of its name, so adding a case leaves the others' files unchanged.
The files are generated once and committed: CI has no PyG.

Usage (Debian's python3-torch, PyG 2.3.1's source on the path, e.g. `git archive 2.3.1 torch_geometric` of
pyg-team/pytorch_geometric; PyG also imports scipy, tqdm, jinja2, psutil, requests, pyparsing):
  PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 tests/reference/pyg_layers.py [--out DIR] [CASE ...]
"""
import argparse
import json
import os
import sys
import zlib

import torch
import torch_geometric
from torch_geometric.nn import GCNConv

# The graph: 6 nodes; 0 -> 1 twice (a duplicate), node 2 has one self-loop, node 3 two, node 5 is isolated.
EDGES = [(0, 1), (0, 1), (1, 0), (1, 2), (2, 2), (2, 3), (3, 3), (3, 3), (3, 4), (4, 0), (4, 3), (1, 4)]
NUM_NODES = 6


def case(cls, args, in_channels, make=None, edge_dim=0, call=None):
    """One configuration of a layer.

    cls: PyG's class (its name is the layer's name in the table); args: the keyword arguments as JSON (what the
    C++ layer is built from); make: builds the PyG module when `cls(**args)` cannot (a module argument);
    edge_dim: width of the edge features passed as edge_attr (0: none); call: (layer, x, edge_index, edge_attr)
    -> out when the layer is not called as layer(x, edge_index[, edge_attr]).
    """
    return {"cls": cls, "args": args, "in": in_channels, "make": make or (lambda: cls(**args)),
            "edge_dim": edge_dim, "call": call}


# name -> case. Each new layer joins with a line or two.
CASES = {
    "gcn_conv": case(GCNConv, {"in_channels": 4, "out_channels": 3}, 4),
    "gcn_conv_no_self_loops": case(GCNConv, {"in_channels": 4, "out_channels": 3, "add_self_loops": False}, 4),
    "gcn_conv_no_normalize_no_bias": case(GCNConv, {"in_channels": 4, "out_channels": 3, "normalize": False,
                                                    "bias": False}, 4),
}

# Seeds of the cases made before seeds came from names (their files are kept as they were).
LEGACY_SEEDS = {"gcn_conv": 0, "gcn_conv_no_normalize_no_bias": 1, "gcn_conv_no_self_loops": 2}


def as_list(t):
    return t.detach().reshape(-1).tolist() if t.dim() != 2 else t.detach().tolist()


def run_case(name, c):
    seed = LEGACY_SEEDS.get(name, zlib.crc32(name.encode()))
    torch.manual_seed(seed)
    layer = c["make"]().double()
    # Every parameter drawn afresh (a zero bias would not test the bias); buffers (running statistics) too,
    # within their domain.
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.empty_like(p).uniform_(-1, 1))
    layer.eval()
    edge_index = torch.tensor(EDGES, dtype=torch.long).t().contiguous()
    x = torch.empty(NUM_NODES, c["in"], dtype=torch.float64).uniform_(-1, 1).requires_grad_()
    inputs = [x, edge_index]
    edge_attr = None
    if c["edge_dim"]:
        edge_attr = torch.empty(edge_index.size(1), c["edge_dim"], dtype=torch.float64).uniform_(-1, 1)
        edge_attr.requires_grad_()
        inputs.append(edge_attr)
    out = c["call"](layer, x, edge_index, edge_attr) if c["call"] else layer(*inputs)
    out_weights = torch.empty_like(out).uniform_(-1, 1)
    (out * out_weights).sum().backward()
    grad = {"x": as_list(x.grad)}
    if edge_attr is not None:
        grad["edge_attr"] = as_list(edge_attr.grad)
    for pname, p in layer.named_parameters():
        grad[pname] = p.grad.reshape(-1).tolist() if p.grad is not None else [0.0] * p.numel()
    data = {
        "layer": c["cls"].__name__, "pyg": "2.3.1", "torch": torch.__version__, "args": c["args"],
        "num_nodes": NUM_NODES, "edge_index": edge_index.tolist(), "x": as_list(x),
    }
    if edge_attr is not None:
        data["edge_attr"] = as_list(edge_attr)
    data.update({
        "state_dict": {k: {"shape": list(v.shape), "values": v.reshape(-1).tolist()}
                       for k, v in layer.state_dict().items()},
        "out": as_list(out), "out_weights": as_list(out_weights), "grad": grad,
    })
    return data


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
        print(f"{name}: out {len(data['out'])}x{len(data['out'][0])}", file=sys.stderr)


if __name__ == "__main__":
    main()
