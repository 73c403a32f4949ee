#include "examples/common/MoleculeModel.h"

#include "gnn/GlobalPooling.h"
#include "gnn/Random.h"
#include "models/GCN.h"
#include "models/GIN.h"

namespace gnn::app {

void MoleculeModelSpec::addTo(po::options_description& flags) {
  flags.add_options()("model", value(&model, model), "gin | gcn (OGB's atom and bond encoders, global pooling, linear head)")(
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

void MoleculeModelSpec::validate() const {
  requireOneOf("--model", model, {"gin", "gcn"});
  requireOneOf("--pool", pool, {"sum", "mean", "max"});
  requireRange("--layers", static_cast<double>(layers), 1, 1000);
  requireRange("--hidden", static_cast<double>(hidden), 1, 1 << 20);
  requireRange("--dropout", dropout, 0, 0.999);
}

std::unique_ptr<GraphModel> makeMoleculeModel(const MoleculeModelSpec& spec, uint64_t seed) {
  spec.validate();
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
