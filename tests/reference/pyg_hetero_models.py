#!/usr/bin/python3
"""PyTorch Geometric 2.3.1's heterogeneous layers and models, for the C++ tests of HeteroConv, to_hetero's models
(gnn/nn/models/HeteroBasicGNN.h) and `predict --pyg-model` on a heterogeneous dataset.

Writes under tests/reference/pyg_hetero/:
  hetero_conv_<case>.json   HeteroConv (SAGEConv, GraphConv, GCNConv, GATConv, GINConv per edge type; the GIN
                            case's types all 3 wide) in float64 from seeded
                            weights on a graph of three node types (a same-type relation, reverse relations):
                            {"args": {"convs": [{"edge_type", "class", "args"}], "aggr"}, "x": {type: rows},
                             "edge_index": [[[src, rel, dst], [[sources], [targets]]], ...] (edge_index_dict's
                             order), "state_dict": {key: {"shape", "values"}}, "out": {type: {"shape", "values"}},
                             "out_weights": {...}, "grad": {"x": {type: {...}}, "<param>": [...]}}; grad holds the
                            gradients of sum over types of sum(out * out_weights).
  to_hetero_<case>.json     to_hetero(GraphSAGE, GAT or GIN (...), metadata, aggr) on the same graph, float64:
                            {"model": {"class", "args"}, "aggr", "metadata": [node types, edge types], "x",
                             "edge_index", "state_dict", "out": {type: {"shape", "values"}}}
  predict/data/             a small heterogeneous dataset in OGB's heterogeneous raw layout (papers, authors,
                            institutions, each with features; cites, writes, affiliated_with)
  predict/sage.json         predict's spec: {"to_hetero": {"model": ..., "aggr": ...}, "to_undirected": true,
                            "target": "paper"}
  predict/sage.pt           torch.save(model.state_dict()) of to_hetero(GraphSAGE(-1, ...)) on the dataset after
                            T.ToUndirected() (float32)
  predict/sage.out.json     {"out": [[...]]}: the papers' outputs in evaluation mode, float64 from the float32
                            weights and features
  predict/hgt.json, .pt, .out.json    the same for HGT as PyG's examples/hetero/hgt_dblp.py builds it (predict's
                            "hgt" spec: a Linear and ReLU per type, HGTConv layers, a Linear on the target type)
  predict/rgcn.json, .pt, .out.json   the same for R-GCN on the typed graph (predict's "to_homogeneous" spec: a
                            HeteroDictLinear `input`, then RGCNConv `layers` with ReLU between them, on
                            HeteroData.to_homogeneous()'s edge_index and edge_type)
  predict/rgat.json, .pt, .out.json   the same with RGATConv `layers` (heads and bases, then within-relation)
  predict/gat.json, .pt, .out.json    the same for to_hetero(GAT(in_channels=(-1, -1), heads=2,
                                      add_self_loops=False))
  predict/gin.json, .pt, .out.json    the same for to_hetero(GIN(-1, ..., train_eps=True)) on predict/data_equal
                                      (the same graph, every type's features 4 wide)
Each case's seed is the CRC-32 of its name. The files are generated once and committed (CI has no PyG).

torch 1.13's fx (Debian's python3-torch) predates Python 3.11's code objects: to_hetero's tracing needs two of
its functions as later torch versions wrote them (fx_python311()), which change nothing else.

Usage: PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 tests/reference/pyg_hetero_models.py [--out DIR] [CASE ...]
"""
import argparse
import bisect
import dis
import gzip
import inspect
import json
import os
import sys
import types
import zlib

import torch
import torch_geometric
import torch_geometric.transforms as T
from torch_geometric.data import HeteroData
from torch_geometric.nn import GAT, GIN, MLP, GATConv, GINConv
from torch_geometric.nn import GCNConv, GraphConv, GraphSAGE, HeteroConv, HeteroDictLinear, RGATConv, RGCNConv, SAGEConv
from torch_geometric.nn import HGTConv, Linear, to_hetero


