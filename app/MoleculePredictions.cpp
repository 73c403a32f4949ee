#include "app/MoleculePredictions.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gnn/ops/GaussianNllLoss.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn::app {

namespace {
// A mean-variance head's output [G, 2T] -> its means [G, T] (in `out`), and the variances of the first `graphs`
// rows in target units (softplus + floor, times the target's std^2), row-major into `variance`.
void splitMeanVariance(Tensor& out, int64_t tasks, const TargetScaling& scaling, int64_t graphs,
                       std::vector<double>& variance) {
  if (out.dim(1) != 2 * tasks)
    throw std::logic_error("predictMolecules: a mean-variance model gives " + std::to_string(out.dim(1)) +
                           " outputs per molecule, not 2 x " + std::to_string(tasks));
  Tensor means = Tensor::zeros({out.dim(0), tasks});
  auto o = out.matrix<float>();
  auto m = means.matrix<float>();
  variance.assign(static_cast<size_t>(graphs * tasks), 0.0);
  for (int64_t g = 0; g < out.dim(0); ++g)
    for (int64_t t = 0; t < tasks; ++t) {
      m(g, t) = o(g, t);
      if (g >= graphs) continue;
      const double s = scaling.enabled() ? scaling.std[static_cast<size_t>(t)] : 1.0;
      variance[static_cast<size_t>(g * tasks + t)] = mveVariance(o(g, tasks + t)) * s * s;
    }
  out = means;
}
}  // namespace

MoleculePredictions predictMolecules(BlockModel& model, int64_t tasks, const std::shared_ptr<const Dataset>& dataset,
                                     const std::vector<int64_t>& positions, const FixedSizeOptions& fixed,
                                     const TargetScaling& scaling, MoleculeTask task) {
  return predictMolecules(model, tasks, dataset, positions, ShapeBuckets::single(fixed), scaling, task);
}

MoleculePredictions predictMolecules(BlockModel& model, int64_t tasks, const std::shared_ptr<const Dataset>& dataset,
                                     const std::vector<int64_t>& positions, const ShapeBuckets& buckets,
                                     const TargetScaling& scaling, MoleculeTask task, const BatchForward& forward) {
  MoleculePredictions p;
  // Per shape: the rows of the result it predicts and their dataset positions, in input order.
  const auto k = static_cast<size_t>(buckets.size());
  std::vector<std::vector<int64_t>> rows(k);
  std::vector<std::vector<size_t>> members(k);
  for (int64_t i : positions) {
    const auto at = static_cast<size_t>(i);
    const int64_t b = buckets.bucketOf(dataset->numNodes(at), dataset->numEdges(at));
    if (b < 0) {
      p.skipped.push_back(i);
      continue;
    }
    rows[static_cast<size_t>(b)].push_back(static_cast<int64_t>(p.positions.size()));
    members[static_cast<size_t>(b)].push_back(static_cast<size_t>(i));
    p.positions.push_back(i);
  }
  const auto n = static_cast<int64_t>(p.positions.size());
  p.pred = Tensor::zeros({n, tasks});
  p.score = Tensor::zeros({n, tasks});
  p.target = Tensor::zeros({n, tasks});
  p.mask = Tensor::zeros({n, tasks}, DType::U8);
  const bool mve = task == MoleculeTask::RegressionMve;
  if (mve) p.uncertainty = Tensor::zeros({n, tasks});
  std::vector<double> variance;  // RegressionMve: a batch's variances in target units, [graphs x tasks]
  p.shapes = buckets.shapes();
  for (const auto& m : members) p.moleculesPerShape.push_back(static_cast<int64_t>(m.size()));
  if (n == 0) return p;
  NoGradGuard noGrad;
  const bool wasTraining = model.isTraining();
  model.eval();
  auto pred = p.pred.matrix<float>(), score = p.score.matrix<float>(), target = p.target.matrix<float>();
  auto mask = p.mask.matrix<uint8_t>();
  for (size_t s = 0; s < k; ++s) {
    if (members[s].empty()) continue;
    auto subset = std::make_shared<Subset>(dataset, members[s]);
    FixedSizeDataLoader::Options lo;
    lo.strategy = PackingStrategy::StreamPack;  // in order: the batches depend only on the molecules and their order
    lo.shuffle = false;
    lo.prefetch = 1;
    FixedSizeDataLoader loader(subset, buckets.shapes()[s], lo);
    loader.startEpoch(0);
    for (Batch b; loader.next(b);) {
      p.padding.add(b);
      std::vector<int64_t> batchPositions;  // the dataset position of each real graph, for `forward`
      if (forward)
        for (int64_t g = 0; g < b.numRealGraphs; ++g)
          batchPositions.push_back(static_cast<int64_t>(members[s][static_cast<size_t>(b.graphIndex[static_cast<size_t>(g)])]));
      Tensor out = forward ? forward(model, b, batchPositions) : model.forward(b).value();
      if (mve) splitMeanVariance(out, tasks, scaling, b.numRealGraphs, variance);
      Tensor restored = task != MoleculeTask::Classification ? scaling.restore(out) : out;
      auto o = out.matrix<float>(), r = restored.matrix<float>(), y = b.y.matrix<float>();
      auto ym = b.yMask.matrix<uint8_t>();
      for (int64_t g = 0; g < b.numRealGraphs; ++g) {
        const int64_t row = rows[s][static_cast<size_t>(b.graphIndex[static_cast<size_t>(g)])];
        for (int64_t t = 0; t < tasks; ++t) {
          const float logit = o(g, t);
          score(row, t) = task != MoleculeTask::Classification ? r(g, t) : logit;
          pred(row, t) = task != MoleculeTask::Classification ? r(g, t) : static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(logit))));
          if (mve) p.uncertainty.matrix<float>()(row, t) = static_cast<float>(variance[static_cast<size_t>(g * tasks + t)]);
          if (y.cols() > t) {
            target(row, t) = y(g, t);
            mask(row, t) = ym(g, t);
          }
        }
      }
    }
  }
  model.train(wasTraining);
  return p;
}

