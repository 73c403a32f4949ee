// TransferInit: a molecule model started from another run's encoder (--init-from CKPT): every parameter but
// the prediction head's is copied from the checkpoint, the head keeps its fresh initialisation, so the new run
// may predict other targets or another task (a classifier on an encoder trained for regression). With
// --freeze-encoder the copied parameters are frozen: they need no gradient and are left out of the optimizer,
// so training changes the head only. Encoder and head are split where MoleculeEmbeddings splits them: the
// encoder computes the molecule's vector, the head reads it (gin, gcn, slim, base: "head"; dmpnn: its FFN
// "ffn.*"; schnet: its atomwise head "lin1", "lin2").
//
// The checkpoint's weights are its best validation epoch's when it kept them ("best.*", what `predict` applies),
// else its last. Its model must be the one this run builds with the same widths: a parameter missing on either
// side or of another shape is refused naming the parameter, both shapes and the checkpoint. A run that continues
// (--load, --resume) already holds the copied weights: --init-from is refused with them, and the flags are part of
// the run's configuration (init_from, freeze_encoder), so a continued run keeps its encoder frozen.
//
//   app::TransferFlags t;
//   t.addTo(prog.group("Model and task"));
//   t.bind(config);                                     // recorded in checkpoints and restored by --load
//   t.check(prog, trainingFlags);                       // before the run continues a checkpoint
//   std::vector<Variable> trained = t.prepare(model, spec, trainingFlags.continuing(), prog);
//   auto opt = trainingFlags.makeOptimizer({{trained, weightDecay}});
#pragma once
#include <string>
#include <vector>

#include "app/MoleculeModel.h"
#include "app/Program.h"
#include "app/RunConfig.h"
#include "app/TrainingFlags.h"
#include "models/BlockModel.h"

namespace gnn::app {

/// The modules of `spec`'s model that make its prediction head (their parameters are named "<module>.*").
std::vector<std::string> moleculeHeadModules(const MoleculeModelSpec& spec);
/// Whether parameter `name` (as namedParameters() gives it) belongs to the head.
bool isHeadParameter(const MoleculeModelSpec& spec, const std::string& name);

/// What initEncoderFrom() copied.
struct EncoderInit {
  std::string weights;  // "best" or "model": which of the checkpoint's weights
  int64_t parameters = 0, elements = 0;
};

/// Copies every encoder parameter of `model` (built from `spec`) from the checkpoint at `path`. Checked before
/// anything is copied: the checkpoint's configuration names the same --model (UsageError naming both), every
/// encoder parameter is there with this model's shape and dtype, the checkpoint's encoder has no parameter this
/// model lacks (UsageError naming the parameter, both shapes and `path`), every value is finite.
EncoderInit initEncoderFrom(const std::string& path, BlockModel& model, const MoleculeModelSpec& spec);

/// Freezes the encoder (its parameters no longer require a gradient); returns the head's parameters, the ones
/// left to train.
std::vector<Variable> freezeEncoder(BlockModel& model, const MoleculeModelSpec& spec);

struct TransferFlags {
  std::string initFrom;
  bool freezeEncoder = false;

  /// --init-from CKPT and --freeze-encoder.
  void addTo(po::options_description& flags);
  /// Saved in the run's configuration as init_from and freeze_encoder.
  void bind(RunConfig& config);
  /// Before a checkpoint is continued: UsageError for --init-from with --load or --resume, for a --init-from
  /// file that does not exist, for --freeze-encoder without --init-from in a new run.
  void check(const Program& prog, const TrainingFlags& training) const;
  /// After the model is built: a new run with --init-from copies the encoder (a note on stderr unless
  /// `quiet`); --freeze-encoder freezes it. Returns the parameters to train (all, or the head's).
  std::vector<Variable> prepare(BlockModel& model, const MoleculeModelSpec& spec, bool continuing,
                                const Program& prog, bool quiet) const;
};

}  // namespace gnn::app