def fx_python311():
    """torch 2.x's _patch_function (code objects rebuilt with replace(), Python 3.11's fields kept) and
    Proxy.__iter__ (the calling instruction found by its offset: 3.11's instructions are not 2 bytes apart)."""
    import torch.fx._symbolic_trace as st
    from torch.fx.proxy import Proxy

    def _patch_function(fn, nargs):
        co = fn.__code__
        code = co.replace(co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0,
                          co_flags=co.co_flags & ~st.HAS_VARSTUFF)
        return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)

    def _iter(self):
        frame = inspect.currentframe().f_back
        insts = list(dis.get_instructions(frame.f_code))
        inst = insts[bisect.bisect_left([i.offset for i in insts], frame.f_lasti)]
        if inst.opname == "UNPACK_SEQUENCE":
            return (self[k] for k in range(inst.argval))
        return self.tracer.iter(self)

    st._patch_function = _patch_function
    Proxy.__iter__ = _iter


# The graph: papers (width 4), authors (3), institutions (2). Paper 4 cites nothing and is cited by nobody but gets
# authors; author 3 writes nothing; institution 2 has no author; duplicates in cites and writes, a self-citation.
NODES = {"paper": (6, 4), "author": (4, 3), "institution": (3, 2)}
EDGES = {
    ("paper", "cites", "paper"): [(0, 1), (0, 1), (1, 2), (2, 2), (3, 0), (5, 3), (1, 5)],
    ("author", "writes", "paper"): [(0, 0), (0, 1), (1, 1), (1, 4), (2, 3), (2, 3), (0, 5)],
    ("author", "affiliated_with", "institution"): [(0, 0), (1, 0), (2, 1)],
}


def reverse(edges):
    return {(d, "rev_" + r, s): [(b, a) for a, b in e] for (s, r, d), e in edges.items() if s != d}


# edge_index_dict's order for the layer cases: the relations, then their reverses.
ALL_EDGES = {**EDGES, **reverse(EDGES)}
WIDTH = {t: w for t, (_, w) in NODES.items()}


def sage(et, out, **kw):
    return {"edge_type": list(et), "class": "SAGEConv",
            "args": {"in_channels": [WIDTH[et[0]], WIDTH[et[2]]], "out_channels": out, **kw}}


def graph_conv(et, out, **kw):
    return {"edge_type": list(et), "class": "GraphConv",
            "args": {"in_channels": [WIDTH[et[0]], WIDTH[et[2]]], "out_channels": out, **kw}}


def gat(et, out, **kw):
    return {"edge_type": list(et), "class": "GATConv",
            "args": {"in_channels": [WIDTH[et[0]], WIDTH[et[2]]], "out_channels": out, "add_self_loops": False, **kw}}


def gin(et, channels, eps=None, train_eps=None, **mlp_kw):
    args = {"nn": {"class": "MLP", "args": {"channel_list": channels, **mlp_kw}}}
    if eps is not None:
        args["eps"] = eps
    if train_eps is not None:
        args["train_eps"] = train_eps
    return {"edge_type": list(et), "class": "GINConv", "args": args}


def sage_all(out=3, **kw):
    return [sage(et, out, **kw) for et in ALL_EDGES]


CITES, WRITES, AFF = list(EDGES)
REV_WRITES, REV_AFF = list(reverse(EDGES))

