// PyGHeteroPredict: `predict --pyg-model` for PyTorch Geometric's heterogeneous models on a dataset in OGB's
// heterogeneous raw layout (data/OgbHeteroDataset.h), the target node type's outputs written as float32 .npy.
// A spec names one model kind, with the graph's transform and the target:
//   {"to_hetero": {"model": {"class": "GraphSAGE", "args": {...}}, "aggr": "sum"}, ...}   PyG's to_hetero of a
//       BasicGNN (gnn/nn/models/HeteroBasicGNN.h);
//   {"to_homogeneous": {"input": {"class": "HeteroDictLinear", "args": {...}}, "layers": [...], "act": "relu"},
//    ...}                                                   layers on the typed graph, R-GCN as PyG's examples
//       write it (gnn/nn/models/TypedLayerList.h);
//   {"hgt": {"hidden_channels": 64, "out_channels": C, "num_heads": 2, "num_layers": 2}, ...}   HGT as PyG's
//       examples/hetero/hgt_dblp.py builds it (models/HeteroHGT.h);
// and "to_undirected": true when PyG's T.ToUndirected() made the graph's reverse relations, "target": the node
// type whose outputs are written. docs/pyg.md, "Heterogeneous models".
#pragma once
#include <nlohmann/json.hpp>

#include "app/PyGModelPredict.h"

namespace gnn::app {

/// Whether a spec names a heterogeneous model kind (to_hetero, to_homogeneous, hgt).
bool isHeteroPyGSpec(const nlohmann::json& spec);
/// Runs it; std::runtime_error naming the spec, the data or the state_dict for what cannot be used.
int predictHeteroPyGModel(const PyGPredictFlags& f, const nlohmann::json& spec);

}  // namespace gnn::app
