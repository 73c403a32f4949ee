// predict: applies a molecule_property checkpoint to new molecules. The molecules are featurised exactly as
// the checkpoint records (OGB's features with the same options), the model is rebuilt from the checkpoint's
// configuration, and the predictions are written as CSV (line,id,smiles,prediction[_<target>]), in target
// units. Molecules RDKit rejects, or larger than the batch shape the model was trained with, are listed on
// stderr with their line and reason; the rest are predicted.
//
//   predict --checkpoint bbbp.ckpt --input new.smi --out new.csv
//   predict --checkpoint gap.ckpt --input candidates.csv.gz --smiles-col SMILES --out gap.csv --weights last
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "data/NpzDataset.h"
#include "examples/common/MoleculeData.h"
#include "examples/common/MoleculeModel.h"
#include "examples/common/MoleculePredictions.h"
#include "examples/common/Program.h"
#include "examples/common/RunConfig.h"
#include "examples/common/TrainingFlags.h"
#include "gnn/Checkpoint.h"
#include "gnn/Parallel.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace gnn;

int main(int argc, char** argv) {
  app::Program prog("predict", "apply a trained molecule_property checkpoint to new molecules; predictions as CSV");
  std::string checkpoint, input, outPath, format, smilesCol = "smiles", weights = "best";
  int threads = 0;
  bool quiet = false;
  prog.flags().add_options()("checkpoint", po::value(&checkpoint)->value_name("FILE"), "a checkpoint written by --save")(
      "input", po::value(&input)->value_name("FILE"), ".smi, .csv, .sdf, .xyz (each optionally .gz) or a PCQM4Mv2 folder")(
      "out", po::value(&outPath)->value_name("FILE.csv"), "where to write the predictions")(
      "format", po::value(&format)->value_name("NAME"), "smi | csv | sdf | xyz | pcqm4mv2 (default: from the file name)")(
      "smiles-col", app::value(&smilesCol, "smiles"), "CSV: the SMILES column")(
      "weights", app::value(&weights, "best"),
      "best (the best validation epoch's weights, as --predict writes) | last (the weights at the end)")(
      "threads", app::value(&threads, 0), "threads (0: every core)")(
      "quiet,q", po::bool_switch(&quiet), "no notes on stderr (rejected molecules are still listed)");
  return prog.run(argc, argv, [&] {
    if (checkpoint.empty()) throw app::UsageError("--checkpoint FILE is required");
    if (input.empty()) throw app::UsageError("--input FILE is required");
    if (outPath.empty()) throw app::UsageError("--out FILE.csv is required");
    app::requireOneOf("--weights", weights, {"best", "last"});
    if (!format.empty()) app::requireOneOf("--format", format, {"smi", "csv", "sdf", "xyz", "pcqm4mv2"});
    app::applyThreads(threads);
    app::checkWritable("--out", outPath);
    if (!fs::exists(input)) throw app::UsageError("--input " + input + ": no such file");

    Checkpoint ck = Checkpoint::load(checkpoint);
    if (ck.meta.value("program", std::string()) != "molecule_property")
      throw std::runtime_error(checkpoint + ": not a molecule_property checkpoint (program '" +
                               ck.meta.value("program", std::string("?")) + "')");
    const nlohmann::json& config = ck.meta.at("config");
    const nlohmann::json& derived = config.at("derived");
    app::MoleculeModelSpec spec;
    spec.model = config.at("model").get<std::string>();
    spec.layers = config.at("layers").get<int64_t>();
    spec.hidden = config.at("hidden").get<int64_t>();
    spec.pool = config.at("pool").get<std::string>();
    spec.dropout = config.at("dropout").get<double>();
    const std::vector<std::string> targets = derived.at("targets").get<std::vector<std::string>>();
    spec.tasks = static_cast<int64_t>(targets.size());
    const app::MoleculeTask task =
        derived.at("task") == "classification" ? app::MoleculeTask::Classification : app::MoleculeTask::Regression;
    const app::TargetScaling scaling = app::TargetScaling::fromJson(derived.at("target_scaling"));
    FixedSizeOptions fixed;
    fixed.numNodes = derived.at("fixed").at("num_nodes").get<int64_t>();
    fixed.numEdges = derived.at("fixed").at("num_edges").get<int64_t>();
    fixed.numGraphs = derived.at("fixed").at("num_graphs").get<int64_t>();
    fixed.maxNodesPerGraph = derived.at("fixed").at("max_nodes_per_graph").get<int64_t>();
    fixed.validate();

    std::unique_ptr<GraphModel> model = app::makeMoleculeModel(spec, 0);
    // "best.*" holds the best validation epoch's weights when the run validated at least once.
    const bool haveBest = ck.tensors.count("best." + model->namedParameters().front().first) > 0;
    ck.loadModule(weights == "best" && haveBest ? "best" : "model", *model);

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
    app::buildMoleculeDataset(input, format, smilesCol, derived.at("featurisation"), numThreads(), npz);
    auto ds = std::make_shared<NpzDataset>(npz);
    nlohmann::json meta = nlohmann::json::parse(ds->metadataJson(), nullptr, false);
    int64_t rejected = 0;
    if (meta.is_object() && meta.contains("rejected"))
      for (const auto& r : meta["rejected"]) {
        ++rejected;
        std::cerr << input << ":" << r.value("line", int64_t{0}) << ": rejected '" << r.value("smiles", std::string())
                  << "': " << r.value("reason", std::string()) << "\n";
      }
    std::vector<int64_t> all(ds->size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    app::MoleculePredictions p = app::predictMolecules(*model, ds, all, fixed, scaling, task);
    for (int64_t i : p.skipped)
      std::cerr << input << ":" << ds->sourceLine(static_cast<size_t>(i)) << ": not predicted '"
                << ds->smiles(static_cast<size_t>(i)) << "': " << ds->numNodes(static_cast<size_t>(i)) << " atoms, "
                << ds->numEdges(static_cast<size_t>(i)) << " directed bonds exceed the batch shape the model was trained with ("
                << fixed.graphLimits() << ")\n";
    app::writePredictionsCsv(outPath, *ds, p, targets);
    if (!quiet)
      std::cerr << "predict: " << p.positions.size() << " molecule(s) predicted, "
                << rejected + static_cast<int64_t>(p.skipped.size()) << " not (" << rejected << " rejected by RDKit, "
                << p.skipped.size() << " too large), written to " << outPath << "\n";
    return p.positions.empty() ? 1 : 0;
  });
}