# name -> HeteroConv's arguments.
HETERO_CONV_CASES = {
    "hetero_conv_sum": {"convs": sage_all(), "aggr": "sum"},
    "hetero_conv_mean": {"convs": sage_all(), "aggr": "mean"},
    "hetero_conv_max": {"convs": sage_all(), "aggr": "max"},
    "hetero_conv_min": {"convs": sage_all(), "aggr": "min"},
    "hetero_conv_cat": {"convs": sage_all(), "aggr": "cat"},
    "hetero_conv_none": {"convs": sage_all(), "aggr": None},
    # Widths that differ per relation (cat puts them side by side), other SAGEConv options, GraphConv's bipartite
    # form, GCNConv on the same-type relation.
    "hetero_conv_cat_mixed": {"convs": [
        {"edge_type": list(CITES), "class": "GCNConv", "args": {"in_channels": 4, "out_channels": 2}},
        sage(WRITES, 5, aggr="max"),
        graph_conv(REV_WRITES, 3, aggr="mean"),
        sage(AFF, 4, project=True, normalize=True),
        graph_conv(REV_AFF, 2)], "aggr": "cat"},
    "hetero_conv_sum_mixed": {"convs": [
        sage(CITES, 3, aggr="sum", root_weight=False),
        graph_conv(WRITES, 3, aggr="max"),
        sage(REV_WRITES, 3, aggr="max", bias=False),
        graph_conv(AFF, 3, aggr="mean", bias=False),
        sage(REV_AFF, 3, project=True)], "aggr": "sum"},
    # Convolutions for two relations only: authors and institutions get no messages and are left out.
    "hetero_conv_partial": {"convs": [sage(CITES, 3), sage(WRITES, 3)], "aggr": "sum"},
    # GATConv's bipartite form: a lin_src and a lin_dst per relation between two types (no self-loops there, as
    # PyG's check_add_self_loops demands), self-loops on the same-type relation, heads concatenated or averaged.
    "hetero_conv_gat": {"convs": [
        {"edge_type": list(CITES), "class": "GATConv", "args": {"in_channels": 4, "out_channels": 2, "heads": 2}},
        gat(WRITES, 2, heads=2),
        gat(REV_WRITES, 4, heads=2, concat=False, negative_slope=0.1),
        gat(AFF, 4, bias=False),
        gat(REV_AFF, 2, heads=2)], "aggr": "sum"},
    # GINConv's bipartite form, nn((1 + eps) x_dst + sum x_src): every type 3 wide (HETERO_CONV_WIDTH).
    "hetero_conv_gin": {"convs": [
        gin(CITES, [3, 5, 4], train_eps=True),
        gin(WRITES, [3, 4, 4], norm=None, eps=0.3),
        gin(REV_WRITES, [3, 4], train_eps=True),
        gin(AFF, [3, 6, 4], act="tanh"),
        gin(REV_AFF, [3, 4, 4], train_eps=True)], "aggr": "mean"},
}
# Cases whose node types are all one width (GINConv adds x_dst to the sum of x_src).
HETERO_CONV_WIDTH = {"hetero_conv_gin": 3}

# name -> (GraphSAGE's arguments, to_hetero's aggr). No dropout: to_hetero traces F.dropout with the training
# flag of the moment (True), so PyG's transformed model would drop out in evaluation too.
TO_HETERO_CASES = {
    "to_hetero_sage": ({"in_channels": -1, "hidden_channels": 8, "num_layers": 2, "out_channels": 3}, "sum"),
    "to_hetero_sage_max_mean": ({"in_channels": -1, "hidden_channels": 6, "num_layers": 2, "out_channels": 4,
                                 "aggr": "max", "act": "elu"}, "mean"),
    "to_hetero_sage_jk_cat_batch_norm_max": ({"in_channels": -1, "hidden_channels": 5, "num_layers": 2,
                                              "out_channels": 3, "jk": "cat", "norm": "batch_norm"}, "max"),
    "to_hetero_sage_three_layers_min": ({"in_channels": -1, "hidden_channels": 4, "num_layers": 3,
                                         "out_channels": 2, "aggr": "mean", "root_weight": False}, "min"),
    "to_hetero_sage_jk_last_layer_norm_mul": ({"in_channels": -1, "hidden_channels": 5, "num_layers": 2,
                                               "out_channels": 3, "jk": "last", "norm": "layer_norm",
                                               "normalize": True}, "mul"),
    # GAT (two heads concatenated, the output layer's averaged): [-1, -1] gives every layer a lin_src and a lin_dst
    # per relation; -1 on types of one width shares one lin_src = lin_dst (BasicGNN's int in_channels).
    "to_hetero_gat": ({"in_channels": [-1, -1], "hidden_channels": 8, "num_layers": 2, "out_channels": 3,
                       "heads": 2, "add_self_loops": False}, "sum", "GAT"),
    "to_hetero_gat_shared_jk_cat_mean": ({"in_channels": -1, "hidden_channels": 6, "num_layers": 3,
                                          "out_channels": 2, "heads": 2, "add_self_loops": False, "jk": "cat",
                                          "negative_slope": 0.3}, "mean", "GAT", 3),
    # GIN (MLP([in, out, out]) per relation, trained eps) on types of one width.
    "to_hetero_gin": ({"in_channels": -1, "hidden_channels": 6, "num_layers": 2, "out_channels": 3,
                       "train_eps": True}, "sum", "GIN", 3),
    "to_hetero_gin_batch_norm_max": ({"in_channels": 3, "hidden_channels": 5, "num_layers": 3, "out_channels": 2,
                                      "norm": "batch_norm", "act": "elu"}, "max", "GIN", 3),
}


