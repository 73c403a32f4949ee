#include "app/PredictProgram.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "app/AtomFeatures.h"
#include "app/Ensemble.h"
#include "app/McDropout.h"
#include "app/MoleculeData.h"
#include "app/MoleculeEmbeddings.h"
#include "app/MoleculeFeatures.h"
#include "app/MoleculeModel.h"
#include "app/MoleculePredictions.h"
#include "app/NodeFlags.h"
#include "app/Program.h"
#include "app/PyGModelPredict.h"
#include "app/RunConfig.h"
#include "app/TrainingFlags.h"
#include "data/MoleculeSource.h"
#include "data/NpzDataset.h"
#include "data/TargetScaling.h"
#include "gnn/io/Checkpoint.h"
#include "gnn/ops/MatmulPrecision.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"
#include "loaders/ShapeBuckets.h"

namespace gnn::app {

namespace {

namespace fs = std::filesystem;

// Graphormer's batches hold [graphs x M x M x hops x 3] int64 path features: 128 atoms is ~127 MB at 65 graphs.
constexpr int64_t kMaxGraphormerAtoms = 128;

// The program's settings, as its command line sets them.
struct PredictFlags {
  std::string checkpoint, input, outPath, embeddingsPath, format, smilesCol = "smiles", weights = "best";
  std::string featuresFile;  // --molecule-features-file: the input's own rows, for a checkpoint trained with one
  std::string atomFeaturesFile;  // --atom-features: the input's own atom rows, for a checkpoint trained with them
  int threads = 0;
  bool quiet = false;
  std::string precision = "auto";
  int64_t evalBuckets = 4;
  std::string uncertainty = "auto";
  int64_t mcSamples = 10;
  PyGPredictFlags pyg;  // --pyg-model: a PyTorch Geometric model on a node dataset
};

void addPredictFlags(Program& prog, PredictFlags& f) {
  prog.flags().add_options()(
      "checkpoint", po::value(&f.checkpoint)->value_name("FILE"), "a checkpoint written by --save")(
      "input", po::value(&f.input)->value_name("FILE"),
      ".smi, .csv, .sdf, .xyz (each optionally .gz) or a PCQM4Mv2 folder")(
      "out", po::value(&f.outPath)->value_name("FILE.csv"), "where to write the predictions")(
      "embeddings", po::value(&f.embeddingsPath)->value_name("FILE.npz"),
      "also write each predicted molecule's learned representation (the vector the model's head reads) as NumPy "
      ".npz: float32 embeddings [molecules, width] with int64 line and id and the SMILES (smiles, smiles_ptr), "
      "rows in the CSV's order")(
      "format", po::value(&f.format)->value_name("NAME"),
      "smi | csv | sdf | xyz | pcqm4mv2 (default: from the file name)")(
      "smiles-col", value(&f.smilesCol, "smiles"), "CSV: the SMILES column")(
      "molecule-features-file", po::value(&f.featuresFile)->value_name("FILE"),
      "for a checkpoint trained with --molecule-features-file: these molecules' features, one row per molecule of "
      "--input in its order (.npz array 'features' or CSV, as in training); computed descriptors "
      "(--molecule-features) need nothing")(
      "atom-features", po::value(&f.atomFeaturesFile)->value_name("FILE"),
      "for a checkpoint trained with --atom-features: these molecules' per-atom descriptors, every molecule of "
      "--input in its order (rejected ones included), atoms in RDKit's order (.npz 'features' and 'atom_ptr', or "
      "CSV molecule,atom,f1,...,fk, as in training), scaled with the training statistics")(
      "weights", value(&f.weights, "best"),
      "best (the best validation epoch's weights, as --predict writes) | last (the weights at the end)")(
      "threads", value(&f.threads, 0), "threads (0: every core)")(
      "precision", value(&f.precision, "auto"),
      "matrix products in fp32 | bf16 (bfloat16 inputs, fp32 accumulation); auto: the precision the checkpoint's "
      "run evaluated in, so that predict reproduces its --predict bit for bit")(
      "eval-buckets", value(&f.evalBuckets, int64_t{4}),
      "batch the molecules in up to N fixed shapes chosen from their sizes, each in the smallest that holds it "
      "(0 or 1: one shape that fits the largest); the predictions are the same bits either way")(
      "uncertainty", value(&f.uncertainty, "auto"),
      "auto (as the checkpoint's run predicted: an ensemble's or a regression-mve model's variance, or MC dropout "
      "for a run with --uncertainty mc-dropout, with its samples, seed and calibration) | mc-dropout (MC dropout of "
      "a gin, gcn or dmpnn model trained with --dropout > 0 whose run did not use it: --mc-samples passes keyed by "
      "the run's --seed, uncalibrated)")(
      "mc-samples", value(&f.mcSamples, int64_t{10}),
      "MC dropout's stochastic passes per molecule (default: the checkpoint's run's --mc-samples, else 10; another "
      "count than the run's gives other bits than its --predict)")(
      "quiet,q", po::bool_switch(&f.quiet), "no notes on stderr (rejected molecules are still listed)");
  prog.flags().add_options()(
      "pyg-model", po::value(&f.pyg.spec)->value_name("SPEC.json"),
      "instead of a checkpoint: a PyTorch Geometric model, {\"class\": \"GCN|GraphSAGE|GIN|GAT|PNA|EdgeCNN\", "
      "\"args\": {<its constructor arguments>}} (scripts/export_pyg_model.py writes it), run in evaluation mode on "
      "--data; its outputs [num_nodes, out_channels] go to --out as float32 .npy. PyG's to_hetero of a GraphSAGE: "
      "{\"to_hetero\": {\"model\": {\"class\": \"GraphSAGE\", \"args\": {...}}, \"aggr\": \"sum\"}, "
      "\"to_undirected\": true|false (PyG's T.ToUndirected() on the data first), \"target\": \"<node type>\"} on a "
      "dataset in OGB's heterogeneous layout whose node types all have features; the target type's outputs go to "
      "--out. The same keys with {\"to_homogeneous\": {\"input\": {\"class\": \"HeteroDictLinear\", ...}, "
      "\"layers\": [{\"class\": \"RGCNConv\", ...}], \"act\": \"relu\"}} (R-GCN on the typed graph) or {\"hgt\": "
      "{\"hidden_channels\", \"out_channels\", \"num_heads\", \"num_layers\"}} (hgt_dblp.py's HGT); docs/pyg.md")(
      "state-dict", po::value(&f.pyg.stateDict)->value_name("STATE.pt"),
      "--pyg-model: its weights, torch.save(model.state_dict(), path) (read without Python; only tensors are "
      "accepted)")(
      "data", po::value(&f.pyg.data)->value_name("DIR"),
      "--pyg-model: a node dataset in OGB's node-property raw layout (raw/node-feat.csv.gz, raw/edge.csv.gz), "
      "features as stored; for a heterogeneous model OGB's heterogeneous layout (raw/triplet-type-list.csv.gz)")(
      "add-inverse-edges", po::value(&f.pyg.addInverseEdges)->default_value("auto"),
      (std::string("--pyg-model: ") + kAddInverseEdgesHelp).c_str());
}

// The flags checked before the checkpoint is read (--threads applied as it is checked).
void checkPredictFlags(const PredictFlags& f) {
  if (f.checkpoint.empty()) throw UsageError("--checkpoint FILE is required");
  if (f.input.empty()) throw UsageError("--input FILE is required");
  if (f.outPath.empty()) throw UsageError("--out FILE.csv is required");
  requireOneOf("--weights", f.weights, {"best", "last"});
  requireOneOf("--precision", f.precision, {"auto", "fp32", "bf16"});
  if (!f.format.empty()) requireOneOf("--format", f.format, {"smi", "csv", "sdf", "xyz", "pcqm4mv2"});
  applyThreads(f.threads);
  requireRange("--eval-buckets", static_cast<double>(f.evalBuckets), 0, 16);
  checkWritable("--out", f.outPath);
  if (!f.embeddingsPath.empty()) checkWritable("--embeddings", f.embeddingsPath);
  if (!fs::exists(f.input)) throw UsageError("--input " + f.input + ": no such file");
  if (!f.atomFeaturesFile.empty() && !fs::is_regular_file(f.atomFeaturesFile))
    throw UsageError("--atom-features " + f.atomFeaturesFile + ": no such file");
}

// --precision auto: the precision the checkpoint's run evaluated in.
void applyPrecision(PredictFlags& f, Checkpoint& ck) {
  if (f.precision == "auto")
    f.precision = ck.meta.contains("matmul_precision") && ck.meta["matmul_precision"] == "bf16" ? "bf16" : "fp32";
  // This thread's context is the program's (Program::run): every prediction runs under it.
  ExecutionContext::current().setMatmulPrecision(parseMatmulPrecision(f.precision));
}

// The program that wrote the checkpoint, one of those whose checkpoints predict applies.
std::string checkpointProgram(const Checkpoint& ck, const std::string& checkpoint) {
  const nlohmann::json& writtenBy = ck.meta.contains("program") ? ck.meta["program"] : nlohmann::json();
  const std::string program = writtenBy.is_string() ? writtenBy.get<std::string>() : std::string();
  const std::string programs = "molecule_property, pcqm4m_graphormer or qm7_schnet";
  if (program != "molecule_property" && program != "pcqm4m_graphormer" && program != "qm7_schnet")
    throw std::runtime_error(checkpoint + ": not a checkpoint of " + programs + " (" +
                             (program.empty() ? std::string("its metadata names no program")
                                              : "program '" + program + "'") +
                             "); predict applies the checkpoints they write with --save");
  return program;
}

std::runtime_error unusable(const std::string& checkpoint, const std::string& why) {
  return std::runtime_error(checkpoint + ": not a checkpoint predict can use: " + why);
}

// Every key predict reads is looked up through `need`; one missing is named, and so is the one being read
// when a value has the wrong type (never the JSON library's message).
class MetadataReader {
 public:
  MetadataReader(const std::string& checkpoint, const std::string& program)
      : checkpoint_(checkpoint), program_(program) {}

