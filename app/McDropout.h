// McDropout: Monte Carlo dropout uncertainty (Gal & Ghahramani, ICML 2016; Chemprop v2's MCDropoutEstimator):
// N stochastic passes of one trained model with its dropout on at its training rate; the prediction is the
// mean of the samples and the uncertainty their population variance (combineEnsemble of the samples, as an
// ensemble of N: for classification, the mean probability and the variance of the probabilities), then
// calibrated on the validation set as an ensemble is (app/Ensemble.h).
//
// The passes draw keyed dropout (models/KeyedDropoutScope.h): sample k of a molecule uses masks that depend on
// (seed, k, the dropout's place in the model, the molecule's key, the row inside the molecule) only, so its
// samples are the same bits whatever batch, batch shape (--eval-buckets), order or padding it is predicted in:
// `predict` reproduces `molecule_property --predict`. A molecule's key is the FNV-1a hash of its SMILES as read
// (the same text gives the same masks in any file; a molecule without SMILES: of its id in the source).
// Training keeps its own dropout: only these passes are keyed.
//
// A checkpoint of a run with --uncertainty mc-dropout keeps {"samples", "seed"} as metadata "mc_dropout" beside
// its "ensemble" block (an ensemble of one, holding the calibration).
//
//   app::McDropout mc{10, seed};
//   std::vector<uint64_t> keys = app::moleculeDropoutKeys(npz);
//   app::MoleculePredictions p = app::predictMcDropout(model, tasks, ds, keys, positions, buckets, scaling, task, mc);
#pragma once
#include <cstdint>
#include <memory>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/MoleculePredictions.h"
#include "data/NpzDataset.h"
#include "gnn/io/Checkpoint.h"

namespace gnn::app {

struct McDropout {
  /// Stochastic passes (Chemprop v2's MCDropoutEstimator default: 10).
  int64_t samples = 10;
  /// The stream of the masks (molecule_property: the run's --seed).
  uint64_t seed = 0;
  nlohmann::json toJson() const;
  /// The checkpoint's "mc_dropout" metadata (nullopt when it has none); throws std::runtime_error naming
  /// `ck.source` when it is malformed.
  static std::optional<McDropout> fromCheckpoint(const Checkpoint& ck);
};

/// molecule_property's --uncertainty auto | mc-dropout and --mc-samples N, bound to `uncertainty` and `samples`.
void addMcDropoutFlags(boost::program_options::options_description& flags, std::string& uncertainty,
                       int64_t& samples);

/// Throws UsageError (naming `flag`, e.g. "--uncertainty mc-dropout") unless `model` (the --model name) applies
/// keyed dropout (gin, gcn, dmpnn) and `dropout` > 0 (the rate the model was trained with).
void requireMcDropoutModel(const std::string& flag, const std::string& model, double dropout);

/// Each molecule's key (by dataset position): FNV-1a of "smiles:" + its SMILES, or of "id:" + its id when the
/// dataset has no SMILES for it.
std::vector<uint64_t> moleculeDropoutKeys(const NpzDataset& dataset);

/// The samples: predictMolecules of `positions` once per sample k = 0 .. mc.samples - 1 under keyed dropout
/// (keys: moleculeDropoutKeys of the dataset the positions index).
std::vector<MoleculePredictions> predictMcDropoutSamples(BlockModel& model, int64_t tasks,
                                                         const std::shared_ptr<const Dataset>& dataset,
                                                         const std::vector<uint64_t>& keys,
                                                         const std::vector<int64_t>& positions,
                                                         const ShapeBuckets& buckets, const TargetScaling& scaling,
                                                         MoleculeTask task, const McDropout& mc);

/// The samples combined: their mean and population variance (combineEnsemble).
MoleculePredictions predictMcDropout(BlockModel& model, int64_t tasks, const std::shared_ptr<const Dataset>& dataset,
                                     const std::vector<uint64_t>& keys, const std::vector<int64_t>& positions,
                                     const ShapeBuckets& buckets, const TargetScaling& scaling, MoleculeTask task,
                                     const McDropout& mc);

}  // namespace gnn::app
