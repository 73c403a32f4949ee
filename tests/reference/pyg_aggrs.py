#!/usr/bin/python3
"""Reference outputs and gradients of PyTorch Geometric 2.3.1's aggregation modules (torch_geometric.nn.aggr), for
the C++ aggregation table (tests/gnn/nn/aggr/AggregationTable_test.cpp).

Each case builds a PyG aggregation in float64 (learnt parameters drawn afresh), reduces 11 messages of 4 channels
into 5 destinations (destination 3 receives none, destination 1 one message; no two messages tie: PyG splits a
max's gradient among ties, the C++ reductions give it to the first) and writes tests/reference/pyg/aggr_<case>.json:

  {"aggr": {"class": "SoftmaxAggregation", "args": {...}}, "pyg": "2.3.1", "torch": "...", "x": [[...]],
   "index": [...], "dim_size": 5, "state_dict": {...}, "out": [[...]], "out_weights": [[...]],
   "grad": {"x": [[...]], "<parameter>": [...]}}

`aggr` is what aggregationFromPyG builds (PyG's aggr argument as JSON); `grad` holds the gradients of
sum(out * out_weights). Each case's seed is the CRC-32 of its name. Generated once and committed: CI has no PyG.

  PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 tests/reference/pyg_aggrs.py [--out DIR] [CASE ...]
"""
import argparse
import json
import os
import sys
import zlib

import torch
from torch_geometric.nn import aggr as A
from torch_geometric.nn import MLP

INDEX = [2, 0, 2, 4, 1, 0, 2, 4, 4, 0, 2]
SORTED_INDEX = [0, 0, 0, 1, 2, 2, 2, 2, 4, 4, 4]  # a batch vector (Set2Set, SortAggregation); graph 3 is empty
DIM_SIZE = 5
CHANNELS = 4


def spec(cls, **args):
    return {"class": cls, "args": args}


def mlp(channel_list, **kw):
    """The C++ spec and PyG's module of an MLP without norms."""
    return {"class": "MLP", "args": {"channel_list": channel_list, "norm": None, **kw}}


def mlp_module(channel_list, **kw):
    return MLP(channel_list=channel_list, norm=None, **kw)


# name -> (the C++ spec, the PyG module).
CASES = {
    "softmax": (spec("SoftmaxAggregation"), lambda: A.SoftmaxAggregation()),
    "softmax_t": (spec("SoftmaxAggregation", t=0.5), lambda: A.SoftmaxAggregation(t=0.5)),
    "softmax_learn": (spec("SoftmaxAggregation", t=2.0, learn=True), lambda: A.SoftmaxAggregation(t=2.0, learn=True)),
    "softmax_learn_channels": (spec("SoftmaxAggregation", learn=True, channels=CHANNELS),
                               lambda: A.SoftmaxAggregation(learn=True, channels=CHANNELS)),
    "softmax_semi_grad": (spec("SoftmaxAggregation", t=3.0, semi_grad=True),
                          lambda: A.SoftmaxAggregation(t=3.0, semi_grad=True)),
    "powermean": (spec("PowerMeanAggregation"), lambda: A.PowerMeanAggregation()),
    "powermean_p2": (spec("PowerMeanAggregation", p=2.0), lambda: A.PowerMeanAggregation(p=2.0)),
    "powermean_p_half": (spec("PowerMeanAggregation", p=0.5), lambda: A.PowerMeanAggregation(p=0.5)),
    "multi_cat": (["mean", "max", "std"], lambda: A.MultiAggregation(["mean", "max", "std"])),
    "multi_sum": (spec("MultiAggregation", aggrs=["sum", "min"], mode="sum"),
                  lambda: A.MultiAggregation(["sum", "min"], mode="sum")),
    "multi_mean_softmax": (spec("MultiAggregation", aggrs=["mean", "softmax"], mode="mean",
                                aggrs_kwargs=[{}, {"learn": True}]),
                           lambda: A.MultiAggregation(["mean", "softmax"], mode="mean",
                                                      aggrs_kwargs=[{}, {"learn": True}])),
    "multi_proj": (spec("MultiAggregation", aggrs=["mean", "max", "var"], mode="proj",
                        mode_kwargs={"in_channels": CHANNELS, "out_channels": 3}),
                   lambda: A.MultiAggregation(["mean", "max", "var"], mode="proj",
                                              mode_kwargs={"in_channels": CHANNELS, "out_channels": 3})),
    "attentional": (spec("AttentionalAggregation", gate_nn=mlp([CHANNELS, 1])),
                    lambda: A.AttentionalAggregation(mlp_module([CHANNELS, 1]))),
    "attentional_nn": (spec("AttentionalAggregation", gate_nn=mlp([CHANNELS, 6, 5], act="tanh"),
                            nn=mlp([CHANNELS, 5])),
                       lambda: A.AttentionalAggregation(mlp_module([CHANNELS, 6, 5], act="tanh"),
                                                        mlp_module([CHANNELS, 5]))),
    "set2set": (spec("Set2Set", in_channels=CHANNELS, processing_steps=3),
                lambda: A.Set2Set(CHANNELS, processing_steps=3)),
    "sort": (spec("SortAggregation", k=3), lambda: A.SortAggregation(k=3)),
    "sort_k5": (spec("SortAggregation", k=5), lambda: A.SortAggregation(k=5)),
    "lstm": (spec("LSTMAggregation", in_channels=CHANNELS, out_channels=3),
             lambda: A.LSTMAggregation(CHANNELS, 3)),
}
SORTED = {"set2set", "sort", "sort_k5", "lstm"}


def as_list(t):
    return t.detach().reshape(-1).tolist() if t.dim() != 2 else t.detach().tolist()


def run_case(name, cpp_spec, make):
    torch.manual_seed(zlib.crc32(name.encode()))
    module = make().double()
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.empty_like(p).uniform_(0.5, 1.5) if p.dim() == 1 else torch.empty_like(p).uniform_(-1, 1))
    module.eval()
    x = torch.empty(len(INDEX), CHANNELS, dtype=torch.float64).uniform_(-1, 1)
    x = x.abs() if "powermean" in name else x  # inside PowerMean's clamp (0, 100): the clamp is the same for both
    x.requires_grad_()
    index = torch.tensor(SORTED_INDEX if name in SORTED else INDEX)
    out = module(x, index, dim_size=DIM_SIZE)
    out_weights = torch.empty_like(out).uniform_(-1, 1)
    (out * out_weights).sum().backward()
    grad = {"x": as_list(x.grad)}
    for pname, p in module.named_parameters():
        grad[pname] = p.grad.reshape(-1).tolist() if p.grad is not None else [0.0] * p.numel()
    return {"aggr": cpp_spec, "pyg": "2.3.1", "torch": torch.__version__, "x": as_list(x),
            "index": index.tolist(),
            "dim_size": DIM_SIZE,
            "state_dict": {k: {"shape": list(v.shape), "values": v.reshape(-1).tolist()}
                           for k, v in module.state_dict().items()},
            "out": as_list(out), "out_weights": as_list(out_weights), "grad": grad}


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
        data = run_case(name, *CASES[name])
        with open(os.path.join(a.out, "aggr_" + name + ".json"), "w") as f:
            json.dump(data, f, indent=None, separators=(",", ":"))
            f.write("\n")
        print(f"aggr_{name}: out {len(data['out'])}x{len(data['out'][0])}", file=sys.stderr)


if __name__ == "__main__":
    main()