def make_inputs(seed, width=None):
    g = torch.Generator().manual_seed(seed)
    x = {t: (torch.rand(n, width or w, generator=g, dtype=torch.float64) * 2 - 1) for t, (n, w) in NODES.items()}
    edge_index = {et: torch.tensor(e, dtype=torch.long).t().contiguous() for et, e in ALL_EDGES.items()}
    return x, edge_index


def tensor_json(t):
    return {"shape": list(t.shape), "values": t.detach().reshape(-1).tolist()}


def build_conv(c):
    cls = {"SAGEConv": SAGEConv, "GraphConv": GraphConv, "GCNConv": GCNConv, "GATConv": GATConv,
           "GINConv": GINConv}[c["class"]]
    args = dict(c["args"])
    if "nn" in args:
        args["nn"] = MLP(**args["nn"]["args"])
    if isinstance(args.get("in_channels"), list):
        args["in_channels"] = tuple(args["in_channels"])
    return cls(**args)


def randomize(module, low=-1.0, high=1.0):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.empty_like(p).uniform_(low, high))
        for name, b in module.named_buffers():
            if name.endswith("running_var"):
                b.copy_(torch.empty_like(b).uniform_(0.5, 1.5))
            elif name.endswith("running_mean"):
                b.copy_(torch.empty_like(b).uniform_(-0.5, 0.5))
            elif name.endswith("num_batches_tracked"):
                b.fill_(7)


def graph_json(x, edge_index):
    return {"x": {t: tensor_json(v) for t, v in x.items()},
            "edge_index": [[list(et), ei.tolist()] for et, ei in edge_index.items()]}


def run_hetero_conv(name, args):
    torch.manual_seed(zlib.crc32(name.encode()))
    layer = HeteroConv({tuple(c["edge_type"]): build_conv(c) for c in args["convs"]}, aggr=args["aggr"]).double()
    randomize(layer)
    layer.eval()  # GINConv's MLPs: BatchNorm's running statistics, as the C++ test's layer in evaluation
    x, edge_index = make_inputs(zlib.crc32(name.encode()) + 1, HETERO_CONV_WIDTH.get(name))
    for v in x.values():
        v.requires_grad_()
    out = layer(x, edge_index)
    weights = {t: torch.empty_like(v).uniform_(-1, 1) for t, v in out.items()}
    sum((v * weights[t]).sum() for t, v in out.items()).backward()
    grad = {"x": {t: tensor_json(v.grad if v.grad is not None else torch.zeros_like(v)) for t, v in x.items()}}
    for pname, p in layer.named_parameters():
        grad[pname] = p.grad.reshape(-1).tolist() if p.grad is not None else [0.0] * p.numel()
    return {"layer": "HeteroConv", "pyg": "2.3.1", "torch": torch.__version__, "args": args,
            **graph_json(x, edge_index),
            "state_dict": {k: tensor_json(v) for k, v in layer.state_dict().items()},
            "out": {t: tensor_json(v) for t, v in out.items()},
            "out_weights": {t: tensor_json(v) for t, v in weights.items()}, "grad": grad}


