#!/usr/bin/python3
"""Reference outputs and gradients of PyTorch Geometric 2.3.1's top-k pooling layers (TopKPooling, SAGPooling), for
tests/gnn/nn/pool/TopKPooling_test.cpp.

Each case pools a batch of two graphs (7 and 5 nodes, 4 features, edges within each graph, a duplicate edge and a
self-loop) in float64 from freshly drawn parameters and writes tests/reference/pyg/pool_<case>.json:

  {"pool": "TopKPooling", "args": {...}, "x": [[...]], "edge_index": [[...], [...]], "batch": [...],
   "state_dict": {...}, "out": {"x": [[...]], "edge_index": [[...], [...]], "batch": [...], "perm": [...],
   "score": [...]}, "out_weights": [[...]], "grad": {"x": [[...]], "<parameter>": [...]}}

`grad` holds the gradients of sum(out.x * out_weights). Seeds: the CRC-32 of each case's name. Generated once and
committed: CI has no PyG.

  PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 tests/reference/pyg_pools.py [--out DIR] [CASE ...]
"""
import argparse
import json
import os
import sys
import zlib

import torch
from torch_geometric.nn import GCNConv, SAGPooling, TopKPooling

EDGES = [(0, 1), (1, 0), (1, 2), (2, 3), (3, 1), (4, 5), (5, 6), (6, 4), (2, 6), (6, 2), (0, 1), (3, 3),
         (7, 8), (8, 9), (9, 7), (10, 11), (11, 10), (8, 11)]
BATCH = [0] * 7 + [1] * 5

CASES = {
    "topk": ("TopKPooling", {"in_channels": 4}, lambda: TopKPooling(4)),
    "topk_ratio_03_sigmoid_multiplier": ("TopKPooling", {"in_channels": 4, "ratio": 0.3, "multiplier": 2.0,
                                                         "nonlinearity": "sigmoid"},
                                         lambda: TopKPooling(4, ratio=0.3, multiplier=2.0, nonlinearity="sigmoid")),
    "topk_ratio_int": ("TopKPooling", {"in_channels": 4, "ratio": 3}, lambda: TopKPooling(4, ratio=3)),
    "sag": ("SAGPooling", {"in_channels": 4, "ratio": 0.6}, lambda: SAGPooling(4, ratio=0.6)),
    "sag_gcn": ("SAGPooling", {"in_channels": 4, "GNN": "GCNConv"}, lambda: SAGPooling(4, GNN=GCNConv)),
}


def as_list(t):
    return t.detach().tolist()


def run_case(name, cls_name, args, make):
    torch.manual_seed(zlib.crc32(name.encode()))
    pool = make().double()
    with torch.no_grad():
        for p in pool.parameters():
            p.copy_(torch.empty_like(p).uniform_(-1, 1))
    pool.eval()
    x = torch.empty(len(BATCH), 4, dtype=torch.float64).uniform_(-1, 1).requires_grad_()
    edge_index = torch.tensor(EDGES).t().contiguous()
    batch = torch.tensor(BATCH)
    out_x, out_ei, _, out_batch, perm, score = pool(x, edge_index, batch=batch)
    w = torch.empty_like(out_x).uniform_(-1, 1)
    (out_x * w).sum().backward()
    grad = {"x": as_list(x.grad)}
    for pname, p in pool.named_parameters():
        grad[pname] = p.grad.reshape(-1).tolist() if p.grad is not None else [0.0] * p.numel()
    return {"pool": cls_name, "args": args, "pyg": "2.3.1", "torch": torch.__version__, "x": as_list(x),
            "edge_index": edge_index.tolist(), "batch": BATCH,
            "state_dict": {k: {"shape": list(v.shape), "values": v.reshape(-1).tolist()}
                           for k, v in pool.state_dict().items()},
            "out": {"x": as_list(out_x), "edge_index": out_ei.tolist(), "batch": out_batch.tolist(),
                    "perm": perm.tolist(), "score": score.tolist()},
            "out_weights": as_list(w), "grad": grad}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyg"))
    parser.add_argument("cases", nargs="*")
    a = parser.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name in a.cases or sorted(CASES):
        data = run_case(name, *CASES[name])
        with open(os.path.join(a.out, "pool_" + name + ".json"), "w") as f:
            json.dump(data, f, separators=(",", ":"))
            f.write("\n")
        print(f"pool_{name}: kept {len(data['out']['perm'])}", file=sys.stderr)


if __name__ == "__main__":
    main()
