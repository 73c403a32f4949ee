#!/usr/bin/env python3
"""One training step (forward, sum of squared outputs, backward) of each of PyTorch Geometric 2.3.1's layers on a
batch of N nodes and E random directed edges with C-wide features: the reference bench_layer_steps is measured
against (bench/layers_vs_pyg.py). The same layers and arguments as bench/layer_steps.cpp.

  PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 bench/reference/pyg_layer_steps.py --nodes 10000 --edges 100000

Prints one JSON object: per layer the median step in ms over --reps steps after 3 warm-up steps.
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch  # noqa: E402
from torch_geometric.nn import (GATConv, GATv2Conv, GCNConv, GINConv, EdgeConv, PNAConv, SAGEConv)  # noqa: E402
from torch_geometric.nn import (APPNP, ChebConv, ClusterGCNConv, FAConv, FiLMConv, GatedGraphConv,  # noqa: E402
                                GCN2Conv, GINEConv, GraphConv, LEConv, MFConv, NNConv, ResGatedGraphConv, SGConv,
                                TAGConv, TransformerConv, GENConv, GeneralConv, EGConv)
from torch_geometric.nn import FastRGCNConv, RGATConv, RGCNConv  # noqa: E402
from torch_geometric.nn.models import MLP  # noqa: E402
from torch_geometric.utils import degree  # noqa: E402


EDGE_DIM = 8  # the edge features' width for the layers that read them (bench/layer_steps.cpp's kEdgeDim)
EDGE_LAYERS = {"GINEConv", "TransformerConv", "NNConv", "GENConv"}
INITIAL_LAYERS = {"GCN2Conv", "FAConv"}  # called with x_0 = x
RELATIONS = 8  # edge types of the relational layers, drawn uniformly (bench/layer_steps.cpp's kRelations)
RELATIONAL_LAYERS = {"RGCNConv", "FastRGCNConv", "RGATConv"}  # run when named in --layers ([E, in, out] copies)
LAYERS = ("GCNConv,SAGEConv,GINConv,GATConv,GATv2Conv,EdgeConv,PNAConv,GINEConv,GraphConv,SGConv,APPNP,TAGConv,"
          "LEConv,ClusterGCNConv,ResGatedGraphConv,ChebConv,GCN2Conv,GatedGraphConv,MFConv,FAConv,FiLMConv,"
          "TransformerConv,NNConv,GENConv,GeneralConv,EGConv")


def make(name, c, deg):
    if name == "GCNConv":
        return GCNConv(c, c)
    if name == "SAGEConv":
        return SAGEConv(c, c)
    if name == "GINConv":
        return GINConv(MLP([c, c, c]))
    if name == "GATConv":
        return GATConv(c, c // 8, heads=8)
    if name == "GATv2Conv":
        return GATv2Conv(c, c // 8, heads=8)
    if name == "EdgeConv":
        return EdgeConv(MLP([2 * c, c, c]))
    if name == "PNAConv":
        return PNAConv(c, c, aggregators=["mean", "min", "max", "std"],
                       scalers=["identity", "amplification", "attenuation"], deg=deg)
    others = {
        "GINEConv": lambda: GINEConv(MLP([c, c, c]), edge_dim=EDGE_DIM),
        "GraphConv": lambda: GraphConv(c, c),
        "SGConv": lambda: SGConv(c, c, K=2),
        "APPNP": lambda: APPNP(K=10, alpha=0.1),
        "TAGConv": lambda: TAGConv(c, c),
        "LEConv": lambda: LEConv(c, c),
        "ClusterGCNConv": lambda: ClusterGCNConv(c, c),
        "ResGatedGraphConv": lambda: ResGatedGraphConv(c, c),
        "ChebConv": lambda: ChebConv(c, c, K=3),
        "GCN2Conv": lambda: GCN2Conv(c, alpha=0.1),
        "GatedGraphConv": lambda: GatedGraphConv(c, num_layers=3),
        "MFConv": lambda: MFConv(c, c),
        "FAConv": lambda: FAConv(c),
        "FiLMConv": lambda: FiLMConv(c, c),
        "TransformerConv": lambda: TransformerConv(c, c // 8, heads=8, edge_dim=EDGE_DIM),
        "NNConv": lambda: NNConv(c, 4, MLP([EDGE_DIM, 32, 4 * c])),
        "GENConv": lambda: GENConv(c, c, edge_dim=EDGE_DIM),
        "GeneralConv": lambda: GeneralConv(c, c, heads=2, attention=True),
        "EGConv": lambda: EGConv(c, c),
        "RGCNConv": lambda: RGCNConv(c, c, num_relations=RELATIONS),
        "FastRGCNConv": lambda: FastRGCNConv(c, c, num_relations=RELATIONS),
        "RGATConv": lambda: RGATConv(c, 8, num_relations=RELATIONS, heads=2),
    }
    if name in others:
        return others[name]()
    sys.exit(f"unknown layer {name}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=10000)
    p.add_argument("--edges", type=int, default=100000)
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--layers", default=LAYERS)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(1)
    edge_index = torch.randint(0, a.nodes, (2, a.edges), generator=g)
    deg = torch.bincount(degree(edge_index[1], a.nodes, dtype=torch.long))
    x0 = torch.rand(a.nodes, a.channels, generator=g) * 2 - 1
    e0 = torch.rand(a.edges, EDGE_DIM, generator=g) * 2 - 1
    edge_type = torch.randint(0, RELATIONS, (a.edges,), generator=torch.Generator().manual_seed(3))
    out = dict(benchmark="pyg_layer_steps", nodes=a.nodes, edges=a.edges, channels=a.channels, threads=a.threads,
               reps=a.reps, torch=torch.__version__, layers={})
    for name in a.layers.split(","):
        layer = make(name, a.channels, deg)
        ms = []
        for r in range(a.reps + 3):
            layer.zero_grad()
            x = x0.clone().requires_grad_()
            t = time.perf_counter()
            if name in EDGE_LAYERS:
                y = layer(x, edge_index, e0)
            elif name in RELATIONAL_LAYERS:
                y = layer(x, edge_index, edge_type)
            elif name in INITIAL_LAYERS:
                y = layer(x, x, edge_index)
            else:
                y = layer(x, edge_index)
            (y * y).sum().backward()
            if r >= 3:
                ms.append((time.perf_counter() - t) * 1e3)
        out["layers"][name] = dict(step_ms_median=statistics.median(ms))
        print(f"{name}: {statistics.median(ms):.2f} ms per step", file=sys.stderr)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
