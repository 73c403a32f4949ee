// MoleculeModel: the graph-level models the molecule programs train, built from the flags a checkpoint
// records, so `predict` rebuilds exactly the model that was trained.
//
//   app::MoleculeModelSpec spec;  spec.model = "gin";  spec.tasks = 2;
//   spec.bind(config);                                  // --model, --layers, ... saved in checkpoints
//   std::unique_ptr<GraphModel> m = app::makeMoleculeModel(spec, seed);
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "examples/common/Program.h"
#include "examples/common/RunConfig.h"
#include "models/GraphModel.h"

namespace gnn::app {

struct MoleculeModelSpec {
  std::string model = "gin", pool = "mean";
  int64_t layers = 5, hidden = 300, tasks = 1;
  double dropout = 0.0;

  /// --model (one of `models`), --layers, --hidden, --pool, --dropout on `flags`.
  void addTo(po::options_description& flags, const std::vector<std::string>& models = {"gin", "gcn"});
  void bind(RunConfig& config);
  /// UsageError for values out of range or a model not in `models`.
  void validate(const std::vector<std::string>& models = {"gin", "gcn"}) const;
};

/// GIN (OGB's baseline: 5 layers, 300 wide, virtual node off) or GCN with OGB's atom and bond encoders.
std::unique_ptr<GraphModel> makeMoleculeModel(const MoleculeModelSpec& spec, uint64_t seed);

}  // namespace gnn::app
