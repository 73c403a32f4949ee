#!/usr/bin/python3
"""Reference outputs and gradients of PyTorch Geometric 2.3.1's layers, for the C++ layer table (tests/gnn/nn).

Each case builds a PyG layer in float64 from a seeded state_dict, runs it on a small graph that has what a
layer must get right (duplicate edges, a node with one self-loop, a node with two, an isolated node), and
writes one JSON file tests/reference/pyg/<case>.json:

  {"layer": "GCNConv", "pyg": "2.3.1", "torch": "...", "args": {...}, "num_nodes": N,
   "edge_index": [[sources], [targets]], "x": [[...]], "edge_attr": [[...]] (layers given edge_dim),
   "state_dict": {"lin.weight": {"shape": [...], "values": [...]}, ...}, "out": [[...]], "out_weights": [[...]],
   "grad": {"x": [[...]], "edge_attr": [[...]], "lin.weight": [...], ...}}

A state_dict key naming another key's tensor (GATConv's lin_dst = lin_src) is also listed in
"state_dict_aliases": {"lin_dst.weight": "lin_src.weight"}; `grad`, as named_parameters, holds such a tensor once.

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
from torch_geometric.nn import EdgeConv, GINConv, MLP, SAGEConv
from torch_geometric.nn import PNAConv
from torch_geometric.nn import GATConv, GATv2Conv
from torch_geometric.nn import GINEConv
from torch_geometric.nn import ChebConv, GatedGraphConv, GCN2Conv
from torch_geometric.nn import FAConv, FiLMConv, MFConv
from torch_geometric.nn import EGConv, GENConv, GeneralConv, NNConv, TransformerConv
from torch_geometric.nn import aggr as pyg_aggr
from torch_geometric.nn import APPNP, ClusterGCNConv, GraphConv, LEConv, ResGatedGraphConv, SGConv, TAGConv
from torch_geometric.nn import FastRGCNConv, HeteroLinear, RGATConv, RGCNConv

# The graph: 6 nodes; 0 -> 1 twice (a duplicate), node 2 has one self-loop, node 3 two, node 5 is isolated.
EDGES = [(0, 1), (0, 1), (1, 0), (1, 2), (2, 2), (2, 3), (3, 3), (3, 3), (3, 4), (4, 0), (4, 3), (1, 4)]
NUM_NODES = 6


def case(cls, args, in_channels, make=None, edge_dim=0, call=None, float64_default=False, layer=None):
    """One configuration of a layer.

    cls: PyG's class (its name is the layer's name in the table); args: the keyword arguments as JSON (what the
    C++ layer is built from); make: builds the PyG module when `cls(**args)` cannot (a module argument);
    edge_dim: width of the edge features passed as edge_attr (0: none); call: (layer, x, edge_index, edge_attr)
    -> out when the layer is not called as layer(x, edge_index[, edge_attr]); float64_default: run with torch's
    default dtype float64, for a layer that makes float tensors of the default dtype inside its forward (PyG's
    ClusterGCNConv: degree() without a dtype), as a float64 program sets it; layer: the class name written when
    the module that runs stands in for it (DynamicEdgeConv's EdgeConv on a plain-torch k-NN graph).
    """
    return {"cls": cls, "args": args, "in": in_channels, "make": make or (lambda: cls(**args)),
            "edge_dim": edge_dim, "call": call, "float64_default": float64_default,
            "layer": layer or cls.__name__}


# PNAConv's aggregators and scalers (every one at once, or a few) and a training set's in-degree histogram.
PNA_ALL = {"aggregators": ["mean", "min", "max", "std", "var", "sum"],
           "scalers": ["identity", "amplification", "attenuation", "linear", "inverse_linear"],
           "deg": [1, 3, 6, 2, 1]}
# Without std for edge features: std = sqrt(E[x^2] - E[x]^2), as PyG computes it, is ill-conditioned where two
# messages nearly agree, and on this graph with edge features PyG's own float32 misses its float64 gradients by 2e-3
# (std is checked by the other cases).
PNA_EDGE = {**PNA_ALL, "aggregators": ["mean", "min", "max", "var", "sum"]}


def pna_case(args, in_channels, edge_dim=0):
    return case(PNAConv, args, in_channels, make=lambda: PNAConv(**{**args, "deg": torch.tensor(args["deg"])}),
                edge_dim=edge_dim)


def nn_case(cls, args, in_channels, edge_dim=0):
    """A layer whose `nn` is PyG's MLP, described in args as {"class": "MLP", "args": {...}} (GINConv, EdgeConv)."""
    return case(cls, args, in_channels, make=lambda: cls(**{**args, "nn": MLP(**args["nn"]["args"])}),
                edge_dim=edge_dim)


def rgcn_case(cls, args):
    """RGCNConv or FastRGCNConv with edge e of type e % 3."""
    return case(cls, args, args["in_channels"],
                call=lambda layer, x, ei, ea: layer(x, ei, torch.arange(ei.size(1)) % 3))


def rgat_case(args, edge_dim=0):
    """RGATConv with edge e of type e % 3 (in 4, out 3, three relations unless args say otherwise)."""
    args = {"in_channels": 4, "out_channels": 3, "num_relations": 3, **args}
    if edge_dim:
        args["edge_dim"] = edge_dim
    return case(RGATConv, args, args["in_channels"], edge_dim=edge_dim,
                call=lambda layer, x, ei, ea: layer(x, ei, torch.arange(ei.size(1)) % 3, ea))


MULT = {"attention_mode": "multiplicative-self-attention"}
WITHIN = {"attention_mechanism": "within-relation"}


def hetero_linear_case(args, sorted_types=False):
    """HeteroLinear with row k of type k % 3 or, sorted, 3 k // N (the edges are not read)."""
    def call(layer, x, ei, ea):
        k = torch.arange(x.size(0))
        return layer(x, 3 * k // x.size(0) if sorted_types else k % 3)
    return case(HeteroLinear, args, args["in_channels"], call=call)


def knn_graph(x, k):
    """DynamicEdgeConv's graph without torch-cluster: each node's k nearest nodes (itself included, at distance 0),
    ties to the lower index, as edges neighbour -> node (torch_cluster.knn(x, x, k).flip(0))."""
    d = torch.cdist(x, x)
    n = x.size(0)
    idx = torch.arange(n).expand(n, n)
    order = torch.from_numpy(__import__("numpy").lexsort((idx.numpy(), d.detach().numpy()), axis=-1))
    nbr = order[:, :min(k, n)]
    return torch.stack([nbr.reshape(-1), torch.arange(n).repeat_interleave(nbr.size(1))])


def mlp(**args):
    return {"class": "MLP", "args": args}


# name -> case. Each new layer joins with a line or two.
CASES = {
    "gcn_conv": case(GCNConv, {"in_channels": 4, "out_channels": 3}, 4),
    "gcn_conv_no_self_loops": case(GCNConv, {"in_channels": 4, "out_channels": 3, "add_self_loops": False}, 4),
    "gcn_conv_no_normalize_no_bias": case(GCNConv, {"in_channels": 4, "out_channels": 3, "normalize": False,
                                                    "bias": False}, 4),
    # GATConv, GATv2Conv: heads, concat, slopes, self-loops; with edge features, each fill_value of the added loops.
    "gat_conv": case(GATConv, {"in_channels": 4, "out_channels": 3}, 4),
    "gat_conv_heads3": case(GATConv, {"in_channels": 4, "out_channels": 3, "heads": 3}, 4),
    "gat_conv_heads3_mean": case(GATConv, {"in_channels": 4, "out_channels": 3, "heads": 3, "concat": False}, 4),
    "gat_conv_no_self_loops": case(GATConv, {"in_channels": 4, "out_channels": 3, "heads": 2,
                                             "add_self_loops": False, "negative_slope": 0.1, "bias": False}, 4),
    "gat_conv_edge": case(GATConv, {"in_channels": 4, "out_channels": 3, "heads": 2, "edge_dim": 2}, 4, edge_dim=2),
    "gat_conv_edge_fill_value": case(GATConv, {"in_channels": 4, "out_channels": 3, "heads": 3, "concat": False,
                                               "edge_dim": 2, "fill_value": 0.5}, 4, edge_dim=2),
    "gat_conv_edge_add": case(GATConv, {"in_channels": 4, "out_channels": 3, "heads": 2, "edge_dim": 2,
                                        "fill_value": "add"}, 4, edge_dim=2),
    "gat_conv_edge_max": case(GATConv, {"in_channels": 4, "out_channels": 3, "heads": 2, "edge_dim": 3,
                                        "fill_value": "max", "negative_slope": 0.3}, 4, edge_dim=3),
    "gat_conv_edge_min": case(GATConv, {"in_channels": 4, "out_channels": 3, "edge_dim": 2, "fill_value": "min"}, 4,
                              edge_dim=2),
    "gat_conv_edge_no_self_loops": case(GATConv, {"in_channels": 4, "out_channels": 3, "heads": 2, "edge_dim": 2,
                                                  "add_self_loops": False}, 4, edge_dim=2),
    "gatv2_conv": case(GATv2Conv, {"in_channels": 4, "out_channels": 3}, 4),
    "gatv2_conv_heads3": case(GATv2Conv, {"in_channels": 4, "out_channels": 3, "heads": 3}, 4),
    "gatv2_conv_heads3_mean_no_bias": case(GATv2Conv, {"in_channels": 4, "out_channels": 3, "heads": 3,
                                                       "concat": False, "bias": False}, 4),
    "gatv2_conv_share_weights": case(GATv2Conv, {"in_channels": 4, "out_channels": 3, "heads": 2,
                                                 "share_weights": True}, 4),
    "gatv2_conv_no_self_loops": case(GATv2Conv, {"in_channels": 4, "out_channels": 3, "heads": 2,
                                                 "add_self_loops": False, "negative_slope": 0.3}, 4),
    "gatv2_conv_edge": case(GATv2Conv, {"in_channels": 4, "out_channels": 3, "heads": 2, "edge_dim": 2}, 4,
                            edge_dim=2),
    "gatv2_conv_edge_fill_value": case(GATv2Conv, {"in_channels": 4, "out_channels": 3, "heads": 2, "edge_dim": 2,
                                                   "fill_value": -0.5, "share_weights": True}, 4, edge_dim=2),
    "gatv2_conv_edge_max": case(GATv2Conv, {"in_channels": 4, "out_channels": 3, "heads": 3, "concat": False,
                                            "edge_dim": 3, "fill_value": "max"}, 4, edge_dim=3),
    "gatv2_conv_edge_no_self_loops": case(GATv2Conv, {"in_channels": 4, "out_channels": 3, "heads": 2, "edge_dim": 2,
                                                      "add_self_loops": False}, 4, edge_dim=2),
    # PNAConv: `deg` is a JSON list (the C++ layer's argument); PyG takes it as a tensor.
    "pna_conv": pna_case({**PNA_ALL, "in_channels": 4, "out_channels": 6}, 4),
    "pna_conv_towers_divide": pna_case({**PNA_ALL, "in_channels": 4, "out_channels": 6, "towers": 2,
                                        "divide_input": True}, 4),
    "pna_conv_towers_no_divide": pna_case({**PNA_ALL, "in_channels": 3, "out_channels": 4, "towers": 2}, 3),
    "pna_conv_pre_post_layers": pna_case({**PNA_ALL, "in_channels": 4, "out_channels": 4, "pre_layers": 2,
                                          "post_layers": 2, "act": "leaky_relu",
                                          "act_kwargs": {"negative_slope": 0.2}}, 4),
    "pna_conv_train_norm": pna_case({**PNA_ALL, "in_channels": 4, "out_channels": 4, "train_norm": True}, 4),
    "pna_conv_edge": pna_case({**PNA_EDGE, "in_channels": 4, "out_channels": 4, "edge_dim": 3}, 4, edge_dim=3),
    "sage_conv": case(SAGEConv, {"in_channels": 4, "out_channels": 3}, 4),
    "sage_conv_mean_wide": case(SAGEConv, {"in_channels": 3, "out_channels": 5}, 3),
    "sage_conv_max": case(SAGEConv, {"in_channels": 4, "out_channels": 3, "aggr": "max"}, 4),
    "sage_conv_sum": case(SAGEConv, {"in_channels": 3, "out_channels": 5, "aggr": "sum"}, 3),
    "sage_conv_sum_narrow": case(SAGEConv, {"in_channels": 5, "out_channels": 3, "aggr": "add"}, 5),
    "sage_conv_normalize": case(SAGEConv, {"in_channels": 4, "out_channels": 3, "normalize": True}, 4),
    "sage_conv_no_root_no_bias": case(SAGEConv, {"in_channels": 4, "out_channels": 3, "root_weight": False,
                                                 "bias": False, "aggr": "max"}, 4),
    "sage_conv_project": case(SAGEConv, {"in_channels": 4, "out_channels": 5, "project": True,
                                         "normalize": True}, 4),
    "gin_conv": nn_case(GINConv, {"nn": mlp(channel_list=[4, 8, 3], norm=None)}, 4),
    "gin_conv_train_eps": nn_case(GINConv, {"nn": mlp(channel_list=[4, 6, 5, 3], norm=None, act="tanh"),
                                            "train_eps": True}, 4),
    "gin_conv_eps": nn_case(GINConv, {"nn": mlp(in_channels=4, hidden_channels=6, out_channels=3, num_layers=3,
                                                norm=None, act="leaky_relu", act_kwargs={"negative_slope": 0.2},
                                                plain_last=False, bias=[True, False, True],
                                                dropout=[0.1, 0.2, 0.3]),
                                        "eps": 0.5}, 4),
    "gin_conv_batch_norm": nn_case(GINConv, {"nn": mlp(channel_list=[4, 8, 3]), "train_eps": True}, 4),
    "gin_conv_batch_norm_act_first": nn_case(GINConv, {"nn": mlp(in_channels=4, hidden_channels=5, out_channels=3,
                                                                 num_layers=2, act_first=True, act="elu",
                                                                 dropout=0.5), "eps": 0.5}, 4),
    "edge_conv": nn_case(EdgeConv, {"nn": mlp(channel_list=[8, 8, 3], norm=None)}, 4),
    "edge_conv_mean": nn_case(EdgeConv, {"nn": mlp(channel_list=[6, 5, 4], norm=None, act="gelu"),
                                         "aggr": "mean"}, 3),
    "edge_conv_sum_batch_norm": nn_case(EdgeConv, {"nn": mlp(channel_list=[8, 6, 3]), "aggr": "add"}, 4),
    # GINEConv: edge features of x's width (no edge_dim), projected by lin (edge_dim), a trained eps, batch norm.
    "gine_conv": nn_case(GINEConv, {"nn": mlp(channel_list=[4, 8, 3], norm=None)}, 4, edge_dim=4),
    "gine_conv_edge_dim": nn_case(GINEConv, {"nn": mlp(channel_list=[4, 6, 3], norm=None, act="tanh"),
                                             "edge_dim": 3, "train_eps": True}, 4, edge_dim=3),
    "gine_conv_eps_batch_norm": nn_case(GINEConv, {"nn": mlp(channel_list=[4, 5, 3]), "eps": 0.3, "edge_dim": 2},
                                        4, edge_dim=2),
    "graph_conv": case(GraphConv, {"in_channels": 4, "out_channels": 3}, 4),
    "graph_conv_wide": case(GraphConv, {"in_channels": 3, "out_channels": 5, "bias": False}, 3),
    "graph_conv_mean": case(GraphConv, {"in_channels": 4, "out_channels": 3, "aggr": "mean"}, 4),
    "graph_conv_max": case(GraphConv, {"in_channels": 4, "out_channels": 5, "aggr": "max"}, 4),
    # Aggregation modules as `aggr` (their parameters under aggr_module.*).
    "graph_conv_softmax_learn": case(GraphConv, {"in_channels": 4, "out_channels": 3,
                                                 "aggr": {"class": "SoftmaxAggregation", "args": {"learn": True}}}, 4,
                                     make=lambda: GraphConv(4, 3, aggr=pyg_aggr.SoftmaxAggregation(learn=True))),
    "graph_conv_multi_proj": case(GraphConv, {"in_channels": 4, "out_channels": 3,
                                              "aggr": {"class": "MultiAggregation",
                                                       "args": {"aggrs": ["mean", "max", "powermean"], "mode": "proj",
                                                                "mode_kwargs": {"in_channels": 4,
                                                                                "out_channels": 4}}}}, 4,
                                  make=lambda: GraphConv(4, 3, aggr=pyg_aggr.MultiAggregation(
                                      ["mean", "max", "powermean"], mode="proj",
                                      mode_kwargs={"in_channels": 4, "out_channels": 4}))),
    "sg_conv": case(SGConv, {"in_channels": 4, "out_channels": 3}, 4),
    "sg_conv_k3_wide": case(SGConv, {"in_channels": 3, "out_channels": 5, "K": 3}, 3),
    "sg_conv_no_self_loops_no_bias": case(SGConv, {"in_channels": 4, "out_channels": 3, "K": 2,
                                                   "add_self_loops": False, "bias": False}, 4),
    "appnp": case(APPNP, {"K": 3, "alpha": 0.1}, 4),
    "appnp_no_self_loops": case(APPNP, {"K": 2, "alpha": 0.25, "add_self_loops": False}, 3),
    "appnp_no_normalize": case(APPNP, {"K": 4, "alpha": 0.5, "normalize": False}, 4),
    "tag_conv": case(TAGConv, {"in_channels": 4, "out_channels": 3}, 4),
    "tag_conv_k1_no_bias": case(TAGConv, {"in_channels": 3, "out_channels": 5, "K": 1, "bias": False}, 3),
    "tag_conv_no_normalize": case(TAGConv, {"in_channels": 4, "out_channels": 3, "K": 2, "normalize": False}, 4),
    "le_conv": case(LEConv, {"in_channels": 4, "out_channels": 3}, 4),
    "le_conv_no_bias": case(LEConv, {"in_channels": 3, "out_channels": 5, "bias": False}, 3),
    # Without add_self_loops PyG adds diag_lambda / deg over the self-loop edges only when there is one per node
    # (this graph has three): not a case.
    "cluster_gcn_conv": case(ClusterGCNConv, {"in_channels": 4, "out_channels": 3}, 4, float64_default=True),
    "cluster_gcn_conv_diag_lambda": case(ClusterGCNConv, {"in_channels": 3, "out_channels": 5, "diag_lambda": 0.7,
                                                          "bias": False}, 3, float64_default=True),
    "res_gated_graph_conv": case(ResGatedGraphConv, {"in_channels": 4, "out_channels": 3}, 4),
    "res_gated_graph_conv_tanh_no_root": case(ResGatedGraphConv, {"in_channels": 3, "out_channels": 5, "act": "tanh",
                                                                  "root_weight": False, "bias": False}, 3,
                                              make=lambda: ResGatedGraphConv(3, 5, act=torch.nn.Tanh(),
                                                                             root_weight=False, bias=False)),
    "cheb_conv": case(ChebConv, {"in_channels": 4, "out_channels": 3, "K": 3}, 4),
    "cheb_conv_rw_k2": case(ChebConv, {"in_channels": 3, "out_channels": 5, "K": 2, "normalization": "rw"}, 3),
    "cheb_conv_none_k4_no_bias": case(ChebConv, {"in_channels": 4, "out_channels": 3, "K": 4, "normalization": None,
                                                 "bias": False}, 4),
    "cheb_conv_k1": case(ChebConv, {"in_channels": 4, "out_channels": 3, "K": 1}, 4),
    # lambda_max given to forward (the C++ table's ChebConv_lambda entry passes the same 1.5).
    "cheb_conv_lambda_max": case(ChebConv, {"in_channels": 4, "out_channels": 3, "K": 3}, 4,
                                 call=lambda layer, x, ei, ea: layer(x, ei, lambda_max=1.5)),
    # GCN2Conv reads x_0 beside x: the tables pass x as both.
    "gcn2_conv": case(GCN2Conv, {"channels": 4, "alpha": 0.2}, 4, call=lambda layer, x, ei, ea: layer(x, x, ei)),
    "gcn2_conv_theta_layer_separate": case(GCN2Conv, {"channels": 4, "alpha": 0.1, "theta": 0.5, "layer": 2,
                                                      "shared_weights": False}, 4,
                                           call=lambda layer, x, ei, ea: layer(x, x, ei)),
    "gcn2_conv_no_self_loops": case(GCN2Conv, {"channels": 3, "alpha": 0.3, "theta": 1.0, "layer": 1,
                                               "add_self_loops": False}, 3,
                                    call=lambda layer, x, ei, ea: layer(x, x, ei)),
    "gcn2_conv_no_normalize": case(GCN2Conv, {"channels": 3, "alpha": 0.3, "normalize": False}, 3,
                                   call=lambda layer, x, ei, ea: layer(x, x, ei)),
    "gated_graph_conv": case(GatedGraphConv, {"out_channels": 4, "num_layers": 2}, 3),
    "gated_graph_conv_mean_no_bias": case(GatedGraphConv, {"out_channels": 4, "num_layers": 3, "aggr": "mean",
                                                           "bias": False}, 4),
    "gated_graph_conv_max": case(GatedGraphConv, {"out_channels": 5, "num_layers": 1, "aggr": "max"}, 2),
    "mf_conv": case(MFConv, {"in_channels": 4, "out_channels": 3}, 4),
    "mf_conv_max_degree2_no_bias": case(MFConv, {"in_channels": 3, "out_channels": 5, "max_degree": 2,
                                                 "bias": False}, 3),
    # FAConv reads x_0 beside x: the tables pass x as both.
    "fa_conv": case(FAConv, {"channels": 4}, 4, call=lambda layer, x, ei, ea: layer(x, x, ei)),
    "fa_conv_eps_no_self_loops": case(FAConv, {"channels": 3, "eps": 0.4, "add_self_loops": False}, 3,
                                      call=lambda layer, x, ei, ea: layer(x, x, ei)),
    "fa_conv_eps0": case(FAConv, {"channels": 4, "eps": 0.0}, 4, call=lambda layer, x, ei, ea: layer(x, x, ei)),
    "film_conv": case(FiLMConv, {"in_channels": 4, "out_channels": 3}, 4),
    "film_conv_sum_tanh": case(FiLMConv, {"in_channels": 3, "out_channels": 5, "aggr": "add", "act": "tanh"}, 3,
                               make=lambda: FiLMConv(3, 5, aggr="add", act=torch.nn.Tanh())),
    "film_conv_no_act_max": case(FiLMConv, {"in_channels": 4, "out_channels": 3, "aggr": "max", "act": None}, 4),
    "film_conv_nn": case(FiLMConv, {"in_channels": 4, "out_channels": 3, "nn": mlp(channel_list=[4, 5, 6], norm=None)},
                         4, make=lambda: FiLMConv(4, 3, nn=MLP(channel_list=[4, 5, 6], norm=None))),
    # Three relations, edge e of type e % 3 (the C++ table's FiLMConv_relations entry gives the same types).
    "film_conv_relations": case(FiLMConv, {"in_channels": 4, "out_channels": 3, "num_relations": 3}, 4,
                                call=lambda layer, x, ei, ea: layer(x, ei, torch.arange(ei.size(1)) % 3)),
    # Edge e of type e % 3 (the C++ table's RGCNConv entries give the same types); relations4: a fourth relation
    # without edges.
    "rgcn_conv": rgcn_case(RGCNConv, {"in_channels": 4, "out_channels": 3, "num_relations": 3}),
    "rgcn_conv_add": rgcn_case(RGCNConv, {"in_channels": 3, "out_channels": 5, "num_relations": 3, "aggr": "add"}),
    "rgcn_conv_no_root_no_bias": rgcn_case(RGCNConv, {"in_channels": 4, "out_channels": 3, "num_relations": 3,
                                                      "root_weight": False, "bias": False}),
    "rgcn_conv_relations4": rgcn_case(RGCNConv, {"in_channels": 4, "out_channels": 3, "num_relations": 4}),
    "rgcn_conv_square": rgcn_case(RGCNConv, {"in_channels": 4, "out_channels": 4, "num_relations": 3}),
    "rgcn_conv_square_add_relations4": rgcn_case(RGCNConv, {"in_channels": 4, "out_channels": 4,
                                                            "num_relations": 4, "aggr": "add"}),
    "rgcn_conv_widening_relations4": rgcn_case(RGCNConv, {"in_channels": 3, "out_channels": 5,
                                                          "num_relations": 4, "root_weight": False}),
    "rgcn_conv_bases": rgcn_case(RGCNConv, {"in_channels": 4, "out_channels": 3, "num_relations": 3,
                                            "num_bases": 2}),
    "rgcn_conv_bases_add_no_root": rgcn_case(RGCNConv, {"in_channels": 4, "out_channels": 5, "num_relations": 3,
                                                        "num_bases": 4, "aggr": "add", "root_weight": False}),
    "rgcn_conv_blocks": rgcn_case(RGCNConv, {"in_channels": 4, "out_channels": 6, "num_relations": 3,
                                             "num_blocks": 2}),
    "rgcn_conv_blocks_max_no_bias": rgcn_case(RGCNConv, {"in_channels": 6, "out_channels": 9, "num_relations": 3,
                                                         "num_blocks": 3, "aggr": "max", "bias": False}),
    "rgcn_conv_max": rgcn_case(RGCNConv, {"in_channels": 4, "out_channels": 5, "num_relations": 3, "aggr": "max"}),
    "rgcn_conv_bases_max": rgcn_case(RGCNConv, {"in_channels": 4, "out_channels": 3, "num_relations": 3,
                                                "num_bases": 2, "aggr": "max"}),
    "fast_rgcn_conv": rgcn_case(FastRGCNConv, {"in_channels": 4, "out_channels": 3, "num_relations": 3}),
    "fast_rgcn_conv_add_no_root": rgcn_case(FastRGCNConv, {"in_channels": 3, "out_channels": 5, "num_relations": 3,
                                                           "aggr": "add", "root_weight": False}),
    "fast_rgcn_conv_bases": rgcn_case(FastRGCNConv, {"in_channels": 4, "out_channels": 3, "num_relations": 3,
                                                     "num_bases": 2}),
    "fast_rgcn_conv_no_bias_relations4": rgcn_case(FastRGCNConv, {"in_channels": 4, "out_channels": 3,
                                                                  "num_relations": 4, "bias": False}),
    "fast_rgcn_conv_blocks": rgcn_case(FastRGCNConv, {"in_channels": 4, "out_channels": 6, "num_relations": 3,
                                                      "num_blocks": 2}),
    "fast_rgcn_conv_blocks_add": rgcn_case(FastRGCNConv, {"in_channels": 6, "out_channels": 9, "num_relations": 3,
                                                          "num_blocks": 3, "aggr": "add"}),
    # Both attention mechanisms and modes, heads concatenated and averaged, dim 2 (multiplicative only), bases,
    # blocks, each mod in each mode, edge features; every parameter uniform(-1, 1), so w, l1, b1, l2, b2 too.
    "rgat_conv": rgat_case({}),
    "rgat_conv_within": rgat_case(WITHIN),
    "rgat_conv_multiplicative": rgat_case(MULT),
    "rgat_conv_within_multiplicative_dim2": rgat_case({**WITHIN, **MULT, "dim": 2}),
    "rgat_conv_heads2": rgat_case({"heads": 2}),
    "rgat_conv_heads2_mean": rgat_case({"heads": 2, "concat": False}),
    "rgat_conv_within_heads2_mean_no_bias": rgat_case({**WITHIN, "heads": 2, "concat": False, "bias": False}),
    "rgat_conv_multiplicative_heads2_dim2": rgat_case({**MULT, "heads": 2, "dim": 2}),
    "rgat_conv_multiplicative_heads2_dim2_mean": rgat_case({**MULT, "heads": 2, "dim": 2, "concat": False}),
    "rgat_conv_bases": rgat_case({"num_bases": 2, "heads": 2}),
    "rgat_conv_bases_within_multiplicative": rgat_case({**WITHIN, **MULT, "num_bases": 2}),
    "rgat_conv_blocks": rgat_case({"num_blocks": 2, "heads": 2}),
    "rgat_conv_blocks_multiplicative_dim2": rgat_case({**MULT, "num_blocks": 3, "in_channels": 6, "dim": 2}),
    "rgat_conv_relations4": rgat_case({"num_relations": 4, "heads": 2}),
    "rgat_conv_mod_additive": rgat_case({"mod": "additive", "heads": 2}),
    "rgat_conv_mod_scaled": rgat_case({"mod": "scaled", "heads": 2}),
    "rgat_conv_mod_f_additive": rgat_case({"mod": "f-additive", "heads": 2}),
    "rgat_conv_mod_f_scaled": rgat_case({"mod": "f-scaled", "heads": 2}),
    "rgat_conv_multiplicative_mod_additive_dim2": rgat_case({**MULT, "mod": "additive", "heads": 2, "dim": 2}),
    "rgat_conv_multiplicative_mod_scaled_dim2": rgat_case({**MULT, "mod": "scaled", "heads": 2, "dim": 2}),
    "rgat_conv_within_multiplicative_mod_f_additive": rgat_case({**WITHIN, **MULT, "mod": "f-additive"}),
    "rgat_conv_within_mod_f_scaled_heads2_mean": rgat_case({**WITHIN, "mod": "f-scaled", "heads": 2,
                                                            "concat": False}),
    "rgat_conv_edge": rgat_case({"heads": 2}, edge_dim=3),
    "rgat_conv_edge_within_multiplicative_dim2": rgat_case({**WITHIN, **MULT, "heads": 2, "dim": 2}, edge_dim=3),
    "rgat_conv_edge1_mod_scaled": rgat_case({"mod": "scaled"}, edge_dim=1),
    # Row k of type k % 3 (types4: a fourth type without rows); sorted: 3 k // N, types 0, 0, 1, 1, 2, 2. The C++
    # table's HeteroLinear entries give the same types. No pyg_lib here: PyG keeps a Linear per type ("lins.<t>.*").
    "hetero_linear": hetero_linear_case({"in_channels": 4, "out_channels": 3, "num_types": 3}),
    "hetero_linear_no_bias": hetero_linear_case({"in_channels": 5, "out_channels": 2, "num_types": 3,
                                                 "bias": False}),
    "hetero_linear_types4": hetero_linear_case({"in_channels": 4, "out_channels": 3, "num_types": 4}),
    "hetero_linear_sorted": hetero_linear_case({"in_channels": 4, "out_channels": 3, "num_types": 3,
                                                "is_sorted": True}, sorted_types=True),
    "transformer_conv": case(TransformerConv, {"in_channels": 4, "out_channels": 3}, 4),
    "transformer_conv_heads2": case(TransformerConv, {"in_channels": 4, "out_channels": 3, "heads": 2}, 4),
    "transformer_conv_no_root_no_bias": case(TransformerConv, {"in_channels": 3, "out_channels": 4, "heads": 2,
                                                               "root_weight": False, "bias": False}, 3),
    "transformer_conv_mean_beta": case(TransformerConv, {"in_channels": 4, "out_channels": 3, "heads": 3,
                                                         "concat": False, "beta": True}, 4),
    "transformer_conv_edge": case(TransformerConv, {"in_channels": 4, "out_channels": 3, "heads": 2, "edge_dim": 2},
                                  4, edge_dim=2),
    "transformer_conv_edge_beta": case(TransformerConv, {"in_channels": 4, "out_channels": 3, "heads": 2,
                                                         "edge_dim": 3, "beta": True}, 4, edge_dim=3),
    # NNConv: nn maps edge_dim -> in x out.
    "nn_conv": nn_case(NNConv, {"in_channels": 4, "out_channels": 3, "nn": mlp(channel_list=[2, 5, 12], norm=None)},
                       4, edge_dim=2),
    "nn_conv_mean_no_root": nn_case(NNConv, {"in_channels": 3, "out_channels": 2, "aggr": "mean",
                                             "root_weight": False, "nn": mlp(channel_list=[3, 6], norm=None)},
                                    3, edge_dim=3),
    "nn_conv_max_no_bias": nn_case(NNConv, {"in_channels": 2, "out_channels": 3, "aggr": "max", "bias": False,
                                            "nn": mlp(channel_list=[2, 4, 6], norm=None, act="tanh")}, 2, edge_dim=2),
    # GENConv: its defaults (softmax, batch norm, no bias; the references run in evaluation), learnt t and message
    # scale with layer norm and widths that differ, power mean over projected edge features, the semi-gradient
    # softmax, and a list of aggregations (lin_aggr_out).
    "gen_conv": case(GENConv, {"in_channels": 4, "out_channels": 4}, 4),
    "gen_conv_learn_t_msg_norm": case(GENConv, {"in_channels": 3, "out_channels": 5, "learn_t": True, "t": 0.7,
                                                "msg_norm": True, "learn_msg_scale": True, "norm": "layer",
                                                "bias": True}, 3),
    "gen_conv_edge_powermean": case(GENConv, {"in_channels": 4, "out_channels": 4, "aggr": "powermean", "p": 2.0,
                                              "edge_dim": 2, "norm": None, "num_layers": 3}, 4, edge_dim=2),
    "gen_conv_edge_same_width": case(GENConv, {"in_channels": 4, "out_channels": 4, "norm": None}, 4, edge_dim=4),
    "gen_conv_softmax_sg": case(GENConv, {"in_channels": 4, "out_channels": 3, "aggr": "softmax_sg", "t": 0.5,
                                          "expansion": 1, "norm": None}, 4),
    "eg_conv": case(EGConv, {"in_channels": 4, "out_channels": 4, "num_heads": 2, "num_bases": 3}, 4),
    "eg_conv_multi_aggr": case(EGConv, {"in_channels": 3, "out_channels": 6, "aggregators": ["symnorm", "max", "std"],
                                        "num_heads": 3, "num_bases": 2}, 3),
    "eg_conv_no_self_loops_no_bias": case(EGConv, {"in_channels": 4, "out_channels": 4, "aggregators": ["mean", "var"],
                                                   "num_heads": 1, "num_bases": 2, "add_self_loops": False,
                                                   "bias": False}, 4),
    # (Without symnorm PyG 2.3.1 adds the self-loops with the node count inferred from the edges, so this graph's
    # isolated last node gets none there; here every node gets one, so that padding changes nothing: no case.)
    "eg_conv_sum_min": case(EGConv, {"in_channels": 4, "out_channels": 4, "aggregators": ["symnorm", "sum", "min"],
                                     "num_heads": 2, "num_bases": 2}, 4),
    # DynamicEdgeConv needs torch-cluster: PyG's EdgeConv with the same nn on the plain-torch k-NN graph.
    "dynamic_edge_conv": case(EdgeConv, {"nn": mlp(channel_list=[8, 6, 3], norm=None), "k": 3}, 4,
                              make=lambda: EdgeConv(MLP(channel_list=[8, 6, 3], norm=None)),
                              call=lambda layer, x, ei, ea: layer(x, knn_graph(x, 3)), layer="DynamicEdgeConv"),
    "dynamic_edge_conv_mean_k10": case(EdgeConv, {"nn": mlp(channel_list=[6, 5, 4], norm=None), "k": 10,
                                                  "aggr": "mean"}, 3,
                                       make=lambda: EdgeConv(MLP(channel_list=[6, 5, 4], norm=None), aggr="mean"),
                                       call=lambda layer, x, ei, ea: layer(x, knn_graph(x, 10)),
                                       layer="DynamicEdgeConv"),
    "general_conv": case(GeneralConv, {"in_channels": 4, "out_channels": 4}, 4),
    "general_conv_attention_heads": case(GeneralConv, {"in_channels": 4, "out_channels": 3, "heads": 2,
                                                       "attention": True}, 4),
    "general_conv_dot_product_undirected_l2": case(GeneralConv, {"in_channels": 4, "out_channels": 3, "heads": 3,
                                                                 "attention": True, "attention_type": "dot_product",
                                                                 "directed_msg": False, "l2_normalize": True}, 4),
    "general_conv_edge_mean_skip": case(GeneralConv, {"in_channels": 4, "out_channels": 4, "in_edge_channels": 2,
                                                      "aggr": "mean", "skip_linear": True, "bias": False}, 4,
                                        edge_dim=2),
    "general_conv_edge_attention_max": case(GeneralConv, {"in_channels": 3, "out_channels": 5, "in_edge_channels": 3,
                                                          "heads": 2, "attention": True, "aggr": "max"}, 3,
                                            edge_dim=3),
    "gen_conv_multi": case(GENConv, {"in_channels": 4, "out_channels": 4, "aggr": ["mean", "max"], "norm": None,
                                     "bias": True}, 4),
}

# Seeds of the cases made before seeds came from names (their files are kept as they were).
LEGACY_SEEDS = {"gcn_conv": 0, "gcn_conv_no_normalize_no_bias": 1, "gcn_conv_no_self_loops": 2}


def as_list(t):
    return t.detach().reshape(-1).tolist() if t.dim() != 2 else t.detach().tolist()


def run_case(name, c):
    torch.set_default_dtype(torch.float64 if c["float64_default"] else torch.float32)
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
        "layer": c["layer"], "pyg": "2.3.1", "torch": torch.__version__, "args": c["args"],
        "num_nodes": NUM_NODES, "edge_index": edge_index.tolist(), "x": as_list(x),
    }
    if edge_attr is not None:
        data["edge_attr"] = as_list(edge_attr)
    data.update({
        "state_dict": {k: {"shape": list(v.shape), "values": v.reshape(-1).tolist()}
                       for k, v in layer.state_dict().items()},
        "out": as_list(out), "out_weights": as_list(out_weights), "grad": grad,
    })
    # Keys naming a tensor an earlier key holds (PyG's lin_dst = lin_src): {"lin_dst.weight": "lin_src.weight"}.
    # named_parameters (and `grad`) list such a tensor once; only written when there are any.
    first, aliases = {}, {}
    for k, v in layer.state_dict().items():
        at = (v.data_ptr(), tuple(v.shape), tuple(v.stride()))
        if at in first and v.numel() > 0:  # empty tensors may all sit at address 0
            aliases[k] = first[at]
        else:
            first[at] = k
    if aliases:
        data["state_dict_aliases"] = aliases
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
