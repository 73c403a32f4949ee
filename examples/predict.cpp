// predict: applies a checkpoint of molecule_property, pcqm4m_graphormer or qm7_schnet to new molecules. The molecules are featurised exactly as
// the checkpoint records (OGB's features with the same options), the model is rebuilt from the checkpoint's
// configuration (Graphormer's encodings and SchNet's radius graph computed as at training time; SchNet needs
// coordinates: SDF or XYZ input, or SMILES with the seeded conformers the checkpoint's featurisation names),
// and the predictions are written as CSV (line,id,smiles,prediction[_<target>]), in target units. Batches
// grow to fit every molecule (Graphormer: up to kMaxGraphormerAtoms atoms); molecules RDKit rejects or too
// large are listed on stderr with their line and reason; the rest are predicted. An ensemble checkpoint
// (molecule_property --ensemble-size) predicts with every member: the mean, then the members' variance (scaled by
// the calibration fitted on the run's validation set) as uncertainty column(s), as the run's --predict wrote; a
// --task regression-mve model writes its mean and its (z-scaled) variance, and a single calibrated model (kept as
// an ensemble of one) its calibrated prediction. A run with --uncertainty mc-dropout predicts as its
// --predict did: the mean and the calibrated variance of its MC dropout samples (app/McDropout.h), the same bits
// in any batching. --embeddings FILE.npz also
// writes each predicted molecule's learned representation (the vector the model's head reads; see
// app/MoleculeEmbeddings.h) with the CSV's line, id and SMILES, in the CSV's order.
//
//   predict --checkpoint bbbp.ckpt --input new.smi --out new.csv
//   predict --checkpoint gap.ckpt --input candidates.csv.gz --smiles-col SMILES --out gap.csv --weights last
//   predict --checkpoint bbbp.ckpt --input new.smi --out new.csv --embeddings new.npz
#include <unistd.h>

#include <array>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "data/MoleculeSource.h"
#include "data/NpzDataset.h"
#include "app/AtomFeatures.h"
#include "app/Ensemble.h"
#include "app/McDropout.h"
#include "app/MoleculeData.h"
#include "app/MoleculeFeatures.h"
#include "app/MoleculeEmbeddings.h"
#include "app/MoleculeModel.h"
#include "app/MoleculePredictions.h"
#include "app/Program.h"
#include "app/RunConfig.h"
#include "app/TrainingFlags.h"
#include "gnn/Checkpoint.h"
#include "gnn/MatmulPrecision.h"
#include "gnn/Parallel.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace gnn;

namespace {
// Graphormer's batches hold [graphs x M x M x hops x 3] int64 path features: 128 atoms is ~127 MB at 65 graphs.
constexpr int64_t kMaxGraphormerAtoms = 128;
}  // namespace