BASIC_GNNS = {"GraphSAGE": GraphSAGE, "GAT": GAT, "GIN": GIN}


def hetero_model(cls, args, aggr, metadata, x, edge_index):
    kw = dict(args)
    if isinstance(kw["in_channels"], list):
        kw["in_channels"] = tuple(kw["in_channels"])
    model = to_hetero(BASIC_GNNS[cls](**kw), metadata, aggr=aggr)
    x = {t: v.float() for t, v in x.items()}
    with torch.no_grad():
        model(x, edge_index)  # lazy widths (in_channels -1) from a first call
        # A same-type relation's GATConv((-1, -1)) reads x through lin_src only: its lin_dst (in the state_dict,
        # unused) gets the type's width here.
        for name, m in model.named_modules():
            if isinstance(m, GATConv) and torch.nn.parameter.is_lazy(m.lin_dst.weight):
                m.lin_dst(x[name.split(".")[-1].split("__")[-1]])
    return model


def hetero_sage(args, aggr, metadata, x, edge_index):
    return hetero_model("GraphSAGE", args, aggr, metadata, x, edge_index)


def run_to_hetero(name, args, aggr, cls="GraphSAGE", width=None):
    torch.manual_seed(zlib.crc32(name.encode()))
    x, edge_index = make_inputs(zlib.crc32(name.encode()) + 1, width)
    metadata = (list(NODES), list(ALL_EDGES))
    model = hetero_model(cls, args, aggr, metadata, x, edge_index).double()
    randomize(model, -0.8, 0.8)
    model.eval()
    with torch.no_grad():
        out = model(x, edge_index)
    return {"model": {"class": cls, "args": args}, "aggr": aggr, "pyg": "2.3.1", "torch": torch.__version__,
            "metadata": [metadata[0], [list(et) for et in metadata[1]]], **graph_json(x, edge_index),
            "state_dict": {k: tensor_json(v) for k, v in model.state_dict().items()},
            "out": {t: tensor_json(v) for t, v in out.items()}}


# The predict dataset: larger than the layer cases' graph, each type with features, in OGB's sorted order.
PREDICT_NODES = {"author": (9, 3), "institution": (4, 2), "paper": (12, 4)}
PREDICT_MODEL = {"in_channels": -1, "hidden_channels": 8, "num_layers": 2, "out_channels": 3}


def predict_graph(width=None):
    g = torch.Generator().manual_seed(11)
    x = {t: (torch.rand(n, width or w, generator=g) * 2 - 1).float() for t, (n, w) in PREDICT_NODES.items()}

    def edges(s, d, count):
        return torch.stack([torch.randint(0, PREDICT_NODES[s][0], (count,), generator=g),
                            torch.randint(0, PREDICT_NODES[d][0], (count,), generator=g)])

    rels = {("author", "affiliated_with", "institution"): edges("author", "institution", 10),
            ("author", "writes", "paper"): edges("author", "paper", 20),
            ("paper", "cites", "paper"): edges("paper", "paper", 24)}
    return x, rels


