// MoleculeFeatures: one vector of molecule-level features per molecule, concatenated to the model's readout
// before its head (Chemprop's extra molecule descriptors X_d: v1's --features_generator / --features_path, v2's
// --molecule-featurizers / --descriptors-path). Models that read them: gin, gcn (the pooled vector before the
// linear head) and dmpnn (after the aggregation, before the FFN); they travel in each graph's
// Graph::graphFeatures, so fixed-size batches carry them as Batch::graphFeatures, 0 on padding graphs.
//
// Sources (either or both; computed columns first, the file's after them):
//   --molecule-features morgan | morgan-count | rdkit2d   computed with RDKit from each molecule's SMILES
//       (data/MoleculeDescriptors.h: 2048 Morgan bits or counts, radius 2; or 129 2D descriptors), once per run,
//       on every thread (each molecule whole on one thread: the same values for any thread count)
//   --molecule-features-file FILE   the user's own, one row per molecule of the input in its order (the rows
//       of rejected molecules included: a molecule reads the row of its index in the input), either
//       - .npz with a float32 or float64 array `features` [molecules, width], or
//       - CSV (optionally .gz): one line per molecule, `width` numbers separated by commas; an optional first
//         line of column names (any field that is not a number makes the first line a header). An empty field,
//         nan, inf are missing values.
//
// Scaling (--molecule-features-scaling): auto (default: rdkit2d's columns by quantiles, the file's standardised,
// fingerprints left 0/1 or counts, as Chemprop leaves them) | quantile (every column) | standard (every column) |
// none. A quantile-scaled column becomes its empirical CDF over the training molecules: 101 quantiles of the
// finite training values are kept, a value maps to its fractional rank among them (linear between neighbouring
// quantiles, the middle of a run of equal ones), so every value lands in [0, 1] and a missing one becomes 0.5
// (the median). This is what Chemprop's `rdkit_2d_normalized` does with CDFs fitted on ChEMBL (descriptastorus):
// a few RDKit descriptors explode on small molecules (Kappa3 of propan-2-ol is 1,129, 33 standard deviations
// above ESOL's mean), and a linear model of a standardised column extrapolates them into absurd predictions
// (that molecule: log-solubility 12.1 for 0.43). A standardised column becomes
// (v - mean) / std with the training molecules' mean and population std over their finite values (std 1 for a
// constant column, as Chemprop's StandardScaler). Non-finite values (NaN, +-inf: a descriptor RDKit cannot compute,
// a molecule whose SMILES does not parse, a missing value of the file) become the column's training mean, i.e.
// 0 after standardisation, and 0 in an unscaled column (Chemprop's replace_nan_token 0).
//
// The statistics, kind, file, width and column names are derived once (config.derived.molecule_features) and kept
// in checkpoints; `predict` computes the same features for new molecules (the file source: its own
// --molecule-features-file) and refuses a checkpoint whose features it cannot reproduce.
//
//   app::MoleculeFeatureMatrix m = app::computeMoleculeFeatures("rdkit2d", "", *dataset, dataset->size(), 2);
//   app::MoleculeFeatureScaling s = app::MoleculeFeatureScaling::fit(m, trainRows, "rdkit2d", "", "auto");
//   auto featured = std::make_shared<app::MoleculeFeatureDataset>(dataset, s.apply(m), m.width);
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/MoleculeData.h"
#include "app/MoleculeModel.h"
#include "app/Program.h"
#include "app/RunConfig.h"
#include "data/Dataset.h"
#include "data/NpzDataset.h"

namespace gnn::app {

/// The flags, as the command line sets them.
struct MoleculeFeatureOptions {
  std::string kind;              // --molecule-features: "" | morgan | morgan-count | rdkit2d
  std::string file;              // --molecule-features-file
  std::string scaling = "auto";  // --molecule-features-scaling: auto | quantile | standard | none
  bool any() const { return !kind.empty() || !file.empty(); }

  void addTo(po::options_description& flags);
  /// Binds the flags addTo added (checkpoints keep them).
  void bind(RunConfig& config);
  /// UsageError naming the flag: an unknown kind or scaling, a scaling without features, a model that reads
  /// none (Graphormer, SchNet), a file that does not exist.
  void validate(const MoleculeModelSpec& spec, const Program* prog) const;