int main(int argc, char** argv) {
  app::Program prog("predict",
                    "apply a trained molecule_property, pcqm4m_graphormer or qm7_schnet checkpoint to new molecules; "
                    "predictions as CSV");
  std::string checkpoint, input, outPath, embeddingsPath, format, smilesCol = "smiles", weights = "best";
  std::string featuresFile;  // --molecule-features-file: the input's own rows, for a checkpoint trained with one
  std::string atomFeaturesFile;  // --atom-features: the input's own atom rows, for a checkpoint trained with them
  int threads = 0;
  bool quiet = false;
  std::string precision = "auto";
  int64_t evalBuckets = 4;
  std::string uncertainty = "auto";
  int64_t mcSamples = 10;
  prog.flags().add_options()("checkpoint", po::value(&checkpoint)->value_name("FILE"), "a checkpoint written by --save")(
      "input", po::value(&input)->value_name("FILE"), ".smi, .csv, .sdf, .xyz (each optionally .gz) or a PCQM4Mv2 folder")(
      "out", po::value(&outPath)->value_name("FILE.csv"), "where to write the predictions")(
      "embeddings", po::value(&embeddingsPath)->value_name("FILE.npz"),
      "also write each predicted molecule's learned representation (the vector the model's head reads) as NumPy "
      ".npz: float32 embeddings [molecules, width] with int64 line and id and the SMILES (smiles, smiles_ptr), "
      "rows in the CSV's order")(
      "format", po::value(&format)->value_name("NAME"), "smi | csv | sdf | xyz | pcqm4mv2 (default: from the file name)")(
      "smiles-col", app::value(&smilesCol, "smiles"), "CSV: the SMILES column")(
      "molecule-features-file", po::value(&featuresFile)->value_name("FILE"),
      "for a checkpoint trained with --molecule-features-file: these molecules' features, one row per molecule of "
      "--input in its order (.npz array 'features' or CSV, as in training); computed descriptors "
      "(--molecule-features) need nothing")(
      "atom-features", po::value(&atomFeaturesFile)->value_name("FILE"),
      "for a checkpoint trained with --atom-features: these molecules' per-atom descriptors, every molecule of "
      "--input in its order (rejected ones included), atoms in RDKit's order (.npz 'features' and 'atom_ptr', or "
      "CSV molecule,atom,f1,...,fk, as in training), scaled with the training statistics")(
      "weights", app::value(&weights, "best"),
      "best (the best validation epoch's weights, as --predict writes) | last (the weights at the end)")(
      "threads", app::value(&threads, 0), "threads (0: every core)")(
      "precision", app::value(&precision, "auto"),
      "matrix products in fp32 | bf16 (bfloat16 inputs, fp32 accumulation); auto: the precision the checkpoint's "
      "run evaluated in, so that predict reproduces its --predict bit for bit")(
      "eval-buckets", app::value(&evalBuckets, int64_t{4}),
      "batch the molecules in up to N fixed shapes chosen from their sizes, each in the smallest that holds it "
      "(0 or 1: one shape that fits the largest); the predictions are the same bits either way")(
      "uncertainty", app::value(&uncertainty, "auto"),
      "auto (as the checkpoint's run predicted: an ensemble's or a regression-mve model's variance, or MC dropout "
      "for a run with --uncertainty mc-dropout, with its samples, seed and calibration) | mc-dropout (MC dropout of "
      "a gin, gcn or dmpnn model trained with --dropout > 0 whose run did not use it: --mc-samples passes keyed by "
      "the run's --seed, uncalibrated)")(
      "mc-samples", app::value(&mcSamples, int64_t{10}),
      "MC dropout's stochastic passes per molecule (default: the checkpoint's run's --mc-samples, else 10; another "
      "count than the run's gives other bits than its --predict)")(
      "quiet,q", po::bool_switch(&quiet), "no notes on stderr (rejected molecules are still listed)");
  return prog.run(argc, argv, [&] {
    if (checkpoint.empty()) throw app::UsageError("--checkpoint FILE is required");
    if (input.empty()) throw app::UsageError("--input FILE is required");
    if (outPath.empty()) throw app::UsageError("--out FILE.csv is required");
    app::requireOneOf("--weights", weights, {"best", "last"});
    app::requireOneOf("--precision", precision, {"auto", "fp32", "bf16"});
    if (!format.empty()) app::requireOneOf("--format", format, {"smi", "csv", "sdf", "xyz", "pcqm4mv2"});
    app::applyThreads(threads);
    app::requireRange("--eval-buckets", static_cast<double>(evalBuckets), 0, 16);
    app::checkWritable("--out", outPath);
    if (!embeddingsPath.empty()) app::checkWritable("--embeddings", embeddingsPath);
    if (!fs::exists(input)) throw app::UsageError("--input " + input + ": no such file");
    if (!atomFeaturesFile.empty() && !fs::is_regular_file(atomFeaturesFile))
      throw app::UsageError("--atom-features " + atomFeaturesFile + ": no such file");

    Checkpoint ck = Checkpoint::load(checkpoint);
    if (precision == "auto")
      precision = ck.meta.contains("matmul_precision") && ck.meta["matmul_precision"] == "bf16" ? "bf16" : "fp32";
    setDefaultMatmulPrecision(parseMatmulPrecision(precision));
    const nlohmann::json& writtenBy = ck.meta.contains("program") ? ck.meta["program"] : nlohmann::json();
    const std::string program = writtenBy.is_string() ? writtenBy.get<std::string>() : std::string();
    const std::string programs = "molecule_property, pcqm4m_graphormer or qm7_schnet";
    if (program != "molecule_property" && program != "pcqm4m_graphormer" && program != "qm7_schnet")
      throw std::runtime_error(checkpoint + ": not a checkpoint of " + programs + " (" +
                               (program.empty() ? std::string("its metadata names no program")
                                                : "program '" + program + "'") +
                               "); predict applies the checkpoints they write with --save");
    auto unusable = [&](const std::string& why) {
      return std::runtime_error(checkpoint + ": not a checkpoint predict can use: " + why);
    };
    // Every key predict reads is looked up through `need`; one missing is named, and so is the one being read
    // when a value has the wrong type (never the JSON library's message).
    std::string reading;
    auto need = [&](const nlohmann::json& parent, const char* key, const std::string& under) -> const nlohmann::json& {
      reading = under.empty() ? std::string(key) : under + "." + key;
      if (!parent.is_object())
        throw unusable("its metadata's '" + (under.empty() ? std::string("(top level)") : under) +
                       "' is not a JSON object");
      if (!parent.contains(key))
        throw unusable("its metadata lacks '" + std::string(key) + "'" + (under.empty() ? "" : " (under " + under + ")") +
                       ", which " + program + " writes: the file was changed since, or comes from another version");
      return parent[key];
    };
    app::MoleculeModelSpec spec;
    std::vector<std::string> targets;
    app::MoleculeTask task = app::MoleculeTask::Regression;
    TargetScaling scaling;
    FixedSizeOptions fixed;
    std::string shapeKey;
    nlohmann::json featurisation;
    try {
      const nlohmann::json& config = need(ck.meta, "config", "");
      const nlohmann::json& derived = need(config, "derived", "config");
      reading = "config";
      spec = app::MoleculeModelSpec::fromConfig(config);
      app::checkpointFeatures(config, checkpoint);  // refused here, before a model of the wrong width is built
      app::checkpointAtomFeatures(config, checkpoint);
      targets = need(derived, "targets", "config.derived").get<std::vector<std::string>>();
      const nlohmann::json& taskName = need(derived, "task", "config.derived");
      if (taskName != "classification" && taskName != "regression" && taskName != "regression-mve")
        throw unusable("its task (config.derived.task) is " + taskName.dump() +
                       ", not classification, regression or regression-mve");
      task = taskName == "classification"   ? app::MoleculeTask::Classification
             : taskName == "regression-mve" ? app::MoleculeTask::RegressionMve
                                            : app::MoleculeTask::Regression;
      const nlohmann::json& scalingJson = need(derived, "target_scaling", "config.derived");
      try {
        scaling = TargetScaling::fromJson(scalingJson);
      } catch (const std::runtime_error& e) {
        throw unusable(std::string("its metadata's 'config.derived.target_scaling' is out of range (") + e.what() + ")");
      }
      featurisation = need(derived, "featurisation", "config.derived");
      if (!featurisation.is_object()) throw unusable("its metadata's 'config.derived.featurisation' is not an object");
      // The evaluation shape of the run (its training shape in checkpoints that have none).
      shapeKey = derived.contains("eval_fixed") ? "eval_fixed" : "fixed";
      const nlohmann::json& shape = need(derived, shapeKey.c_str(), "config.derived");
      const std::string under = "config.derived." + shapeKey;
      fixed.numNodes = need(shape, "num_nodes", under).get<int64_t>();
      fixed.numEdges = need(shape, "num_edges", under).get<int64_t>();
      fixed.numGraphs = need(shape, "num_graphs", under).get<int64_t>();
      fixed.maxNodesPerGraph = need(shape, "max_nodes_per_graph", under).get<int64_t>();
      reading = under;
      fixed.validate();
    } catch (const nlohmann::json::exception&) {
      throw unusable("its metadata's '" + reading + "' is malformed");
    } catch (const std::invalid_argument& e) {
      throw unusable("its metadata's '" + reading + "' is out of range (" + e.what() + ")");
    }
    if (targets.empty()) throw unusable("its metadata names no target (config.derived.targets is empty)");
    // SchNet reads 3D coordinates: molecules given as SMILES (smi, csv, a PCQM4Mv2 folder) get them only from
    // the seeded conformers a featurisation embeds, and a run that read its coordinates from files embeds none.
    const std::string inputFormat = format.empty() ? guessMoleculeFormat(input) : format;
    const nlohmann::json& conformers = featurisation.contains("conformers") ? featurisation["conformers"] : nlohmann::json();
    if (spec.isSchNet() && inputFormat != "sdf" && inputFormat != "xyz" && !(conformers.is_boolean() && conformers.get<bool>()))
      throw app::UsageError("--input " + input + ": " + checkpoint +
                            " holds a SchNet model, which reads 3D atom coordinates, and " +
                            (inputFormat.empty() ? std::string("this input") : inputFormat + " input") +
                            " has none (the run it comes from read coordinates from its files, so its featurisation "
                            "embeds no conformers for SMILES): give --input as SDF or XYZ with 3D coordinates");
    spec.requireFitsInMemory(checkpoint, /*training=*/false);
    const std::string shapeAt = "derived." + shapeKey + ".";
    const std::array<std::string, 4> shapeFields = {shapeAt + "num_nodes", shapeAt + "num_edges", shapeAt + "num_graphs",
                                                    shapeAt + "max_nodes_per_graph"};
    spec.requireBatchFitsInMemory(fixed, shapeFields, checkpoint, /*training=*/false);
    try {
      spec.validate(app::MoleculeModelSpec::allModels());
    } catch (const app::UsageError& e) {
      // The message names a training flag (--hidden 0: ...): here it is a value of the checkpoint's configuration.
      std::string what = e.what();
      const size_t space = what.find(' ');
      if (what.rfind("--", 0) == 0 && space != std::string::npos)
        for (size_t i = 2; i < space; ++i)
          if (what[i] == '-') what[i] = '_';
      throw unusable("its configuration holds " + (what.rfind("--", 0) == 0 ? what.substr(2) : what));
    }

    std::unique_ptr<BlockModel> model = app::makeMoleculeModel(spec, 0);
    // "best.*" holds the best validation epoch's weights when the run validated at least once.
    const bool haveBest = ck.tensors.count("best." + model->namedParameters().front().first) > 0;
    ck.loadModule(weights == "best" && haveBest ? "best" : "model", *model);
    // An ensemble checkpoint (molecule_property --ensemble-size): every member with its best validation epoch's
    // weights, combined and calibrated as its --predict was.
    std::optional<app::EnsembleInfo> ensemble = app::EnsembleInfo::fromCheckpoint(ck);
    if (ensemble && ensemble->size > 1 && weights == "last" && prog.given("weights"))
      throw app::UsageError("--weights last: " + checkpoint + " holds an ensemble of " + std::to_string(ensemble->size) +
                            " models, which keeps each member's best validation epoch's weights only");
    // One model with a calibration fitted to its best weights (an ensemble of one): the last weights go uncalibrated.
    if (ensemble && ensemble->size == 1 && weights == "last") {
      if (!quiet && ensemble->calibration.method != "none")
        std::cerr << "predict: --weights last: the " << ensemble->calibration.method
                  << " calibration was fitted to the best weights; not applied\n";
      ensemble.reset();
    }
    if (ensemble && ensemble->size > 1 && !embeddingsPath.empty())
      throw app::UsageError("--embeddings: " + checkpoint + " holds an ensemble of " + std::to_string(ensemble->size) +
                            " models, and an embedding is one model's");
    // MC dropout (app/McDropout.h): as the run's --predict (its samples, seed and calibration), or asked for here.
    app::requireOneOf("--uncertainty", uncertainty, {"auto", "mc-dropout"});
    std::optional<app::McDropout> mc = app::McDropout::fromCheckpoint(ck);
    if (uncertainty == "mc-dropout" && !mc) {
      app::requireMcDropoutModel("--uncertainty mc-dropout (" + checkpoint + ")", spec.model, spec.dropout);
      if (ensemble)
        throw app::UsageError("--uncertainty mc-dropout: " + checkpoint + " holds " +
                              (ensemble->size > 1 ? "an ensemble of " + std::to_string(ensemble->size) + " models"
                                                  : std::string("a calibrated model")) +
                              ", which predicts its own way; MC dropout samples one uncalibrated model");
      mc = app::McDropout{};
      const nlohmann::json& config = ck.meta["config"];
      if (config.contains("seed") && config["seed"].is_number_unsigned()) mc->seed = config["seed"].get<uint64_t>();
    }
    if (prog.given("mc-samples")) {
      if (!mc)
        throw app::UsageError("--mc-samples applies to MC dropout: --uncertainty mc-dropout, or a checkpoint of a run "
                              "with it (" + checkpoint + " is neither)");
      app::requireRange("--mc-samples", static_cast<double>(mcSamples), 1, 1000);
      mc->samples = mcSamples;
    }
    std::vector<std::unique_ptr<BlockModel>> members;
    if (ensemble) members = app::loadEnsembleMembers(ck, *ensemble, spec);

    // Featurise into a private temporary .npz, removed when done.
    const std::string npz =
        (fs::temp_directory_path() / ("gnn_predict_" + std::to_string(::getpid()) + ".npz")).string();
    struct Remove {
      std::string path;
      ~Remove() {
        std::error_code ec;
        fs::remove(path, ec);
      }
    } cleanup{npz};
    app::buildMoleculeDataset(input, format, smilesCol, featurisation, numThreads(), npz);
    auto npzData = std::make_shared<NpzDataset>(npz);
    const NpzDataset& src = *npzData;
    std::shared_ptr<const Dataset> ds = spec.view(npzData);  // SchNet: the radius graph
    // Molecule features as the checkpoint records them (kind, width, the training split's statistics).
    ds = app::attachCheckpointFeatures(ck.meta["config"], checkpoint, src, ds, featuresFile, numThreads());
    // The user's atom features, scaled with the checkpoint's statistics of its training atoms.
    ds = app::attachCheckpointAtomFeatures(ck.meta["config"], checkpoint, src, ds, atomFeaturesFile);
    nlohmann::json meta = nlohmann::json::parse(src.metadataJson(), nullptr, false);
    int64_t rejected = 0;
    if (meta.is_object() && meta.contains("rejected"))
      for (const auto& r : meta["rejected"]) {
        ++rejected;
        std::cerr << input << ":" << r.value("line", int64_t{0}) << ": rejected '" << r.value("smiles", std::string())
                  << "': " << r.value("reason", std::string()) << "\n";
      }
    // Grow the batch until every molecule fits (results do not depend on the batch's size); Graphormer's
    // node-pair blocks grow with the square of their side, so they stop at kMaxGraphormerAtoms.
    std::vector<int64_t> all;
    std::vector<int64_t> tooLarge;
    int64_t maxNodes = 0, maxEdges = 0;
    for (size_t i = 0; i < ds->size(); ++i) {
      if (spec.readsPairBlocks() && ds->numNodes(i) > kMaxGraphormerAtoms) {
        tooLarge.push_back(static_cast<int64_t>(i));
        continue;
      }
      all.push_back(static_cast<int64_t>(i));
      maxNodes = std::max(maxNodes, ds->numNodes(i));
      maxEdges = std::max(maxEdges, ds->numEdges(i));
    }
    if (fixed.maxNodesPerGraph > 0) fixed.maxNodesPerGraph = std::max(fixed.maxNodesPerGraph, maxNodes);
    fixed.numNodes = std::max(fixed.numNodes, fixed.rowsNeeded(maxNodes, 1));
    fixed.numEdges = std::max(fixed.numEdges, fixed.rowsNeeded(maxEdges, 1));
    spec.requireBatchFitsInMemory(fixed, shapeFields, checkpoint, /*training=*/false);  // grown to fit the input
    // Each molecule in the smallest of a few shapes within `fixed` (--eval-buckets): the same bits as `fixed` alone.
    const ShapeBuckets buckets = app::inferenceBuckets(*ds, all, fixed, evalBuckets, spec.readsPairBlocks());
    app::MoleculePredictions p;
    if (ensemble) {
      std::vector<app::MoleculePredictions> each;
      if (mc)  // the best model's samples, as the run's --predict
        each = app::predictMcDropoutSamples(*members.front(), spec.tasks, ds, app::moleculeDropoutKeys(src), all,
                                            buckets, scaling, task, *mc);
      else
        for (const auto& m : members) each.push_back(app::predictMolecules(*m, spec.tasks, ds, all, buckets, scaling, task));
      p = app::combineEnsemble(each, task);
      if (task == app::MoleculeTask::Classification && ensemble->size == 1 && !mc) p.uncertainty = Tensor();  // as --predict
      ensemble->calibration.apply(p);
    } else if (mc) {
      p = app::predictMcDropout(*model, spec.tasks, ds, app::moleculeDropoutKeys(src), all, buckets, scaling, task, *mc);
    } else {
      p = app::predictMolecules(*model, spec.tasks, ds, all, buckets, scaling, task);
    }
    for (int64_t i : tooLarge) p.skipped.push_back(i);
    for (int64_t i : p.skipped)
      std::cerr << input << ":" << src.sourceLine(static_cast<size_t>(i)) << ": not predicted '"
                << src.smiles(static_cast<size_t>(i)) << "': " << ds->numNodes(static_cast<size_t>(i))
                << " atoms, more than the node-pair blocks of " << spec.describe() << " hold here (" << kMaxGraphormerAtoms << ")\n";
    if (!quiet)
      std::cerr << "predict: batches in " << p.shapes.size() << " shape(s) (--eval-buckets " << evalBuckets
                << "): " << p.padding.toString() << "\n";
    app::writePredictionsCsv(outPath, src, p, targets);
    if (!embeddingsPath.empty())  // the molecules predicted, in the same batches
      app::writeEmbeddingsNpz(embeddingsPath, src, app::embedMolecules(*model, ds, p.positions, fixed));
    if (!quiet)
      std::cerr << "predict: " << p.positions.size() << " molecule(s) predicted, "
                << rejected + static_cast<int64_t>(p.skipped.size()) << " not (" << rejected << " rejected by RDKit, "
                << p.skipped.size() << " too large), written to " << outPath
                << (embeddingsPath.empty() ? "" : " (embeddings: " + embeddingsPath + ")") << "\n";
    return p.positions.empty() ? 1 : 0;
  });
}