ShapeBuckets inferenceBuckets(const Dataset& dataset, const std::vector<int64_t>& positions,
                              const FixedSizeOptions& base, int64_t maxBuckets, bool nodePairs) {
  if (maxBuckets <= 1) return ShapeBuckets::single(base);
  return ShapeBuckets::choose(graphSizes(dataset, positions), base, maxBuckets,
                              nodePairs ? ShapeCost::NodePairs : ShapeCost::Rows);
}

const char* moleculeTaskName(MoleculeTask task) {
  switch (task) {
    case MoleculeTask::Classification: return "classification";
    case MoleculeTask::RegressionMve: return "regression-mve";
    default: return "regression";
  }
}


namespace {
std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

void writePredictionsCsv(const std::string& path, const NpzDataset& dataset, const MoleculePredictions& p,
                         const std::vector<std::string>& targetNames) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    // Named as the file, not a flag: molecule_property writes it for --predict, predict for --out.
    if (!out) throw std::runtime_error(path + ": cannot write the predictions (" + tmp + ")");
    const int64_t tasks = p.pred.defined() ? p.pred.dim(1) : 1;
    const bool uncertain = p.uncertainty.defined();
    out << "line,id,smiles";
    for (const char* column : {"prediction", "uncertainty"}) {
      if (std::string(column) == "uncertainty" && !uncertain) break;
      if (tasks == 1) {
        out << "," << column;
      } else {
        for (int64_t t = 0; t < tasks; ++t)
          out << "," << column << "_"
              << csvField(t < static_cast<int64_t>(targetNames.size()) ? targetNames[static_cast<size_t>(t)] : std::to_string(t));
      }
    }
    out << "\n";
    char buf[32];
    for (size_t k = 0; k < p.positions.size(); ++k) {
      const auto i = static_cast<size_t>(p.positions[k]);
      out << dataset.sourceLine(i) << "," << dataset.sourceIndex(i) << "," << csvField(dataset.smiles(i));
      for (int64_t t = 0; t < tasks; ++t) {
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(p.pred.matrix<float>()(static_cast<int64_t>(k), t)));
        out << "," << buf;
      }
      for (int64_t t = 0; uncertain && t < tasks; ++t) {
        std::snprintf(buf, sizeof buf, "%.9g",
                      static_cast<double>(p.uncertainty.matrix<float>()(static_cast<int64_t>(k), t)));
        out << "," << buf;
      }
      out << "\n";
    }
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": write failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot write the predictions (" + ec.message() + ")");
  }
}

}  // namespace gnn::app
