#!/usr/bin/python3
"""PyTorch Geometric 2.3.1's ready models (GCN, GraphSAGE, GIN, GAT, PNA, EdgeCNN) with varied arguments and
random weights, exported as a user exports them (scripts/export_pyg_model.py: a JSON spec and a torch.save'd
state_dict), with their outputs on one small graph, for the C++ tests of `predict --pyg-model` and BasicGNN.

Writes under tests/reference/pyg_models/:
  graph/raw/{edge,node-feat,num-node-list}.csv.gz   the graph in OGB's node-property raw layout (float32 features)
  <case>.json                                       {"class": ..., "args": {...}} (PyG's constructor arguments)
  <case>.pt                                         torch.save(model.state_dict()) in float32
  <case>.out.json                                   {"out": [[...]]}: the model in evaluation mode, computed in
                                                    float64 from the float32 weights and features
and layer lists (LAYER_CASES: {"layers": [...], "act": ...}, a module holding them as `layers`).
Each case's seed is the CRC-32 of its name. The files are generated once and committed (CI has no PyG).

Usage: PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 tests/reference/pyg_models.py [--out DIR] [CASE ...]
"""
import argparse
import gzip
import json
import os
import sys
import zlib

import torch
import torch_geometric
from torch_geometric.nn import models as pyg_models
from torch_geometric.utils import degree

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from export_pyg_model import export_pyg_model  # noqa: E402

NUM_NODES, IN = 40, 6
DEG = None  # filled in from the graph (PNA's in-degree histogram)

# name -> (class, constructor arguments). PNA's "deg" is filled in from the graph.
CASES = {
    "gcn": ("GCN", {"in_channels": IN, "hidden_channels": 8, "num_layers": 2, "out_channels": 3}),
    "gcn_jk_cat_batch_norm": ("GCN", {"in_channels": IN, "hidden_channels": 8, "num_layers": 3, "out_channels": 4,
                                      "norm": "batch_norm", "jk": "cat", "dropout": 0.5}),
    "gcn_jk_lstm": ("GCN", {"in_channels": IN, "hidden_channels": 8, "num_layers": 3, "out_channels": 3,
                            "jk": "lstm"}),
    "gcn_no_out_act_first_layer_norm": ("GCN", {"in_channels": IN, "hidden_channels": 5, "num_layers": 2,
                                                "act_first": True, "norm": "layer_norm", "act": "elu"}),
    "sage_mean": ("GraphSAGE", {"in_channels": IN, "hidden_channels": 8, "num_layers": 2, "out_channels": 3}),
    "sage_max_jk_max": ("GraphSAGE", {"in_channels": IN, "hidden_channels": 7, "num_layers": 3, "out_channels": 2,
                                      "aggr": "max", "jk": "max", "act": "leaky_relu",
                                      "act_kwargs": {"negative_slope": 0.1}}),
    "sage_jk_lstm_no_out_layer_norm": ("GraphSAGE", {"in_channels": IN, "hidden_channels": 5, "num_layers": 2,
                                                     "jk": "lstm", "norm": "layer_norm"}),  # hidden size 5
    "sage_sum_normalize_project": ("GraphSAGE", {"in_channels": IN, "hidden_channels": 8, "num_layers": 2,
                                                 "out_channels": 3, "aggr": "sum", "normalize": True,
                                                 "project": True}),
    "gin": ("GIN", {"in_channels": IN, "hidden_channels": 8, "num_layers": 3, "out_channels": 3}),
    "gin_batch_norm_train_eps_jk_last": ("GIN", {"in_channels": IN, "hidden_channels": 8, "num_layers": 2,
                                                 "out_channels": 3, "norm": "batch_norm", "train_eps": True,
                                                 "jk": "last"}),
    "gat": ("GAT", {"in_channels": IN, "hidden_channels": 8, "num_layers": 2, "out_channels": 3, "heads": 2}),
    "gat_elu_graph_norm": ("GAT", {"in_channels": IN, "hidden_channels": 12, "num_layers": 3, "out_channels": 3,
                                   "heads": 3, "act": "elu", "norm": "graph_norm", "negative_slope": 0.3}),
    "gat_jk_lstm": ("GAT", {"in_channels": IN, "hidden_channels": 6, "num_layers": 3, "out_channels": 3, "heads": 2,
                            "jk": "lstm"}),  # the LSTM's hidden size (3 * 6) // 2 = 9
    "gat_no_concat_no_loops": ("GAT", {"in_channels": IN, "hidden_channels": 6, "num_layers": 2, "heads": 2,
                                       "concat": False, "add_self_loops": False}),
    "gatv2": ("GAT", {"in_channels": IN, "hidden_channels": 8, "num_layers": 2, "out_channels": 3, "heads": 2,
                      "v2": True}),
    "gatv2_share_weights_jk_cat": ("GAT", {"in_channels": IN, "hidden_channels": 8, "num_layers": 2,
                                           "out_channels": 3, "heads": 4, "v2": True, "share_weights": True,
                                           "jk": "cat"}),
    "pna": ("PNA", {"in_channels": IN, "hidden_channels": 8, "num_layers": 2, "out_channels": 3,
                    "aggregators": ["mean", "min", "max", "std"],
                    "scalers": ["identity", "amplification", "attenuation"], "deg": "graph"}),
    "pna_towers_all": ("PNA", {"in_channels": IN, "hidden_channels": 8, "num_layers": 2, "out_channels": 4,
                               "aggregators": ["mean", "min", "max", "std", "var", "sum"],
                               "scalers": ["identity", "amplification", "attenuation", "linear", "inverse_linear"],
                               "deg": "graph", "towers": 2, "divide_input": True, "pre_layers": 2,
                               "post_layers": 2}),
    "edgecnn": ("EdgeCNN", {"in_channels": IN, "hidden_channels": 8, "num_layers": 2, "out_channels": 3}),
    "edgecnn_mean_instance_norm": ("EdgeCNN", {"in_channels": IN, "hidden_channels": 6, "num_layers": 3,
                                               "out_channels": 2, "aggr": "mean", "norm": "instance_norm"}),
}