 private:
  bool added_ = false;
};

/// Features before scaling: NaN where a value is missing.
struct MoleculeFeatureMatrix {
  int64_t rows = 0, width = 0;
  std::vector<double> values;        // [rows, width], row-major
  std::vector<std::string> names;    // per column: the descriptor's name, the file's header or file_<k>
  std::vector<uint8_t> fingerprint;  // per column: 1 for Morgan bits or counts
  int64_t computedWidth = 0;         // columns computed by RDKit; the file's follow
  bool fileHasHeader = false;
  std::vector<int64_t> unparsed;     // rows whose SMILES RDKit did not parse (all their computed values NaN)
};

/// The features of dataset positions 0 .. rows - 1: `kind`'s descriptors (none for "") from each molecule's
/// SMILES, then `file`'s columns (its row dataset.sourceIndex(i)). Throws UsageError when the dataset holds no
/// SMILES to compute from, std::runtime_error naming the file (and line) for a file that cannot be used.
MoleculeFeatureMatrix computeMoleculeFeatures(const std::string& kind, const std::string& file, const NpzDataset& dataset,
                                              int64_t rows, int threads);

/// How the columns are scaled, from the training molecules; what checkpoints keep.
struct MoleculeFeatureScaling {
  std::string kind, file, scaling;  // the flags of the run that fitted it (file: as given, for messages)
  int64_t width = 0, computedWidth = 0;
  std::vector<std::string> names;  // every column's
  bool fileHasHeader = false;
  std::vector<double> mean, std;   // per column; 0 and 1 where not scaled
  std::vector<uint8_t> scaled;     // per column: 0 none, 1 standardised, 2 by quantiles
  std::vector<std::vector<double>> quantiles;  // per column: kQuantiles + 1 knots where scaled == 2, else empty
  static constexpr int kQuantiles = 100;

  /// mean and std of each column over the finite values of `trainRows` (dataset positions).
  static MoleculeFeatureScaling fit(const MoleculeFeatureMatrix& m, const std::vector<int64_t>& trainRows,
                                    const std::string& kind, const std::string& file, const std::string& scaling);
  /// Throws std::runtime_error naming `source` (a checkpoint) when `m` has other columns than those fitted: another
  /// width, other descriptor names (another RDKit), a file of another width or header.
  void check(const MoleculeFeatureMatrix& m, const std::string& source) const;
  /// The scaled values as float32 [m.rows, width], non-finite values replaced (see above).
  std::vector<float> apply(const MoleculeFeatureMatrix& m) const;
  nlohmann::json toJson() const;
  /// Throws std::runtime_error naming `source` when `j` is malformed.
  static MoleculeFeatureScaling fromJson(const nlohmann::json& j, const std::string& source);
};

/// `base`'s graphs, each carrying its row of `values` ([rows, width]) as Graph::graphFeatures [width].
class MoleculeFeatureDataset : public Dataset {
 public:
  MoleculeFeatureDataset(std::shared_ptr<const Dataset> base, std::vector<float> values, int64_t width);
  size_t size() const override { return base_->size(); }
  /// Throws std::out_of_range for a position past the rows the features were computed for.
  Graph get(size_t i) const override;
  int64_t numNodes(size_t i) const override { return base_->numNodes(i); }
  int64_t numEdges(size_t i) const override { return base_->numEdges(i); }

 private:
  std::shared_ptr<const Dataset> base_;
  std::vector<float> values_;
  int64_t width_, rows_;
};

/// For the training programs: the features of the run's molecules (data.size of them), their scaling derived once
/// under config.derived["molecule_features"] from the training split (or restored from the checkpoint continued,
/// `source`), and `all` as the model reads it, with the features; sets spec.graphFeatures. `all` itself when
/// `o` asks for none. Notes (molecules whose SMILES did not parse) go to stderr unless `quiet`.
std::shared_ptr<const Dataset> attachMoleculeFeatures(const MoleculeFeatureOptions& o, const MoleculeData& data,
                                                      std::shared_ptr<const Dataset> all, RunConfig& config,
                                                      MoleculeModelSpec& spec, const std::string& source,
                                                      const std::string& program, bool quiet);

/// The molecule features a checkpoint's configuration records (nullopt: none); std::runtime_error naming
/// `checkpoint` when they are malformed or their statistics are missing. `predict` asks before building the model.
std::optional<MoleculeFeatureScaling> checkpointFeatures(const nlohmann::json& config, const std::string& checkpoint);

/// For `predict`: the features a checkpoint's configuration (`config`, from `checkpoint`) records, computed for the
/// new molecules of `dataset` (its --molecule-features-file `file` for a file's columns) and scaled with the
/// checkpoint's statistics: `ds` with them, or `ds` itself when the checkpoint has none. UsageError when the
/// file is missing or given in vain; std::runtime_error naming the checkpoint when its features cannot be
/// reproduced (another width, other descriptors).
std::shared_ptr<const Dataset> attachCheckpointFeatures(const nlohmann::json& config, const std::string& checkpoint,
                                                        const NpzDataset& dataset, std::shared_ptr<const Dataset> ds,
                                                        const std::string& file, int threads);

}  // namespace gnn::app
