// train_molecules: a whole training program on the library's API alone, to read top to bottom and copy: a
// dataset from a MoleculeNet CSV, a random split, GIN on fixed-size packed batches, early stopping on the
// validation MAE, and the test molecules' predictions as CSV. Comments name the PyTorch Geometric
// counterparts.
//
//   train_molecules            # ESOL (shipped): log solubility, up to 100 epochs, writes
//   test_predictions.csv train_molecules examples/data/moleculenet/Lipophilicity.csv.gz exp 30 lipo_test.csv
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "data/DatasetSplit.h"
#include "data/MoleculeDatasetBuilder.h"
#include "data/NpzDataset.h"
#include "gnn/metrics/Metrics.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/LrSchedule.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"
#include "loaders/FixedSizeDataLoader.h"
#include "models/OgbMolGIN.h"

using namespace gnn;
namespace fs = std::filesystem;

namespace {

// The shipped ESOL set: relative to the working directory (the repository root), else where the build saw it.
std::string defaultInput() {
  const std::string relative = "examples/data/moleculenet/delaney-processed.csv.gz";
#ifdef GNN_EXAMPLES_DATA
  if (!fs::exists(relative)) return std::string(GNN_EXAMPLES_DATA) + "/moleculenet/delaney-processed.csv.gz";
#endif
  return relative;
}

// PyG's dataset[index_tensor].
std::shared_ptr<Subset> subsetOf(const std::shared_ptr<const Dataset>& all,
                                 const std::vector<int64_t>& positions) {
  return std::make_shared<Subset>(all, std::vector<size_t>(positions.begin(), positions.end()));
}

// MAE of the model over the molecules at `positions` (no gradients, dropout off); each molecule's prediction
// goes to (*pred)[k] for positions[k] when pred is given.
double evaluate(GraphModel& model, const std::shared_ptr<const Dataset>& all,
                const std::vector<int64_t>& positions, const FixedSizeOptions& fixed,
                std::vector<float>* pred = nullptr) {
  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::StreamPack;  // molecules in order, packed as they come
  lo.shuffle = false;
  FixedSizeDataLoader loader(subsetOf(all, positions), fixed, lo);
  NoGradGuard noGrad;  // torch.no_grad()
  model.eval();
  double errorSum = 0, labels = 0;
  loader.startEpoch(0);
  for (Batch b; loader.next(b);) {
    Tensor out = model.forward(b).value();  // [numGraphs, tasks], the padding graph's rows last
    // yMask is 0 on the padding graph and on missing labels, so only real labels count.
    const double n = b.yMask.flat<uint8_t>().cast<double>().sum();
    if (n > 0) errorSum += meanAbsoluteError(out, b.y, b.yMask) * n;
    labels += n;
    // The batch's g-th real graph is graphIndex[g] of the loader's dataset (here: k of positions).
    for (int64_t g = 0; pred && g < b.numRealGraphs; ++g)
      (*pred)[static_cast<size_t>(b.graphIndex[static_cast<size_t>(g)])] = out.matrix<float>()(g, 0);
  }
  model.train();
  return errorSum / labels;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc > 5 || (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h"))) {
    std::cerr << "usage: train_molecules [input.csv[.gz] [target_column [epochs [predictions.csv]]]]\n";
    return argc > 5 ? 1 : 0;
  }
  const std::string input = argc > 1 ? argv[1] : defaultInput();
  const std::string target = argc > 2 ? argv[2] : "measured log solubility in mols per litre";
  char* end = nullptr;
  const long epochs = argc > 3 ? std::strtol(argv[3], &end, 10) : 100;
  if (epochs < 1 || (end && *end))
    throw std::invalid_argument(std::string("epochs: need a positive integer, not '") + argv[3] + "'");
  const std::string predictionsPath = argc > 4 ? argv[4] : "test_predictions.csv";
  std::ofstream out(predictionsPath);  // opened first, so an unwritable path fails before the training
  if (!out) throw std::runtime_error(predictionsPath + ": cannot write");
  const uint64_t seed = 0;

  // 1. The dataset, like PyG's MoleculeNet(root, name): the CSV's SMILES become graphs with OGB's
  // smiles2graph
  //    features (9 atom, 3 bond categories) in an .npz, which NpzDataset then reads molecule by molecule.
  BuildOptions build;
  build.source.path = input;
  build.source.targetColumns = {target};
  build.outPath =
      (fs::temp_directory_path() / ("train_molecules_" + fs::path(input).stem().string() + ".npz")).string();
  build.threads = defaultThreads();
  const BuildSummary built = MoleculeDatasetBuilder(build).run();
  auto dataset = std::make_shared<NpzDataset>(build.outPath);
  std::cerr << input << ": " << built.accepted << " molecules, " << built.rejected << " rejected by RDKit\n";

  // 2. A seeded 80/10/10 random split, as dataset positions.
  const DatasetSplit split = randomSplit(static_cast<int64_t>(dataset->size()), seed);

  // 3. Batches of one fixed shape (atoms, bonds, graph slots with one slot for a padding graph), unlike PyG's
  //    DataLoader: the same shapes every step is what a compiled device program needs. forPacking sizes them
  //    for up to 32 molecules from the whole set, so validation and test batches share the training shapes.
  const FixedSizeOptions fixed = FixedSizeOptions::forPacking(*dataset, 32);
  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::PlannedPack;  // packs each shuffled epoch to waste little padding
  lo.seed = seed;
  FixedSizeDataLoader trainLoader(subsetOf(dataset, split.train), fixed, lo);

  // 4. OGB's GIN baseline (atom/bond encoders, 5 GINConv layers of 300, pooling, a linear head).
  GraphModelOptions options;
  options.tasks = dataset->numTargets();
  options.dropout = 0.1;
  options.pool =
      PoolKind::Sum;  // not OGB's mean: solubility depends on a molecule's size, which a mean hides
  Generator init(seed);
  OgbMolGIN model(options, init);

  // 5. torch.optim.Adam with a cosine decay to 1% of the rate over the planned steps (the count of batches
  // can
  //    vary a little by epoch; past the last planned step the rate stays at 1%).
  const double baseLr = 1e-3;
  Adam opt({{model.parameters(), /*weightDecay=*/0.0}}, baseLr);
  trainLoader.startEpoch(0);
  const CosineLr schedule(epochs * trainLoader.numBatches(), /*minFactor=*/0.01);

  // 6. Train; after each epoch, the validation MAE. The best epoch's weights are kept and training stops
  // after
  //    `patience` epochs without improvement.
  std::vector<Variable> params = model.parameters();  // handles that share the model's tensors
  std::vector<Tensor> best;
  double bestMae = INFINITY;
  long bestEpoch = 0;
  const long patience = 20;
  for (long epoch = 0; epoch < epochs && epoch - bestEpoch < patience; ++epoch) {
    trainLoader.startEpoch(epoch);  // the epoch number seeds its shuffle
    double lossSum = 0;
    int64_t steps = 0;
    for (Batch b; trainLoader.next(b); ++steps) {
      const int64_t step = opt.stepCount();
      // Dropout masks derive from (seed, step, micro-batch) instead of a global generator's state.
      ExecutionContext::current().setRandomKey({seed, static_cast<uint64_t>(step), 0});
      schedule.apply(opt, baseLr, step);
      opt.zeroGrad();
      Variable loss = l1Loss(model.forward(b), b.y, b.yMask);  // the mask leaves the padding graph out
      loss.backward();
      opt.step();
      lossSum += loss.value().item();
    }
    const double validMae = evaluate(model, dataset, split.valid, fixed);
    if (best.empty() || validMae < bestMae) {
      bestMae = validMae;
      bestEpoch = epoch + 1;
      best.clear();
      for (const Variable& p : params)
        best.push_back(p.value().clone());  // a copy: training goes on in place
    }
    std::cerr << "epoch " << epoch + 1 << ": train L1 " << lossSum / static_cast<double>(steps)
              << ", valid MAE " << validMae << (bestEpoch == epoch + 1 ? " *" : "") << "\n";
  }
  for (size_t i = 0; i < params.size(); ++i) params[i].value() = best[i];

  // 7. The test molecules with the best weights: MAE on stdout, one CSV row each (line and id in the input).
  std::vector<float> pred(split.test.size());
  const double testMae = evaluate(model, dataset, split.test, fixed, &pred);
  out << "line,id,smiles,prediction\n";  // SMILES hold no commas, so no field needs quoting
  for (size_t k = 0; k < split.test.size(); ++k) {
    const auto i = static_cast<size_t>(split.test[k]);
    out << dataset->sourceLine(i) << "," << dataset->sourceIndex(i) << "," << dataset->smiles(i) << ","
        << pred[k] << "\n";
  }
  if (!out.flush()) throw std::runtime_error(predictionsPath + ": cannot write");
  std::cout << "best epoch " << bestEpoch << ": valid MAE " << bestMae << ", test MAE " << testMae << "; "
            << split.test.size() << " predictions in " << predictionsPath << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "train_molecules: " << e.what() << "\n";
  return 1;
}
