// bench_loaders: the loaders on the PCQM4Mv2-style set, in one run: padding efficiency of PadToMax,
// StreamPack and PlannedPack, planning and collation speed (graphs/s), and METIS partitioning of a generated
// graph (1M nodes, 10M edges by default) as ClusterData does it. Prints one JSON object.
//
//   bench_loaders [--data DIR|FILE.npz] [--batch-size 128] [--metis-nodes 1000000 --metis-edges 10000000]
#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "app/MoleculeData.h"
#include "app/Program.h"
#include "app/ShippedData.h"
#include "loaders/ClusterData.h"
#include "loaders/DataLoader.h"
#include "loaders/FixedSizeDataLoader.h"

namespace po = boost::program_options;
using namespace gnn;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A generated graph with locality, so METIS has structure to find: node u has `degree` out-edges, 80% to
// nodes within ±64 of u on a ring and 20% to uniform random nodes. Directed (METIS input is symmetrised).
Graph generatedGraph(int64_t nodes, int64_t edges, uint64_t seed) {
  Generator g(seed);
  Graph gr;
  gr.numNodes = nodes;
  Tensor ei({2, edges}, DType::I64);
  int64_t* src = ei.data<int64_t>();
  int64_t* dst = src + edges;
  uint64_t base = g.reserve(static_cast<uint64_t>(edges) * 2);
  for (int64_t j = 0; j < edges; ++j) {
    int64_t u = j % nodes;
    uint64_t r = g.bits(base + 2 * static_cast<uint64_t>(j));
    int64_t v = (r % 5 != 0) ? (u + static_cast<int64_t>(g.bits(base + 2 * j + 1) % 129) - 64 + nodes) % nodes
                             : static_cast<int64_t>(g.bits(base + 2 * j + 1) % static_cast<uint64_t>(nodes));
    src[j] = u;
    dst[j] = v;
  }
  gr.edgeIndex = ei;
  return gr;
}

nlohmann::json runStrategy(const std::shared_ptr<const Dataset>& ds, PackingStrategy s, const FixedSizeOptions& o,
                           uint64_t seed) {
  FixedSizeDataLoader::Options lo;
  lo.strategy = s;
  lo.seed = seed;
  lo.prefetch = 0;  // time collation itself, on this thread
  FixedSizeDataLoader loader(ds, o, lo);
  auto t0 = Clock::now();
  loader.startEpoch(0);
  double planSec = seconds(t0);
  t0 = Clock::now();
  int64_t graphs = 0;
  for (Batch b; loader.next(b);) graphs += b.numRealGraphs;
  double collateSec = seconds(t0);
  PaddingReport r = loader.report();
  nlohmann::json j = r.toJson();
  j["strategy"] = packingStrategyName(s);
  j["num_nodes"] = o.numNodes;
  j["num_edges"] = o.numEdges;
  j["num_graphs"] = o.numGraphs;
  j["plan_seconds"] = planSec;
  j["collate_seconds"] = collateSec;
  j["graphs_per_s"] = static_cast<double>(graphs) / (planSec + collateSec);
  return j;
}

