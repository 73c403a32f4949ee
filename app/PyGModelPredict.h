// PyGModelPredict: `predict --pyg-model SPEC.json --state-dict STATE.pt --data DIR --out OUT.npy`: a PyTorch
// Geometric model (gnn/nn/models/BasicGNN.h; its class and constructor arguments as JSON, as
// scripts/export_pyg_model.py writes them) with a PyG state_dict, run in evaluation mode on a node dataset in
// OGB's raw layout (features as stored, no transform), its outputs [num_nodes, out_channels] written as float32
// .npy. Nothing in the files is executed: the spec is data, the state_dict is read by gnn/io/StateDict.h.
#pragma once
#include <string>

namespace gnn::app {

struct PyGPredictFlags {
  std::string spec, stateDict, data, out;
  std::string addInverseEdges = "auto";  ///< --add-inverse-edges: auto | on | off (OgbNodeOptions)
  bool quiet = false;
};

/// Runs it; throws UsageError for a missing flag or file, std::runtime_error / std::invalid_argument naming the
/// file for one that cannot be used.
int predictPyGModel(const PyGPredictFlags& f);

}  // namespace gnn::app
