#!/usr/bin/python3
"""Reference outputs, gradients and running statistics of PyTorch Geometric 2.3.1's normalisation layers (the norms
its BasicGNN models and MLP resolve by name), for the C++ tests of gnn/nn/norm (tests/gnn/nn/norm/NormTable_test.cpp).

Each case builds a PyG norm in float64 by name through PyG's normalization_resolver, draws every parameter and
buffer (running statistics within their domain), and runs it on 12 nodes of 4 features in 3 graphs of 5, 3 and 4
nodes (PyG's `batch` vector, or none for the cases that test the batch=None branch), once in training mode and
once in evaluation mode from the same state. It writes tests/reference/pyg/norm_<case>.json:

  {"norm": "BatchNorm", "name": "batch_norm", "kwargs": {...}, "in_channels": 4, "pyg": "2.3.1", "torch": "...",
   "x": [[...]], "batch": [...] | null, "num_graphs": 3,
   "state_dict": {"module.weight": {"shape": [4], "dtype": "float64", "values": [...]}, ...},
   "train": {"out": [[...]], "out_weights": [[...]], "grad": {"x": [[...]], "module.weight": [...], ...},
             "state_dict": {...after the step...}},
   "eval": {...the same without state_dict...}}

`grad` holds the gradients of sum(out * out_weights). Each case's seed is the CRC-32 of its name. The files are
generated once and committed: CI has no PyG.

Usage: PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 tests/reference/pyg_norms.py [--out DIR] [CASE ...]
"""
import argparse
import copy
import json
import os
import sys
import zlib

import torch
import torch_geometric
from torch_geometric.nn.resolver import normalization_resolver

IN_CHANNELS = 4
GRAPH_SIZES = [5, 3, 4]


def case(name, kwargs=None, batch=True):
    """A norm by PyG's resolver name with its keyword arguments; batch=False calls it without a batch vector."""
    return {"name": name, "kwargs": kwargs or {}, "batch": batch}


CASES = {
    "batch_norm": case("batch_norm"),
    "batch_norm_momentum_none": case("BatchNorm", {"momentum": None}),
    "batch_norm_no_affine_no_stats": case("batchnorm", {"affine": False, "track_running_stats": False}),
    "layer_norm": case("layer_norm"),
    "layer_norm_no_batch": case("layer_norm", batch=False),
    "layer_norm_node": case("LayerNorm", {"mode": "node"}),
    "layer_norm_no_affine": case("layer_norm", {"affine": False, "eps": 1e-3}),
    "graph_norm": case("graph_norm"),
    "graph_norm_no_batch": case("GraphNorm", {"eps": 1e-4}, batch=False),
    "instance_norm": case("instance_norm"),
    "instance_norm_affine_tracked": case("instance_norm", {"affine": True, "track_running_stats": True,
                                                           "momentum": 0.3}),
    "instance_norm_no_batch": case("InstanceNorm", {"affine": True}, batch=False),
    "instance_norm_no_batch_tracked": case("InstanceNorm", {"track_running_stats": True}, batch=False),
    # The resolver hands the width (4) to PairNorm's first parameter, its scale.
    "pair_norm": case("pair_norm"),
    "pair_norm_individually": case("PairNorm", {"scale_individually": True, "eps": 1e-3}),
    "pair_norm_no_batch": case("pairnorm", batch=False),
    "diff_group_norm": case("diff_group_norm", {"groups": 3}),
    "diff_group_norm_lamda": case("DiffGroupNorm", {"groups": 2, "lamda": 0.5, "momentum": 0.3}),
}


def tensor_entry(t):
    t = t.detach()
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "values": t.reshape(-1).tolist()}


def call(norm, x, batch):
    # BatchNorm and DiffGroupNorm take no batch vector (statistics span the batch).
    if isinstance(norm, (torch_geometric.nn.norm.BatchNorm, torch_geometric.nn.norm.DiffGroupNorm)):
        return norm(x)
    return norm(x, batch)


def run_mode(norm, x0, batch, training, gen_seed):
    norm.train(training)
    x = x0.clone().requires_grad_()
    out = call(norm, x, batch)
    g = torch.Generator().manual_seed(gen_seed)
    out_weights = torch.empty(out.shape, dtype=torch.float64).uniform_(-1, 1, generator=g)
    (out * out_weights).sum().backward()
    grad = {"x": x.grad.tolist()}
    for pname, p in norm.named_parameters():
        grad[pname] = p.grad.reshape(-1).tolist() if p.grad is not None else [0.0] * p.numel()
    result = {"out": out.detach().tolist(), "out_weights": out_weights.tolist(), "grad": grad}
    if training:
        result["state_dict"] = {k: tensor_entry(v) for k, v in norm.state_dict().items()}
    return result


def run_case(name, c):
    seed = zlib.crc32(name.encode())
    torch.manual_seed(seed)
    norm = normalization_resolver(c["name"], IN_CHANNELS, **c["kwargs"]).double()
    with torch.no_grad():
        for p in norm.parameters():
            p.copy_(torch.empty_like(p).uniform_(-1, 1))
        for bname, b in norm.named_buffers():
            if bname.endswith("running_mean"):
                b.copy_(torch.empty_like(b).uniform_(-1, 1))
            elif bname.endswith("running_var"):
                b.copy_(torch.empty_like(b).uniform_(0.5, 1.5))
            elif bname.endswith("num_batches_tracked"):
                b.fill_(3)
    batch = torch.cat([torch.full((n,), g, dtype=torch.long) for g, n in enumerate(GRAPH_SIZES)])
    # Graphs apart in mean and scale, so per-graph statistics differ from the batch's.
    x = torch.empty(len(batch), IN_CHANNELS, dtype=torch.float64).uniform_(-1, 1)
    x = x * (1 + batch.double().view(-1, 1)) + batch.double().view(-1, 1)
    data = {
        "norm": type(norm).__name__, "name": c["name"], "kwargs": c["kwargs"], "in_channels": IN_CHANNELS,
        "pyg": "2.3.1", "torch": torch.__version__, "x": x.tolist(),
        "batch": batch.tolist() if c["batch"] else None, "num_graphs": len(GRAPH_SIZES),
        "state_dict": {k: tensor_entry(v) for k, v in norm.state_dict().items()},
    }
    b = batch if c["batch"] else None
    data["train"] = run_mode(copy.deepcopy(norm), x, b, True, seed + 1)
    data["eval"] = run_mode(copy.deepcopy(norm), x, b, False, seed + 2)
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
    for name in sorted(a.cases or CASES):
        data = run_case(name, CASES[name])
        with open(os.path.join(a.out, "norm_" + name + ".json"), "w") as f:
            json.dump(data, f, indent=None, separators=(",", ":"))
            f.write("\n")
        print(f"norm_{name}: {data['norm']} {sorted(data['state_dict'])}", file=sys.stderr)


if __name__ == "__main__":
    main()