# Layer lists (gnn's LayerList, predict's {"layers": [...], "act": ...}): name -> (layers as (class, args), act).
LAYER_CASES = {
    "layers_graph_cheb_appnp": ([("GraphConv", {"in_channels": IN, "out_channels": 8}),
                                 ("ChebConv", {"in_channels": 8, "out_channels": 8, "K": 3}),
                                 ("APPNP", {"K": 3, "alpha": 0.2})], "relu"),
    "layers_tag_gcn2_sg": ([("TAGConv", {"in_channels": IN, "out_channels": IN}),
                            ("GCN2Conv", {"channels": IN, "alpha": 0.1, "theta": 0.5, "layer": 1}),
                            ("SGConv", {"in_channels": IN, "out_channels": 3, "K": 2})], "elu"),
    "layers_transformer_gen_eg": ([("TransformerConv", {"in_channels": IN, "out_channels": 4, "heads": 2}),
                                   ("GENConv", {"in_channels": 8, "out_channels": 8}),
                                   ("EGConv", {"in_channels": 8, "out_channels": 4, "num_heads": 2,
                                               "num_bases": 2, "aggregators": ["symnorm", "max"]})], "tanh"),
}


class LayerList(torch.nn.Module):
    """What predict's layer lists describe: the layers one after the other, act between them; GCN2Conv and FAConv
    take the model's input as x_0."""

    def __init__(self, layers, act):
        super().__init__()
        self.layers = torch.nn.ModuleList(getattr(torch_geometric.nn, c)(**a) for c, a in layers)
        self.act = {"relu": torch.relu, "elu": torch.nn.functional.elu, "tanh": torch.tanh}[act]

    def forward(self, x, edge_index):
        x0 = x
        for i, layer in enumerate(self.layers):
            x = layer(x, x0, edge_index) if type(layer).__name__ in ("GCN2Conv", "FAConv") else layer(x, edge_index)
            if i + 1 < len(self.layers):
                x = self.act(x)
        return x


