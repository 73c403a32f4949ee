#include "app/McDropout.h"

#include <stdexcept>

#include "app/Ensemble.h"
#include "app/Program.h"
#include "gnn/io/Fnv1a.h"
#include "models/KeyedDropoutScope.h"

namespace gnn::app {

nlohmann::json McDropout::toJson() const { return {{"samples", samples}, {"seed", seed}}; }

std::optional<McDropout> McDropout::fromCheckpoint(const Checkpoint& ck) {
  if (!ck.meta.contains("mc_dropout")) return std::nullopt;
  const nlohmann::json& j = ck.meta["mc_dropout"];
  auto bad = [&](const std::string& why) {
    return std::runtime_error(ck.source + ": its metadata's 'mc_dropout' " + why + "; the checkpoint cannot be used");
  };
  if (!j.is_object()) throw bad("is not an object");
  if (!j.contains("samples") || !j["samples"].is_number_integer() || j["samples"].get<int64_t>() < 1 ||
      j["samples"].get<int64_t>() > 10000)
    throw bad("has no sample count in [1, 10000]");
  if (!j.contains("seed") || !j["seed"].is_number_unsigned()) throw bad("has no seed (a non-negative integer)");
  McDropout mc;
  mc.samples = j["samples"].get<int64_t>();
  mc.seed = j["seed"].get<uint64_t>();
  return mc;
}

void addMcDropoutFlags(boost::program_options::options_description& flags, std::string& uncertainty,
                       int64_t& samples) {
  flags.add_options()(
      "uncertainty", value(&uncertainty, std::string("auto")),
      "auto (the ensemble's variance with --ensemble-size > 1, the model's with --task regression-mve) | mc-dropout "
      "(gin, gcn, dmpnn trained with --dropout > 0: --mc-samples passes of the best model with its dropout on, keyed "
      "per molecule so that any batching gives the same bits; the prediction is their mean, the uncertainty their "
      "variance, calibrated by --calibration on validation as an ensemble's; Chemprop v2's MC dropout)")(
      "mc-samples", value(&samples, int64_t{10}),
      "--uncertainty mc-dropout: stochastic passes per molecule (Chemprop v2's default, 10)");
}

void requireMcDropoutModel(const std::string& flag, const std::string& model, double dropout) {
  if (!MoleculeModelSpec::messagePassingIn({model}) && model != "dmpnn")
    throw UsageError(flag + " samples the dropout of --model gin, gcn and dmpnn, not " + model);
  if (!(dropout > 0))
    throw UsageError(flag + ": the model has no dropout (--dropout 0): MC dropout samples the dropout the model "
                            "was trained with; train with --dropout > 0 (e.g. 0.1)");
}

std::vector<uint64_t> moleculeDropoutKeys(const NpzDataset& dataset) {
  std::vector<uint64_t> keys(dataset.size());
  for (size_t i = 0; i < dataset.size(); ++i) {
    const std::string smiles = dataset.hasSmiles() ? dataset.smiles(i) : std::string();
    const std::string text = smiles.empty() ? "id:" + std::to_string(dataset.sourceIndex(i)) : "smiles:" + smiles;
    Fnv1a h;
    h.add(text.data(), text.size());
    keys[i] = h.value();
  }
  return keys;
}

std::vector<MoleculePredictions> predictMcDropoutSamples(BlockModel& model, int64_t tasks,
                                                         const std::shared_ptr<const Dataset>& dataset,
                                                         const std::vector<uint64_t>& keys,
                                                         const std::vector<int64_t>& positions,
                                                         const ShapeBuckets& buckets, const TargetScaling& scaling,
                                                         MoleculeTask task, const McDropout& mc) {
  if (keys.size() != dataset->size())
    throw std::invalid_argument("predictMcDropoutSamples: " + std::to_string(keys.size()) + " molecule keys for " +
                                std::to_string(dataset->size()) + " molecules");
  std::vector<MoleculePredictions> samples;
  for (int64_t k = 0; k < mc.samples; ++k) {
    BatchForward forward = [&](BlockModel& m, const Batch& b, const std::vector<int64_t>& batchPositions) {
      std::vector<uint64_t> graphKeys;
      for (int64_t i : batchPositions) graphKeys.push_back(keys[static_cast<size_t>(i)]);
      KeyedDropoutScope scope(b, std::move(graphKeys), mc.seed, static_cast<uint64_t>(k));
      Tensor out = m.forward(b).value();
      if (scope.sites() == 0)
        throw std::logic_error("predictMcDropoutSamples: the model applied no dropout through layerDropout");
      return out;
    };
    samples.push_back(predictMolecules(model, tasks, dataset, positions, buckets, scaling, task, forward));
  }
  return samples;
}

MoleculePredictions predictMcDropout(BlockModel& model, int64_t tasks, const std::shared_ptr<const Dataset>& dataset,
                                     const std::vector<uint64_t>& keys, const std::vector<int64_t>& positions,
                                     const ShapeBuckets& buckets, const TargetScaling& scaling, MoleculeTask task,
                                     const McDropout& mc) {
  return combineEnsemble(predictMcDropoutSamples(model, tasks, dataset, keys, positions, buckets, scaling, task, mc),
                         task);
}

}  // namespace gnn::app