def write_csv_gz(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.GzipFile(path, "wb", mtime=0) as f:  # no timestamp: the same bytes on every run
        f.write("".join(row + "\n" for row in rows).encode())


def write_ogb_hetero(root, x, rels):
    raw = os.path.join(root, "raw")
    types_ = sorted(PREDICT_NODES)
    write_csv_gz(os.path.join(raw, "num-node-dict.csv.gz"),
                 [",".join(types_), ",".join(str(PREDICT_NODES[t][0]) for t in types_)])
    write_csv_gz(os.path.join(raw, "triplet-type-list.csv.gz"), [",".join(et) for et in sorted(rels)])
    for et, ei in rels.items():
        rel = os.path.join(raw, "relations", "___".join(et))
        write_csv_gz(os.path.join(rel, "edge.csv.gz"), [f"{s},{d}" for s, d in ei.t().tolist()])
        write_csv_gz(os.path.join(rel, "num-edge-list.csv.gz"), [str(ei.size(1))])
    for t, v in x.items():
        write_csv_gz(os.path.join(raw, "node-feat", t, "node-feat.csv.gz"),
                     [",".join(repr(e) for e in row) for row in v.tolist()])  # float32 values, exactly


def run_predict(out_dir):
    name = "predict_sage"
    torch.manual_seed(zlib.crc32(name.encode()))
    x, rels = predict_graph()
    root = os.path.join(out_dir, "predict")
    write_ogb_hetero(os.path.join(root, "data"), x, rels)
    data = HeteroData()
    for t, v in x.items():
        data[t].x = v
    for et, ei in sorted(rels.items()):
        data[et].edge_index = ei
    data = T.ToUndirected()(data)
    model = hetero_sage(PREDICT_MODEL, "sum", data.metadata(), data.x_dict, data.edge_index_dict)
    randomize(model, -0.6, 0.6)
    model.eval()
    spec = {"to_hetero": {"model": {"class": "GraphSAGE", "args": PREDICT_MODEL}, "aggr": "sum"},
            "to_undirected": True, "target": "paper"}
    with open(os.path.join(root, "sage.json"), "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")
    torch.save(model.state_dict(), os.path.join(root, "sage.pt"))
    with torch.no_grad():
        out = model.double()({t: v.double() for t, v in data.x_dict.items()}, data.edge_index_dict)
    with open(os.path.join(root, "sage.out.json"), "w") as f:
        json.dump({"pyg": "2.3.1", "torch": torch.__version__, "metadata": [data.metadata()[0],
                                                                         [list(et) for et in data.metadata()[1]]],
                   "out": out["paper"].tolist()}, f, separators=(",", ":"))
        f.write("\n")
    return out["paper"]


# to_hetero of PyG's GAT and GIN for predict: GAT on the dataset above (in_channels [-1, -1]: a lin_src and a
# lin_dst per relation in every layer), GIN on predict/data_equal (the same graph, every type 4 wide: GINConv
# adds x_dst to the sum of x_src).
PREDICT_BASIC = {
    "gat": ("GAT", {"in_channels": [-1, -1], "hidden_channels": 8, "num_layers": 2, "out_channels": 3, "heads": 2,
                    "add_self_loops": False}, "sum", None),
    "gin": ("GIN", {"in_channels": -1, "hidden_channels": 8, "num_layers": 2, "out_channels": 3,
                    "train_eps": True}, "mean", 4),
}


def run_predict_basic(out_dir, stem):
    """Writes predict/<stem>.json, .pt and .out.json for to_hetero(<class>(...)); data_equal for a width."""
    cls, args, aggr, width = PREDICT_BASIC[stem]
    torch.manual_seed(zlib.crc32(("predict_" + stem).encode()))
    x, rels = predict_graph(width)
    root = os.path.join(out_dir, "predict")
    if width is not None:
        write_ogb_hetero(os.path.join(root, "data_equal"), x, rels)
    data = HeteroData()
    for t, v in x.items():
        data[t].x = v
    for et, ei in sorted(rels.items()):
        data[et].edge_index = ei
    data = T.ToUndirected()(data)
    model = hetero_model(cls, args, aggr, data.metadata(), data.x_dict, data.edge_index_dict)
    randomize(model, -0.6, 0.6)
    model.eval()
    with open(os.path.join(root, stem + ".json"), "w") as f:
        json.dump({"to_hetero": {"model": {"class": cls, "args": args}, "aggr": aggr}, "to_undirected": True,
                   "target": "paper"}, f, indent=1)
        f.write("\n")
    torch.save(model.state_dict(), os.path.join(root, stem + ".pt"))
    with torch.no_grad():
        out = model.double()({t: v.double() for t, v in data.x_dict.items()}, data.edge_index_dict)
    with open(os.path.join(root, stem + ".out.json"), "w") as f:
        json.dump({"pyg": "2.3.1", "torch": torch.__version__, "out": out["paper"].tolist()}, f,
                  separators=(",", ":"))
        f.write("\n")
    return out["paper"]


TYPED_LAYERS = {"RGCNConv": RGCNConv, "RGATConv": RGATConv}


class TypedLayers(torch.nn.Module):
    """R-GCN (or R-GAT) as PyG's examples write it on a heterogeneous graph: each type through its Linear, the types
    stacked in node-type order, RGCNConv (RGATConv) layers on to_homogeneous()'s edges with ReLU between them."""
    def __init__(self, spec):
        super().__init__()
        self.input = HeteroDictLinear(**spec["input"]["args"])
        self.layers = torch.nn.ModuleList([TYPED_LAYERS[layer["class"]](**layer["args"]) for layer in spec["layers"]])

    def forward(self, x_dict, node_types, edge_index, edge_type):
        x_dict = self.input(x_dict)
        x = torch.cat([x_dict[t] for t in node_types])
        for i, layer in enumerate(self.layers):
            x = layer(x, edge_index, edge_type)
            if i + 1 < len(self.layers):
                x = x.relu()
        return x


def run_predict_rgcn(out_dir):
    return run_predict_typed(out_dir, "predict_rgcn", "rgcn", lambda relations: [
        {"class": "RGCNConv", "args": {"in_channels": 8, "out_channels": 8, "num_relations": relations,
                                       "num_bases": 2}},
        {"class": "RGCNConv", "args": {"in_channels": 8, "out_channels": 3, "num_relations": relations}}])


def run_predict_rgat(out_dir):
    """R-GAT: two heads concatenated with bases, then attention within each relation."""
    return run_predict_typed(out_dir, "predict_rgat", "rgat", lambda relations: [
        {"class": "RGATConv", "args": {"in_channels": 8, "out_channels": 4, "num_relations": relations,
                                       "num_bases": 2, "heads": 2}},
        {"class": "RGATConv", "args": {"in_channels": 8, "out_channels": 3, "num_relations": relations,
                                       "attention_mechanism": "within-relation"}}])


def run_predict_typed(out_dir, name, stem, make_layers):
    """Writes predict/<stem>.json (the spec), .pt (the state_dict) and .out.json (the papers' outputs)."""
    torch.manual_seed(zlib.crc32(name.encode()))
    x, rels = predict_graph()
    data = HeteroData()
    for t, v in x.items():
        data[t].x = v
    for et, ei in sorted(rels.items()):
        data[et].edge_index = ei
    data = T.ToUndirected()(data)
    layers = make_layers(len(data.edge_types))
    typed = {"input": {"class": "HeteroDictLinear",
                       "args": {"in_channels": {t: w for t, (n, w) in sorted(PREDICT_NODES.items())},
                                "out_channels": 8}},
             "layers": layers, "act": "relu"}
    model = TypedLayers(typed)
    randomize(model, -0.6, 0.6)
    model.eval()
    root = os.path.join(out_dir, "predict")
    with open(os.path.join(root, stem + ".json"), "w") as f:
        json.dump({"to_homogeneous": typed, "to_undirected": True, "target": "paper"}, f, indent=1)
        f.write("\n")
    torch.save(model.state_dict(), os.path.join(root, stem + ".pt"))
    h = data.to_homogeneous(node_attrs=[], edge_attrs=[])
    first = sum(data[t].num_nodes for t in data.node_types[:data.node_types.index("paper")])
    with torch.no_grad():
        out = model.double()({t: v.double() for t, v in data.x_dict.items()}, data.node_types, h.edge_index,
                             h.edge_type)[first:first + data["paper"].num_nodes]
    with open(os.path.join(root, stem + ".out.json"), "w") as f:
        json.dump({"pyg": "2.3.1", "torch": torch.__version__, "out": out.tolist()}, f, separators=(",", ":"))
        f.write("\n")
    return out


class HGT(torch.nn.Module):
    """examples/hetero/hgt_dblp.py's model (its Linear(-1, hidden) given each type's width)."""
    def __init__(self, widths, metadata, args, target):
        super().__init__()
        self.target = target
        self.lin_dict = torch.nn.ModuleDict({t: Linear(w, args["hidden_channels"]) for t, w in widths.items()})
        self.convs = torch.nn.ModuleList([HGTConv(args["hidden_channels"], args["hidden_channels"], metadata,
                                                  args["num_heads"], group="sum")
                                          for _ in range(args["num_layers"])])
        self.lin = Linear(args["hidden_channels"], args["out_channels"])

    def forward(self, x_dict, edge_index_dict):
        x_dict = {t: self.lin_dict[t](x).relu_() for t, x in x_dict.items()}
        for conv in self.convs:
            x_dict = conv(x_dict, edge_index_dict)
        return self.lin(x_dict[self.target])


def run_predict_hgt(out_dir):
    name = "predict_hgt"
    torch.manual_seed(zlib.crc32(name.encode()))
    x, rels = predict_graph()
    data = HeteroData()
    for t, v in x.items():
        data[t].x = v
    for et, ei in sorted(rels.items()):
        data[et].edge_index = ei
    data = T.ToUndirected()(data)
    args = {"hidden_channels": 8, "out_channels": 3, "num_heads": 2, "num_layers": 2}
    model = HGT({t: w for t, (n, w) in PREDICT_NODES.items()}, data.metadata(), args, "paper")
    randomize(model, -0.6, 0.6)
    model.eval()
    root = os.path.join(out_dir, "predict")
    with open(os.path.join(root, "hgt.json"), "w") as f:
        json.dump({"hgt": args, "to_undirected": True, "target": "paper"}, f, indent=1)
        f.write("\n")
    torch.save(model.state_dict(), os.path.join(root, "hgt.pt"))
    with torch.no_grad():
        out = model.double()({t: v.double() for t, v in data.x_dict.items()}, data.edge_index_dict)
    with open(os.path.join(root, "hgt.out.json"), "w") as f:
        json.dump({"pyg": "2.3.1", "torch": torch.__version__, "out": out.tolist()}, f, separators=(",", ":"))
        f.write("\n")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyg_hetero"))
    parser.add_argument("cases", nargs="*", help="cases to (re)make (predict: the dataset); default: all")
    a = parser.parse_args()
    typed = {"predict_rgcn": run_predict_rgcn, "predict_rgat": run_predict_rgat, "predict_hgt": run_predict_hgt,
             **{"predict_" + stem: (lambda out, stem=stem: run_predict_basic(out, stem)) for stem in PREDICT_BASIC}}
    known = {**HETERO_CONV_CASES, **TO_HETERO_CASES, "predict": None, **typed}
    unknown = [n for n in a.cases if n not in known]
    if unknown:
        sys.exit(f"unknown case(s) {unknown}; known: {sorted(known)}")
    fx_python311()
    os.makedirs(a.out, exist_ok=True)
    print(f"PyG {torch_geometric.__version__} (the 2.3.1 tag reports 2.3.0), torch {torch.__version__}",
          file=sys.stderr)
    for name in sorted(a.cases or known):
        if name == "predict":
            out = run_predict(a.out)
            print(f"predict: papers out {tuple(out.shape)}", file=sys.stderr)
            continue
        if name in typed:
            out = typed[name](a.out)
            print(f"{name}: papers out {tuple(out.shape)}", file=sys.stderr)
            continue
        data = run_hetero_conv(name, HETERO_CONV_CASES[name]) if name in HETERO_CONV_CASES else \
            run_to_hetero(name, *TO_HETERO_CASES[name])
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            json.dump(data, f, indent=None, separators=(",", ":"))
            f.write("\n")
        shapes = ", ".join(f"{t} {v['shape']}" for t, v in data["out"].items())
        print(f"{name}: out {shapes}", file=sys.stderr)


if __name__ == "__main__":
    main()
