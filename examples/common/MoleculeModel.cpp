#include "examples/common/MoleculeModel.h"

#include <algorithm>

#include "gnn/GlobalPooling.h"
#include "gnn/Random.h"
#include "models/GCN.h"
#include "models/GIN.h"

namespace gnn::app {

namespace {
std::string joinedModels(const std::vector<std::string>& models) {
  std::string s;
  for (const auto& m : models) s += (s.empty() ? "" : " | ") + m;
  return s;
}
}  // namespace

void MoleculeModelSpec::addTo(po::options_description& flags, const std::vector<std::string>& models) {
  const std::string help = joinedModels(models) + " (gin, gcn: OGB's atom and bond encoders, global pooling, linear head)";
  flags.add_options()("model", value(&model, model), help.c_str())(
      "layers", value(&layers, layers), "message-passing layers")("hidden", value(&hidden, hidden), "hidden width")(
      "pool", value(&pool, pool), "global pooling: sum | mean | max")(
      "dropout", value(&dropout, dropout), "dropout after each layer");
}

void MoleculeModelSpec::bind(RunConfig& config) {
  config.bind("model", &model);
  config.bind("layers", &layers);
  config.bind("hidden", &hidden);
  config.bind("pool", &pool);
  config.bind("dropout", &dropout);
}

void MoleculeModelSpec::validate(const std::vector<std::string>& models) const {
  if (std::find(models.begin(), models.end(), model) == models.end())
  {
    std::string list;
    for (const auto& m : models) list += (list.empty() ? "" : ", ") + m;
    throw UsageError("--model '" + model + "': must be one of " + list);
  }
  requireOneOf("--pool", pool, {"sum", "mean", "max"});
  requireRange("--layers", static_cast<double>(layers), 1, 1000);
  requireRange("--hidden", static_cast<double>(hidden), 1, 1 << 20);
  requireRange("--dropout", dropout, 0, 0.999);
}

std::unique_ptr<GraphModel> makeMoleculeModel(const MoleculeModelSpec& spec, uint64_t seed) {
  spec.validate({"gin", "gcn"});
  Generator gen(seed);
  GraphModelOptions o;
  o.layers = spec.layers;
  o.hidden = spec.hidden;
  o.tasks = spec.tasks;
  o.dropout = spec.dropout;
  o.pool = parsePoolKind(spec.pool);
  if (spec.model == "gcn") return std::make_unique<GCN>(o, gen);
  return std::make_unique<GIN>(o, gen);
}

}  // namespace gnn::app
