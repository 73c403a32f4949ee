// MoleculeFlags: the command line of the molecule programs (molecule_property, pcqm4m_graphormer, qm7_schnet):
// each program's defaults, the settings its flags set, the flags themselves and their checks in flag terms.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "app/AtomFeatures.h"
#include "app/DeviceFlags.h"
#include "app/MoleculeFeatures.h"
#include "app/MoleculeModel.h"
#include "app/Program.h"
#include "app/RunConfig.h"
#include "app/TrainingFlags.h"
#include "app/TransferInit.h"
#include "loaders/OverSizeStrategy.h"
#include "loaders/PackingStrategy.h"

namespace gnn::app {

struct MoleculeProgramDefaults {
  std::string name = "molecule_property";
  std::string summary;
  std::string epilog;               // more --help text (examples), printed before the common notes
  std::string data = "pcqm4mv2_style";  // a folder of examples/data
  std::string targetCols;           // default --target-cols
  std::string model = "gin";
  std::vector<std::string> models = {"gin", "gcn"};  // what --model accepts
  std::string strategy = "plan";
  int64_t batchSize = 128;
  int64_t layers = 5, hidden = 300;     // --layers, --hidden (gin, gcn; schnet: interactions and width)
  std::string targetScaling = "standard";  // schnet programs: "atomref"
  std::string overSize = "error";          // Graphormer programs: "skip" (molecules above --max-node)
  std::string split = "auto";
  // Regression's default loss and selection metric (app/RegressionDefaults.h): "chemprop" (MSE, RMSE), "ogb-lsc"
  // or "mae" (L1, MAE); data in the PCQM4Mv2 layout is OGB-LSC's in every program.
  std::string regression = "chemprop";
  TrainingDefaults training;
};

/// The program's settings, as its command line sets them (addMoleculeFlags).
struct MoleculeSettings {
  std::string data, format, smilesCol = "smiles", targetCols, splitCol, split = "auto", splitFile, task = "auto",
      targetScaling = "standard", strategy = "plan", overSize = "error", predict;
  int64_t numNodes = 0, numEdges = 0, numGraphs = 0, batchSize = 128, limit = -1, prefetch = 2, packWindow = 0;
  bool paddingReportOnly = false, profile = false;
  int64_t evalBuckets = 4;  // --eval-buckets: batch shapes of evaluation and --predict (0, 1: one shape)
  int64_t ensembleSize = 1;  // --ensemble-size: members trained from seeds --seed .. --seed + N - 1 (app/Ensemble.h)
  std::string calibration = "auto";  // --calibration: of an ensemble's outputs, fitted on validation
  std::string uncertainty = "auto";  // --uncertainty: auto | mc-dropout (app/McDropout.h)
  int64_t mcSamples = 10;            // --mc-samples: MC dropout's stochastic passes
  std::string loss = "auto";  // --loss: regression's training loss (auto: l1)
  std::string metric;        // --metric: comma-separated, the first selects the best epoch ("": the task's default)
  bool classBalance = false;  // --class-balance
  MoleculeModelSpec spec;
  MoleculeFeatureOptions features;  // --molecule-features, --molecule-features-file, --molecule-features-scaling
  AtomFeatureOptions atomFeatures;  // --atom-features, --atom-features-scaling
  TrainingFlags training;
  DeviceFlags device;
  TransferFlags transfer;  // --init-from, --freeze-encoder

  /// Binds the flags that define a run (its checkpoints keep them; --load and --resume restore them); batching and
  /// --metric as flags outside the model, which an evaluation-only --load may change.
  void bind(RunConfig& config);
  /// --strategy ("auto": pad for Graphormer, plan otherwise) and --oversize; UsageError for another value.
  PackingStrategy packing() const;
  OverSizeStrategy overSizeStrategy() const;
};

/// Adds every flag of the program (`d`'s defaults and models) to `prog`, bound to `s`.
void addMoleculeFlags(Program& prog, MoleculeSettings& s, const MoleculeProgramDefaults& d);
/// The defaults that depend on the model, once the configuration is restored (`continued`: from a checkpoint).
/// --norm auto becomes OGB's BatchNorm where one model copy trains, and LayerNorm where each replica or fp16 copy
/// would keep its own running statistics (--replicas > 1, --precision fp16) or where a continued run's
/// configuration predates --norm (its model has LayerNorm). dmpnn trains with Chemprop's batches of 50 (a new run)
/// and its Noam schedule unless --batch-size or --schedule is given.
void resolveModelDefaults(MoleculeSettings& s, const Program& prog, bool continued);
/// Checks the values in flag terms (UsageError naming the flag), before any work: ranges, flags that exclude each
/// other, widths and batch sizes within the machine's memory (`sizesFrom`: "" when they are the command line's,
/// else the checkpoint they were restored from), --predict writable.
void checkMoleculeFlags(const Program& prog, const MoleculeSettings& s, const MoleculeProgramDefaults& d,
                        const std::string& sizesFrom);

}  // namespace gnn::app