  const nlohmann::json& need(const nlohmann::json& parent, const char* key, const std::string& under) {
    reading = under.empty() ? std::string(key) : under + "." + key;
    if (!parent.is_object())
      throw unusable(checkpoint_, "its metadata's '" + (under.empty() ? std::string("(top level)") : under) +
                                      "' is not a JSON object");
    if (!parent.contains(key))
      throw unusable(checkpoint_, "its metadata lacks '" + std::string(key) + "'" +
                                      (under.empty() ? "" : " (under " + under + ")") + ", which " + program_ +
                                      " writes: the file was changed since, or comes from another version");
    return parent[key];
  }

  std::string reading;  // the key being read, named when its value is malformed

 private:
  const std::string& checkpoint_;
  const std::string& program_;
};

// What predict reads from a checkpoint's configuration: the model, its targets and task, how the targets were
// scaled and the molecules featurised, and the batch shape of the run's evaluation.
struct CheckpointModel {
  MoleculeModelSpec spec;
  std::vector<std::string> targets;
  MoleculeTask task = MoleculeTask::Regression;
  TargetScaling scaling;
  FixedSizeOptions fixed;
  std::string shapeKey;
  nlohmann::json featurisation;
};

CheckpointModel readCheckpointModel(const Checkpoint& ck, const std::string& checkpoint, const std::string& program) {
  MetadataReader r(checkpoint, program);
  CheckpointModel m;
  try {
    const nlohmann::json& config = r.need(ck.meta, "config", "");
    const nlohmann::json& derived = r.need(config, "derived", "config");
    r.reading = "config";
    m.spec = MoleculeModelSpec::fromConfig(config);
    checkpointFeatures(config, checkpoint);  // refused here, before a model of the wrong width is built
    checkpointAtomFeatures(config, checkpoint);
    m.targets = r.need(derived, "targets", "config.derived").get<std::vector<std::string>>();
    const nlohmann::json& taskName = r.need(derived, "task", "config.derived");
    if (taskName != "classification" && taskName != "regression" && taskName != "regression-mve")
      throw unusable(checkpoint, "its task (config.derived.task) is " + taskName.dump() +
                                     ", not classification, regression or regression-mve");
    m.task = taskName == "classification"   ? MoleculeTask::Classification
             : taskName == "regression-mve" ? MoleculeTask::RegressionMve
                                            : MoleculeTask::Regression;
    const nlohmann::json& scalingJson = r.need(derived, "target_scaling", "config.derived");
    try {
      m.scaling = TargetScaling::fromJson(scalingJson);
    } catch (const std::runtime_error& e) {
      throw unusable(checkpoint,
                     std::string("its metadata's 'config.derived.target_scaling' is out of range (") + e.what() + ")");
    }
    m.featurisation = r.need(derived, "featurisation", "config.derived");
    if (!m.featurisation.is_object())
      throw unusable(checkpoint, "its metadata's 'config.derived.featurisation' is not an object");
    // The evaluation shape of the run (its training shape in checkpoints that have none).
    m.shapeKey = derived.contains("eval_fixed") ? "eval_fixed" : "fixed";
    const nlohmann::json& shape = r.need(derived, m.shapeKey.c_str(), "config.derived");
    const std::string under = "config.derived." + m.shapeKey;
    m.fixed.numNodes = r.need(shape, "num_nodes", under).get<int64_t>();
    m.fixed.numEdges = r.need(shape, "num_edges", under).get<int64_t>();
    m.fixed.numGraphs = r.need(shape, "num_graphs", under).get<int64_t>();
    m.fixed.maxNodesPerGraph = r.need(shape, "max_nodes_per_graph", under).get<int64_t>();
    r.reading = under;
    m.fixed.validate();
  } catch (const nlohmann::json::exception&) {
    throw unusable(checkpoint, "its metadata's '" + r.reading + "' is malformed");
  } catch (const std::invalid_argument& e) {
    throw unusable(checkpoint, "its metadata's '" + r.reading + "' is out of range (" + e.what() + ")");
  }
  if (m.targets.empty()) throw unusable(checkpoint, "its metadata names no target (config.derived.targets is empty)");
  return m;
}

// The batch shape's fields as the checkpoint's configuration names them, for the memory checks.
std::array<std::string, 4> shapeFields(const std::string& shapeKey) {
  const std::string shapeAt = "derived." + shapeKey + ".";
  return {shapeAt + "num_nodes", shapeAt + "num_edges", shapeAt + "num_graphs", shapeAt + "max_nodes_per_graph"};
}

// The checkpoint's model applies to this input and fits in memory; its configuration holds a valid model.
void checkModelApplies(const PredictFlags& f, const CheckpointModel& m) {
  const MoleculeModelSpec& spec = m.spec;
  // SchNet reads 3D coordinates: molecules given as SMILES (smi, csv, a PCQM4Mv2 folder) get them only from
  // the seeded conformers a featurisation embeds, and a run that read its coordinates from files embeds none.
  const std::string inputFormat = f.format.empty() ? guessMoleculeFormat(f.input) : f.format;
  const nlohmann::json& conformers =
      m.featurisation.contains("conformers") ? m.featurisation["conformers"] : nlohmann::json();
  if (spec.isSchNet() && inputFormat != "sdf" && inputFormat != "xyz" &&
      !(conformers.is_boolean() && conformers.get<bool>()))
    throw UsageError("--input " + f.input + ": " + f.checkpoint +
                     " holds a SchNet model, which reads 3D atom coordinates, and " +
                     (inputFormat.empty() ? std::string("this input") : inputFormat + " input") +
                     " has none (the run it comes from read coordinates from its files, so its featurisation "
                     "embeds no conformers for SMILES): give --input as SDF or XYZ with 3D coordinates");
  spec.requireFitsInMemory(f.checkpoint, /*training=*/false);
  spec.requireBatchFitsInMemory(m.fixed, shapeFields(m.shapeKey), f.checkpoint, /*training=*/false);
  try {
    spec.validate(MoleculeModelSpec::allModels());
  } catch (const UsageError& e) {
    // The message names a training flag (--hidden 0: ...): here it is a value of the checkpoint's configuration.
    std::string what = e.what();
    const size_t space = what.find(' ');
    if (what.rfind("--", 0) == 0 && space != std::string::npos)
      for (size_t i = 2; i < space; ++i)
        if (what[i] == '-') what[i] = '_';
    throw unusable(f.checkpoint, "its configuration holds " + (what.rfind("--", 0) == 0 ? what.substr(2) : what));
  }
}

// The models that predict: the checkpoint's model, and an ensemble's members or MC dropout when the run used them
// (or --uncertainty asks for MC dropout).
struct PredictModels {
  std::unique_ptr<BlockModel> model;
  std::optional<EnsembleInfo> ensemble;
  std::optional<McDropout> mc;
  std::vector<std::unique_ptr<BlockModel>> members;
};

// MC dropout (app/McDropout.h): as the run's --predict (its samples, seed and calibration), or asked for here.
std::optional<McDropout> chooseMcDropout(const Program& prog, const PredictFlags& f, Checkpoint& ck,
                                         const MoleculeModelSpec& spec, const std::optional<EnsembleInfo>& ensemble) {
  requireOneOf("--uncertainty", f.uncertainty, {"auto", "mc-dropout"});
  std::optional<McDropout> mc = McDropout::fromCheckpoint(ck);
  if (f.uncertainty == "mc-dropout" && !mc) {
    requireMcDropoutModel("--uncertainty mc-dropout (" + f.checkpoint + ")", spec.model, spec.dropout);
    if (ensemble)
      throw UsageError("--uncertainty mc-dropout: " + f.checkpoint + " holds " +
                       (ensemble->size > 1 ? "an ensemble of " + std::to_string(ensemble->size) + " models"
                                           : std::string("a calibrated model")) +
                       ", which predicts its own way; MC dropout samples one uncalibrated model");
    mc = McDropout{};
    const nlohmann::json& config = ck.meta["config"];
    if (config.contains("seed") && config["seed"].is_number_unsigned()) mc->seed = config["seed"].get<uint64_t>();
  }
  if (prog.given("mc-samples")) {
    if (!mc)
      throw UsageError("--mc-samples applies to MC dropout: --uncertainty mc-dropout, or a checkpoint of a run "
                       "with it (" + f.checkpoint + " is neither)");
    requireRange("--mc-samples", static_cast<double>(f.mcSamples), 1, 1000);
    mc->samples = f.mcSamples;
  }
  return mc;
}

PredictModels loadModels(const Program& prog, const PredictFlags& f, Checkpoint& ck, const MoleculeModelSpec& spec) {
  PredictModels ms;
  ms.model = makeMoleculeModel(spec, 0);
  // "best.*" holds the best validation epoch's weights when the run validated at least once.
  const auto first = ms.model->namedParameters().front();
  const bool haveBest = ck.findParameter("best", first.first, first.second.shape()) != nullptr;
  ck.loadModule(f.weights == "best" && haveBest ? "best" : "model", *ms.model);
  // An ensemble checkpoint (molecule_property --ensemble-size): every member with its best validation epoch's
  // weights, combined and calibrated as its --predict was.
  ms.ensemble = EnsembleInfo::fromCheckpoint(ck);
  std::optional<EnsembleInfo>& ensemble = ms.ensemble;
  if (ensemble && ensemble->size > 1 && f.weights == "last" && prog.given("weights"))
    throw UsageError("--weights last: " + f.checkpoint + " holds an ensemble of " + std::to_string(ensemble->size) +
                     " models, which keeps each member's best validation epoch's weights only");
  // One model with a calibration fitted to its best weights (an ensemble of one): the last weights go uncalibrated.
  if (ensemble && ensemble->size == 1 && f.weights == "last") {
    if (!f.quiet && ensemble->calibration.method != "none")
      std::cerr << "predict: --weights last: the " << ensemble->calibration.method
                << " calibration was fitted to the best weights; not applied\n";
    ensemble.reset();
  }
  if (ensemble && ensemble->size > 1 && !f.embeddingsPath.empty())
    throw UsageError("--embeddings: " + f.checkpoint + " holds an ensemble of " + std::to_string(ensemble->size) +
                     " models, and an embedding is one model's");
  ms.mc = chooseMcDropout(prog, f, ck, spec, ensemble);
  if (ensemble) ms.members = loadEnsembleMembers(ck, *ensemble, spec);
  return ms;
}

// Removes a file when it goes out of scope.
struct RemovedOnExit {
  std::string path;
  ~RemovedOnExit() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

// The input featurised as the checkpoint's run featurised its molecules (in `npz`), with the checkpoint's molecule
// and atom features; the molecules RDKit rejected are listed on stderr.
struct PredictInput {
  std::shared_ptr<NpzDataset> npz;
  std::shared_ptr<const Dataset> ds;  // as the model reads it
  int64_t rejected = 0;
};

PredictInput readInput(const PredictFlags& f, Checkpoint& ck, const CheckpointModel& m, const std::string& npz) {
  buildMoleculeDataset(f.input, f.format, f.smilesCol, m.featurisation, numThreads(), npz);
  PredictInput in;
  in.npz = std::make_shared<NpzDataset>(npz);
  const NpzDataset& src = *in.npz;
  in.ds = m.spec.view(in.npz);  // SchNet: the radius graph
  // Molecule features as the checkpoint records them (kind, width, the training split's statistics).
  in.ds = attachCheckpointFeatures(ck.meta["config"], f.checkpoint, src, in.ds, f.featuresFile, numThreads());
  // The user's atom features, scaled with the checkpoint's statistics of its training atoms.
  in.ds = attachCheckpointAtomFeatures(ck.meta["config"], f.checkpoint, src, in.ds, f.atomFeaturesFile);
  nlohmann::json meta = nlohmann::json::parse(src.metadataJson(), nullptr, false);
  if (meta.is_object() && meta.contains("rejected"))
    for (const auto& r : meta["rejected"]) {
      ++in.rejected;
      std::cerr << f.input << ":" << r.value("line", int64_t{0}) << ": rejected '" << r.value("smiles", std::string())
                << "': " << r.value("reason", std::string()) << "\n";
    }
  return in;
}

// The molecules to predict, and `fixed` grown until every one fits (results do not depend on the batch's size);
// Graphormer's node-pair blocks grow with the square of their side, so they stop at kMaxGraphormerAtoms and the
// molecules above go to `tooLarge`.
std::vector<int64_t> fitBatchToInput(const Dataset& ds, const MoleculeModelSpec& spec, FixedSizeOptions& fixed,
                                     std::vector<int64_t>& tooLarge) {
  std::vector<int64_t> all;
  int64_t maxNodes = 0, maxEdges = 0;
  for (size_t i = 0; i < ds.size(); ++i) {
    if (spec.readsPairBlocks() && ds.numNodes(i) > kMaxGraphormerAtoms) {
      tooLarge.push_back(static_cast<int64_t>(i));
      continue;
    }
    all.push_back(static_cast<int64_t>(i));
    maxNodes = std::max(maxNodes, ds.numNodes(i));
    maxEdges = std::max(maxEdges, ds.numEdges(i));
  }
  if (fixed.maxNodesPerGraph > 0) fixed.maxNodesPerGraph = std::max(fixed.maxNodesPerGraph, maxNodes);
  fixed.numNodes = std::max(fixed.numNodes, fixed.rowsNeeded(maxNodes, 1));
  fixed.numEdges = std::max(fixed.numEdges, fixed.rowsNeeded(maxEdges, 1));
  return all;
}

// The predictions of the molecules `all`: an ensemble's (calibrated, as its run's --predict), MC dropout's, or the
// model's.
MoleculePredictions predictInput(PredictModels& ms, const CheckpointModel& m, const PredictInput& in,
                                 const std::vector<int64_t>& all, const ShapeBuckets& buckets) {
  const MoleculeModelSpec& spec = m.spec;
  const NpzDataset& src = *in.npz;
  const std::shared_ptr<const Dataset>& ds = in.ds;
  const MoleculeTask task = m.task;
  MoleculePredictions p;
  if (ms.ensemble) {
    std::vector<MoleculePredictions> each;
    if (ms.mc)  // the best model's samples, as the run's --predict
      each = predictMcDropoutSamples(*ms.members.front(), spec.tasks, ds, moleculeDropoutKeys(src), all, buckets,
                                     m.scaling, task, *ms.mc);
    else
      for (const auto& member : ms.members)
        each.push_back(predictMolecules(*member, spec.tasks, ds, all, buckets, m.scaling, task));
    p = combineEnsemble(each, task);
    if (task == MoleculeTask::Classification && ms.ensemble->size == 1 && !ms.mc)
      p.uncertainty = Tensor();  // as --predict
    ms.ensemble->calibration.apply(p);
  } else if (ms.mc) {
    p = predictMcDropout(*ms.model, spec.tasks, ds, moleculeDropoutKeys(src), all, buckets, m.scaling, task, *ms.mc);
  } else {
    p = predictMolecules(*ms.model, spec.tasks, ds, all, buckets, m.scaling, task);
  }
  return p;
}

// The checkpoint read and checked, the input featurised and predicted, the CSV (and embeddings) written; 1 when
// no molecule could be predicted.
int predict(const Program& prog, PredictFlags& f) {
  if (!f.pyg.spec.empty()) {
    if (!f.checkpoint.empty() || !f.input.empty())
      throw UsageError("--pyg-model runs a PyG model on --data: --checkpoint and --input are for checkpoints");
    f.pyg.out = f.outPath;
    f.pyg.quiet = f.quiet;
    applyThreads(f.threads);
    return predictPyGModel(f.pyg);
  }
  if (!f.pyg.stateDict.empty() || !f.pyg.data.empty() || prog.given("add-inverse-edges"))
    throw UsageError("--state-dict, --data and --add-inverse-edges go with --pyg-model");
  checkPredictFlags(f);
  Checkpoint ck = Checkpoint::load(f.checkpoint);
  applyPrecision(f, ck);
  const std::string program = checkpointProgram(ck, f.checkpoint);
  CheckpointModel m = readCheckpointModel(ck, f.checkpoint, program);
  checkModelApplies(f, m);
  PredictModels ms = loadModels(prog, f, ck, m.spec);

  // Featurise into a private temporary .npz, removed when done.
  const std::string npz =
      (fs::temp_directory_path() / ("gnn_predict_" + std::to_string(::getpid()) + ".npz")).string();
  RemovedOnExit cleanup{npz};
  const PredictInput in = readInput(f, ck, m, npz);
  const NpzDataset& src = *in.npz;
  std::vector<int64_t> tooLarge;
  const std::vector<int64_t> all = fitBatchToInput(*in.ds, m.spec, m.fixed, tooLarge);
  // The batch, grown to fit the input, must fit in memory too.
  m.spec.requireBatchFitsInMemory(m.fixed, shapeFields(m.shapeKey), f.checkpoint, /*training=*/false);
  // Each molecule in the smallest of a few shapes within `fixed` (--eval-buckets): the same bits as `fixed` alone.
  const ShapeBuckets buckets = inferenceBuckets(*in.ds, all, m.fixed, f.evalBuckets, m.spec.readsPairBlocks());
  MoleculePredictions p = predictInput(ms, m, in, all, buckets);
  for (int64_t i : tooLarge) p.skipped.push_back(i);
  for (int64_t i : p.skipped)
    std::cerr << f.input << ":" << src.sourceLine(static_cast<size_t>(i)) << ": not predicted '"
              << src.smiles(static_cast<size_t>(i)) << "': " << in.ds->numNodes(static_cast<size_t>(i))
              << " atoms, more than the node-pair blocks of " << m.spec.describe() << " hold here ("
              << kMaxGraphormerAtoms << ")\n";
  if (!f.quiet)
    std::cerr << "predict: batches in " << p.shapes.size() << " shape(s) (--eval-buckets " << f.evalBuckets
              << "): " << p.padding.toString() << "\n";
  writePredictionsCsv(f.outPath, src, p, m.targets);
  if (!f.embeddingsPath.empty())  // the molecules predicted, in the same batches
    writeEmbeddingsNpz(f.embeddingsPath, src, embedMolecules(*ms.model, in.ds, p.positions, m.fixed));
  if (!f.quiet)
    std::cerr << "predict: " << p.positions.size() << " molecule(s) predicted, "
              << in.rejected + static_cast<int64_t>(p.skipped.size()) << " not (" << in.rejected
              << " rejected by RDKit, " << p.skipped.size() << " too large), written to " << f.outPath
              << (f.embeddingsPath.empty() ? "" : " (embeddings: " + f.embeddingsPath + ")") << "\n";
  return p.positions.empty() ? 1 : 0;
}

}  // namespace

int runPredictProgram(int argc, char** argv) {
  Program prog("predict",
               "apply a trained molecule_property, pcqm4m_graphormer or qm7_schnet checkpoint to new molecules "
               "(predictions as CSV), or a PyTorch Geometric model's state_dict to a node dataset (--pyg-model)");
  PredictFlags f;
  addPredictFlags(prog, f);
  return prog.run(argc, argv, [&] { return predict(prog, f); });
}

}  // namespace gnn::app
