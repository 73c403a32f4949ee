// AtomFeatures: the user's per-atom descriptors (--atom-features FILE, data/AtomFeatureFile.h for the layouts),
// Chemprop v2's --atom-features-path. Each molecule of the run reads the rows of its index in the input (rejected
// molecules keep their rows, so rows line up with the input's molecules), which must be as many as the atoms of
// the parsed molecule (RDKit's order, heavy atoms; a mismatch is an error naming the file, the molecule and its
// line). The values travel in Graph::nodeFeatures [atoms, width] float32, so every loader carries them as
// Batch::nodeFeatures (padding atoms' rows 0). Models that read them: gin and gcn add Linear(width, hidden) of them
// to the atom encoder's output; dmpnn reads them beside the atom's categories in W_i and W_o (Chemprop's extra atom
// features V_f). Graphormer and SchNet refuse the flag.
//
// Scaling (--atom-features-scaling), per column with the training molecules' atoms: auto (default: standardise
// every column but those whose training values are all 0 or 1, one-hot or flag columns, which stay as given) |
// standard (every column: (v - mean) / std, the population std, 1 for a constant column) | none. A missing value
// (NaN, +-inf in the file, or a value beyond float32 after scaling) becomes the column's training mean: 0 in a
// standardised column. The statistics, file name, width and column names are derived once
// (config.derived.atom_features) and kept in checkpoints; `predict --atom-features FILE` reads the new molecules'
// rows and scales them with the checkpoint's statistics.
//
//   AtomFeatureFile f = AtomFeatureFile::read("atoms.npz");
//   app::AtomFeatureMatrix m = app::gatherAtomFeatures(f, *dataset, dataset->size());
//   app::AtomFeatureScaling s = app::AtomFeatureScaling::fit(m, trainRows, "atoms.npz", "auto");
//   auto featured = std::make_shared<app::AtomFeatureDataset>(dataset, s.apply(m), m.ptr, s.width);
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
#include "data/AtomFeatureFile.h"
#include "data/Dataset.h"
#include "data/NpzDataset.h"

namespace gnn::app {

/// The flags, as the command line sets them.
struct AtomFeatureOptions {
  std::string file;              // --atom-features
  std::string scaling = "auto";  // --atom-features-scaling: auto | standard | none
  bool any() const { return !file.empty(); }

  void addTo(po::options_description& flags);
  /// Binds the flags addTo added (checkpoints keep them).
  void bind(RunConfig& config);
  /// UsageError naming the flag: an unknown scaling, a scaling without a file, a model that reads no atom
  /// features (Graphormer, SchNet), a file that does not exist.
  void validate(const MoleculeModelSpec& spec, const Program* prog) const;

 private:
  bool added_ = false;
};

/// The file's rows of dataset positions 0 .. rows - 1, before scaling (NaN where missing).
struct AtomFeatureMatrix {
  int64_t rows = 0, width = 0;
  std::vector<int64_t> ptr;        // [rows + 1]: position i's atoms are rows ptr[i] .. ptr[i + 1] - 1
  std::vector<double> values;      // [ptr.back(), width]
  std::vector<std::string> names;  // the file's column names
  bool fileHasHeader = false;
};

/// Position i reads the file's molecule dataset.sourceIndex(i). Throws std::runtime_error naming the file, the
/// molecule and its line when the file has no rows for it or another number of atoms than the parsed molecule.
AtomFeatureMatrix gatherAtomFeatures(const AtomFeatureFile& file, const NpzDataset& dataset, int64_t rows);

/// How the columns are scaled, from the training molecules' atoms; what checkpoints keep.
struct AtomFeatureScaling {
  std::string file, scaling;  // the flags of the run that fitted it (file: as given, for messages)
  int64_t width = 0;
  std::vector<std::string> names;
  bool fileHasHeader = false;
  std::vector<double> mean, std;  // per column; std 1 where not scaled
  std::vector<uint8_t> scaled;    // per column: 1 standardised, 0 as given

  /// Statistics over the finite values of the atoms of `trainRows` (dataset positions), in their order.
  static AtomFeatureScaling fit(const AtomFeatureMatrix& m, const std::vector<int64_t>& trainRows,
                                const std::string& file, const std::string& scaling);
  /// Throws std::runtime_error naming `source` (a checkpoint) when `m` has another width, or a header whose
  /// names differ from the fitted file's.
  void check(const AtomFeatureMatrix& m, const std::string& source) const;
  /// The scaled values as float32 [m.ptr.back(), width], missing values replaced (see above).
  std::vector<float> apply(const AtomFeatureMatrix& m) const;
  nlohmann::json toJson() const;
  /// Throws std::runtime_error naming `source` when `j` is malformed.
  static AtomFeatureScaling fromJson(const nlohmann::json& j, const std::string& source);
};

/// `base`'s graphs, position i carrying rows ptr[i] .. ptr[i + 1] - 1 of `values` ([rows, width]) as
/// Graph::nodeFeatures [atoms, width].
class AtomFeatureDataset : public Dataset {
 public:
  AtomFeatureDataset(std::shared_ptr<const Dataset> base, std::vector<float> values, std::vector<int64_t> ptr,
                     int64_t width);
  size_t size() const override { return base_->size(); }
  /// Throws std::out_of_range for a position past the rows gathered, std::runtime_error when the graph's atoms
  /// are not its rows' count.
  Graph get(size_t i) const override;
  int64_t numNodes(size_t i) const override { return base_->numNodes(i); }
  int64_t numEdges(size_t i) const override { return base_->numEdges(i); }

 private:
  std::shared_ptr<const Dataset> base_;
  std::vector<float> values_;
  std::vector<int64_t> ptr_;
  int64_t width_;
};

/// For the training programs: the file's rows of the run's molecules (data.size of them), their scaling derived
/// once under config.derived["atom_features"] from the training split (or restored from the checkpoint continued,
/// `source`), and `all` carrying them; sets spec.nodeFeatures. `all` itself when `o` names no file.
std::shared_ptr<const Dataset> attachAtomFeatures(const AtomFeatureOptions& o, const MoleculeData& data,
                                                  std::shared_ptr<const Dataset> all, RunConfig& config,
                                                  MoleculeModelSpec& spec, const std::string& source);

/// The atom features a checkpoint's configuration records (nullopt: none); std::runtime_error naming `checkpoint`
/// when they are malformed or their statistics are missing. `predict` asks before building the model.
std::optional<AtomFeatureScaling> checkpointAtomFeatures(const nlohmann::json& config, const std::string& checkpoint);

/// For `predict`: `ds` carrying `file`'s rows of `dataset`'s molecules, scaled with the checkpoint's statistics, or
/// `ds` itself for a checkpoint without atom features. UsageError when the file is missing (the checkpoint needs
/// one) or given in vain; std::runtime_error naming the checkpoint for another width, naming the file for rows
/// that do not match the molecules.
std::shared_ptr<const Dataset> attachCheckpointAtomFeatures(const nlohmann::json& config, const std::string& checkpoint,
                                                            const NpzDataset& dataset, std::shared_ptr<const Dataset> ds,
                                                            const std::string& file);

}  // namespace gnn::app