// Everything after the command line; metisNodes 0 leaves out the METIS timing.
int measure(const std::string& data, int64_t batchSize, int64_t numNodes, int64_t numEdges, int64_t limit,
            uint64_t seed, int64_t metisNodes, int64_t metisEdges, int64_t clusters) {
  nlohmann::json out;
  app::MoleculeDataOptions mo;
  mo.path = data;
  mo.limit = limit;
  mo.requireTargets = false;  // batching does not look at targets
  app::MoleculeData md = app::openMoleculeData(mo);
  std::shared_ptr<const Dataset> ds = md.dataset;
  // A built .npz keeps all its molecules; --limit then means its first md.size.
  if (md.size < static_cast<int64_t>(ds->size())) {
    std::vector<size_t> first(static_cast<size_t>(md.size));
    std::iota(first.begin(), first.end(), size_t{0});
    ds = std::make_shared<Subset>(ds, std::move(first));
  }
  int64_t maxN = 0, maxE = 0, sumN = 0, sumE = 0;
  for (size_t i = 0; i < ds->size(); ++i) {
    maxN = std::max(maxN, ds->numNodes(i));
    maxE = std::max(maxE, ds->numEdges(i));
    sumN += ds->numNodes(i);
    sumE += ds->numEdges(i);
  }
  double n = static_cast<double>(ds->size());
  out["data"] = {{"path", data},         {"graphs", ds->size()},     {"mean_nodes", sumN / n},
                 {"mean_edges", sumE / n}, {"max_nodes", maxN},       {"max_edges", maxE},
                 {"featurise_seconds", md.buildSeconds}};

  FixedSizeOptions pad = FixedSizeOptions::fromDataset(*ds, batchSize + 1);
  FixedSizeOptions pack = FixedSizeOptions::forPacking(*ds, batchSize);
  if (numNodes > 0) pack.numNodes = numNodes;
  if (numEdges > 0) pack.numEdges = numEdges;
  nlohmann::json strategies = nlohmann::json::array();
  strategies.push_back(runStrategy(ds, PackingStrategy::PadToMax, pad, seed));
  strategies.push_back(runStrategy(ds, PackingStrategy::StreamPack, pack, seed));
  strategies.push_back(runStrategy(ds, PackingStrategy::PlannedPack, pack, seed));
  out["strategies"] = strategies;

  // Variable-size collation (PyG's DataLoader semantics) for reference.
  {
    DataLoader::Options lo;
    lo.batchSize = batchSize;
    lo.prefetch = 0;
    DataLoader loader(ds, lo);
    auto t0 = Clock::now();
    loader.startEpoch(0);
    int64_t graphs = 0;
    for (Batch b; loader.next(b);) graphs += b.numRealGraphs;
    out["dataloader_graphs_per_s"] = static_cast<double>(graphs) / seconds(t0);
  }

  if (metisNodes > 0) {
    auto t0 = Clock::now();
    Graph big = generatedGraph(metisNodes, metisEdges, 1);
    double genSec = seconds(t0);
    t0 = Clock::now();
    ClusterData cd(std::move(big), clusters, 0);
    double totalSec = seconds(t0);
    int64_t minC = metisNodes, maxC = 0;
    for (int64_t c = 0; c < clusters; ++c) minC = std::min(minC, cd.clusterSize(c)), maxC = std::max(maxC, cd.clusterSize(c));
    out["metis"] = {{"nodes", metisNodes},
                    {"directed_edges", metisEdges},
                    {"clusters", clusters},
                    {"generate_seconds", genSec},
                    {"partition_seconds", cd.partitionSeconds()},
                    {"cluster_data_seconds", totalSec},
                    {"edge_cut", cd.edgeCut()},
                    {"min_cluster", minC},
                    {"max_cluster", maxC}};
  }
  std::cout << out.dump(2) << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  app::Program prog(
      "bench_loaders",
      "fixed-size batching: padding efficiency, collation speed, METIS partitioning.\n\n"
      "Measures, over one epoch of the data: padding efficiency (real nodes and edges / batch capacity) of\n"
      "  PadToMax, StreamPack and PlannedPack batches; their planning + collation speed in graphs/s (one\n"
      "  thread, no prefetch); variable-size DataLoader collation in graphs/s; and METIS partitioning of a\n"
      "  generated graph as ClusterData does it (seconds, edge cut, cluster sizes).\n"
      "Compared with: the strategies among themselves and the unpadded DataLoader, all in the same run.\n"
      "  No stored figures are compared.");
  const std::string defaultData = "pcqm4mv2_style";
  std::string data;
  int64_t batchSize = 128, metisNodes = 1000000, metisEdges = 10000000, clusters = 1024, numNodes = 0,
          numEdges = 0, limit = -1;
  uint64_t seed = 0;
  bool skipMetis = false;
  auto flag = prog.flags().add_options();
  flag("data",
       po::value(&data)->default_value(app::defaultMoleculeDataPath(), app::shippedDataLabel(defaultData)),
       "molecule set: PCQM4Mv2 layout, MoleculeNet CSV or a built .npz");
  flag("batch-size", app::value(&batchSize, int64_t{128}),
       "real graphs per batch (PadToMax) / graph cap (packing)");
  flag("num-nodes", app::value(&numNodes, int64_t{0}), "packing node budget (0: mean·batch·1.01 + 1)");
  flag("num-edges", app::value(&numEdges, int64_t{0}), "packing edge budget (0: mean·batch·1.01 + 1)");
  flag("limit", app::value(&limit, int64_t{-1}), "first N molecules only (-1: all)");
  flag("seed", app::value(&seed, uint64_t{0}), "shuffle seed");
  flag("metis-nodes", app::value(&metisNodes, int64_t{1000000}), "nodes of the generated METIS graph");
  flag("metis-edges", app::value(&metisEdges, int64_t{10000000}), "directed edges of the generated graph");
  flag("clusters", app::value(&clusters, int64_t{1024}), "METIS parts");
  flag("skip-metis", po::bool_switch(&skipMetis), "leave out the METIS timing");
  return prog.run(argc, argv, [&] {
    app::requireAtLeast("--batch-size", static_cast<double>(batchSize), 1);
    app::requireAtLeast("--num-nodes", static_cast<double>(numNodes), 0);
    app::requireAtLeast("--num-edges", static_cast<double>(numEdges), 0);
    if (limit != -1) app::requireAtLeast("--limit", static_cast<double>(limit), 1);
    app::requireAtLeast("--metis-nodes", static_cast<double>(metisNodes), 1);
    app::requireAtLeast("--metis-edges", static_cast<double>(metisEdges), 1);
    app::requireAtLeast("--clusters", static_cast<double>(clusters), 1);
    if (clusters > metisNodes)
      throw app::UsageError("--clusters " + std::to_string(clusters) + ": more parts than --metis-nodes (" +
                            std::to_string(metisNodes) + ")");
    return measure(data, batchSize, numNodes, numEdges, limit, seed, skipMetis ? 0 : metisNodes, metisEdges,
                   clusters);
  });
}
