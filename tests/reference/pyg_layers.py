#!/usr/bin/python3
"""Reference outputs and gradients of PyTorch Geometric 2.3.1's layers, for the C++ layer table (tests/gnn/nn).

Each case builds a PyG layer in float64 from a seeded state_dict, runs it on a small graph that has what a
layer must get right (duplicate edges, a node with one self-loop, a node with two, an isolated node), and
writes one JSON file tests/reference/pyg/<case>.json:

  {"layer": "GCNConv", "pyg": "2.3.1", "torch": "...", "args": {...}, "num_nodes": N,
   "edge_index": [[sources], [targets]], "x": [[...]], "state_dict": {"lin.weight": {"shape": [...],
   "values": [...]}, ...}, "out": [[...]], "out_weights": [[...]],
   "grad": {"x": [[...]], "lin.weight": [...], ...}}

`grad` holds the gradients of sum(out * out_weights) (out_weights seeded), so a test checks the backward of
every input and parameter against PyG's autograd. The files are generated once and committed: CI has no PyG.

Usage (Debian's python3-torch, PyG 2.3.1's source on the path, e.g. `git archive 2.3.1 torch_geometric` of
pyg-team/pytorch_geometric; PyG also imports scipy, tqdm, jinja2, psutil, requests, pyparsing):
  PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 tests/reference/pyg_layers.py [OUT_DIR]
"""
import json
import os
import sys

import torch
import torch_geometric
from torch_geometric.nn import GCNConv

# The graph: 6 nodes; 0 -> 1 twice (a duplicate), node 2 has one self-loop, node 3 two, node 5 is isolated.
EDGES = [(0, 1), (0, 1), (1, 0), (1, 2), (2, 2), (2, 3), (3, 3), (3, 3), (3, 4), (4, 0), (4, 3), (1, 4)]
NUM_NODES = 6

# name -> (class, constructor kwargs, input channels). Each new layer joins with one line.
CASES = {
    "gcn_conv": (GCNConv, {"in_channels": 4, "out_channels": 3}, 4),
    "gcn_conv_no_self_loops": (GCNConv, {"in_channels": 4, "out_channels": 3, "add_self_loops": False}, 4),
    "gcn_conv_no_normalize_no_bias": (GCNConv, {"in_channels": 4, "out_channels": 3, "normalize": False,
                                                "bias": False}, 4),
}


def as_list(t):
    return t.detach().reshape(-1).tolist() if t.dim() != 2 else t.detach().tolist()


def run_case(name, cls, kwargs, in_channels, seed):
    torch.manual_seed(seed)
    layer = cls(**kwargs).double()
    # Every parameter drawn afresh (a zero bias would not test the bias).
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.empty_like(p).uniform_(-1, 1))
    edge_index = torch.tensor(EDGES, dtype=torch.long).t().contiguous()
    x = torch.empty(NUM_NODES, in_channels, dtype=torch.float64).uniform_(-1, 1).requires_grad_()
    out = layer(x, edge_index)
    out_weights = torch.empty_like(out).uniform_(-1, 1)
    (out * out_weights).sum().backward()
    grad = {"x": as_list(x.grad)}
    for pname, p in layer.named_parameters():
        grad[pname] = p.grad.reshape(-1).tolist()
    return {
        "layer": cls.__name__, "pyg": "2.3.1", "torch": torch.__version__, "args": kwargs,
        "num_nodes": NUM_NODES, "edge_index": edge_index.tolist(), "x": as_list(x),
        "state_dict": {k: {"shape": list(v.shape), "values": v.reshape(-1).tolist()}
                       for k, v in layer.state_dict().items()},
        "out": as_list(out), "out_weights": as_list(out_weights), "grad": grad,
    }


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "pyg")
    os.makedirs(out_dir, exist_ok=True)
    print(f"PyG {torch_geometric.__version__} (the 2.3.1 tag reports 2.3.0), torch {torch.__version__}",
          file=sys.stderr)
    for seed, (name, (cls, kwargs, in_channels)) in enumerate(sorted(CASES.items())):
        data = run_case(name, cls, kwargs, in_channels, seed)
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump(data, f, indent=None, separators=(",", ":"))
            f.write("\n")
        print(f"{name}: out {len(data['out'])}x{len(data['out'][0])}", file=sys.stderr)


if __name__ == "__main__":
    main()
