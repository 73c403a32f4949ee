// NodeProgram: the whole command-line program that trains a node-level model on one graph in OGB's
// node-property raw layout (cora_gcn is this program with Kipf & Welling's defaults): the dataset and its split,
// the features (normalised, kept sparse or dense), the loader (the full graph, or Cluster-GCN's METIS clusters in
// fixed-size batches), the model by name, the Trainer loop on the CPU or the simulated IPUs, runs over several
// seeds, checkpoints, the summary line or the JSON.
//
//   int main(int argc, char** argv) {
//     app::NodeProgramDefaults d;  d.name = "node_property";  d.summary = "...";
//     return app::runNodeProgram(argc, argv, d);
//   }
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "app/TrainingFlags.h"

namespace gnn::app {

struct NodeProgramDefaults {
  std::string name = "node_property";
  std::string summary;
  std::string epilog;    // more --help text (examples), printed before the common notes
  std::string data = "cora";  // a folder of examples/data
  std::string model = "gcn";
  /// What --model accepts (app/NodeModel.h); a program with one model has no --model flag.
  std::vector<std::string> models = {"gcn"};
  int64_t hidden = 16;
  double dropout = 0.5;
  /// The models are PyG's BasicGNN classes (node_property): --model names one of basicGnnNodeModelNames() and
  /// the model's arguments are flags (--layers, --heads, --act, --norm, --jk, --aggr, ...).
  bool basicGnn = false;
  /// Kipf & Welling's settings: 200 epochs, Adam at lr 0.01, L2 5e-4 on the first layer.
  TrainingDefaults training = [] {
    TrainingDefaults t;
    t.epochs = 200;
    t.lr = 0.01;
    t.weightDecay = 5e-4;
    t.weightDecayHelp = "weight decay of the first layer (the paper's L2 on layer 1 only)";
    return t;
  }();
};

/// Parses the command line and runs; returns the exit code (see Program::run).
int runNodeProgram(int argc, char** argv, const NodeProgramDefaults& defaults);

}  // namespace gnn::app