def run_layer_case(name, layers, act, x, edge_index, out_dir):
    torch.manual_seed(zlib.crc32(name.encode()))
    model = LayerList(layers, act)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.empty_like(p).uniform_(-0.6, 0.6))
        for bname, b in model.named_buffers():
            if bname.endswith("running_var"):
                b.copy_(torch.empty_like(b).uniform_(0.5, 1.5))
            elif bname.endswith("running_mean"):
                b.copy_(torch.empty_like(b).uniform_(-0.5, 0.5))
    model.eval()
    spec = {"layers": [{"class": c, "args": a} for c, a in layers], "act": act}
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")
    torch.save(model.state_dict(), os.path.join(out_dir, name + ".pt"))
    with torch.no_grad():
        out = model.double()(x.double(), edge_index)
    with open(os.path.join(out_dir, name + ".out.json"), "w") as f:
        json.dump({"pyg": "2.3.1", "torch": torch.__version__, "out": out.tolist()}, f, separators=(",", ":"))
        f.write("\n")
    return out


def make_graph():
    g = torch.Generator().manual_seed(7)
    # A random directed graph with duplicate edges, self-loops (one node with two) and isolated nodes.
    src = torch.randint(0, NUM_NODES - 3, (160,), generator=g)
    dst = torch.randint(0, NUM_NODES - 3, (160,), generator=g)
    src = torch.cat([src, torch.tensor([4, 4, 9, 9, 9])])
    dst = torch.cat([dst, torch.tensor([5, 5, 9, 9, 11])])
    edge_index = torch.stack([src, dst])
    x = (torch.rand(NUM_NODES, IN, generator=g) * 2 - 1).float()
    return x, edge_index


def write_graph(out_dir, x, edge_index):
    raw = os.path.join(out_dir, "graph", "raw")
    os.makedirs(raw, exist_ok=True)
    with gzip.open(os.path.join(raw, "edge.csv.gz"), "wt") as f:
        for s, d in edge_index.t().tolist():
            f.write(f"{s},{d}\n")
    with gzip.open(os.path.join(raw, "node-feat.csv.gz"), "wt") as f:
        for row in x.tolist():
            f.write(",".join(repr(v) for v in row) + "\n")  # float32 values, exactly (repr of their doubles)
    with gzip.open(os.path.join(raw, "num-node-list.csv.gz"), "wt") as f:
        f.write(f"{NUM_NODES}\n")


def run_case(name, cls_name, args, x, edge_index, out_dir):
    torch.manual_seed(zlib.crc32(name.encode()))
    args = dict(args)
    if args.get("deg") == "graph":
        d = degree(edge_index[1], NUM_NODES, dtype=torch.long)
        args["deg"] = torch.bincount(d).tolist()
    kwargs = dict(args)
    if "deg" in kwargs:
        kwargs["deg"] = torch.tensor(kwargs["deg"])
    model = getattr(pyg_models, cls_name)(**kwargs)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            p.copy_(torch.empty_like(p).uniform_(-0.6, 0.6))
        for bname, b in model.named_buffers():
            if bname.endswith("running_var"):
                b.copy_(torch.empty_like(b).uniform_(0.5, 1.5))
            elif bname.endswith("running_mean"):
                b.copy_(torch.empty_like(b).uniform_(-0.5, 0.5))
            elif bname.endswith("num_batches_tracked"):
                b.fill_(7)
    model.eval()
    export_pyg_model(model, args, os.path.join(out_dir, name + ".json"), os.path.join(out_dir, name + ".pt"))
    with torch.no_grad():
        out = model.double()(x.double(), edge_index)
    with open(os.path.join(out_dir, name + ".out.json"), "w") as f:
        json.dump({"pyg": "2.3.1", "torch": torch.__version__, "out": out.tolist()}, f, separators=(",", ":"))
        f.write("\n")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyg_models"))
    parser.add_argument("cases", nargs="*")
    a = parser.parse_args()
    os.makedirs(a.out, exist_ok=True)
    x, edge_index = make_graph()
    write_graph(a.out, x, edge_index)
    print(f"PyG {torch_geometric.__version__} (tag 2.3.1), torch {torch.__version__}", file=sys.stderr)
    for name in a.cases or sorted({**CASES, **LAYER_CASES}):
        if name in LAYER_CASES:
            out = run_layer_case(name, *LAYER_CASES[name], x, edge_index, a.out)
            print(f"{name}: layers out {tuple(out.shape)}", file=sys.stderr)
            continue
        cls_name, args = CASES[name]
        out = run_case(name, cls_name, args, x, edge_index, a.out)
        print(f"{name}: {cls_name} out {tuple(out.shape)}", file=sys.stderr)


if __name__ == "__main__":
    main()
