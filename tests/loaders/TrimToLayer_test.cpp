// BasicGNN::forwardHops on neighbour batches (PyG's trim_to_layer): each layer over only the rows and edges the
// seeds need gives the seeds' outputs and gradients of the whole padded batch's forward, for every class (GraphSAGE
// aggregating into the targets alone, the others keeping the targets' rows), also for batches trimmed to their
// fixed sizes; and SAGEConv's targets-only forward refuses an edge that ends past the targets.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gnn/nn/conv/SAGEConv.h"
#include "gnn/nn/models/BasicGNN.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Random.h"
#include "loaders/FixedSizeNeighborLoader.h"
#include "loaders/RandomNodeGraph.h"

namespace gnn {
namespace {

using json = nlohmann::json;

std::shared_ptr<Graph> hopGraph(int64_t n, uint64_t seed) { return test::randomNodeGraph(n, 6, 5, 4, seed); }

double maxAbsDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(a.at(i) - b.at(i)));
  return m;
}

// The seeds' loss through forwardHops and through the whole batch: outputs and every parameter's gradient.
void expectSameAsWholeBatch(BasicGNN& model, const Batch& b, const std::string& what) {
  // Every seed row (the graph's split marks only the even ones).
  const Tensor all = Tensor::full({b.numSeeds}, 1, DType::U8);
  auto lossOf = [&](const Variable& seeds) { return crossEntropy(seeds, b.y.slice(0, b.numSeeds), all); };
  model.zeroGrad();
  const Variable whole = sliceRows(model.forward(Variable(b.x), b.edgeIndex), 0, b.numSeeds);
  lossOf(whole).backward();
  std::vector<Tensor> gradsWhole;
  for (const Variable& p : model.parameters()) gradsWhole.push_back(p.grad().clone());
  model.zeroGrad();
  const Variable hops = model.forwardHops(Variable(b.x), b.edgeIndex, b.nodesPerHop, b.edgesPerHop);
  ASSERT_EQ(hops.dim(0), b.numSeeds) << what;
  lossOf(hops).backward();
  EXPECT_LT(maxAbsDiff(hops.value(), whole.value()), 1e-5) << what;
  size_t k = 0;
  for (const Variable& p : model.parameters()) EXPECT_LT(maxAbsDiff(p.grad(), gradsWhole[k++]), 1e-5) << what;
}

TEST(TrimToLayer, SeedsGetTheWholeBatchsOutputsAndGradients) {
  auto g = hopGraph(400, 1);
  auto s = std::make_shared<NeighborSampler>(g->edgeIndex, g->numNodes);
  FixedSizeNeighborLoader::Options o;
  o.numNeighbors = {4, 3, 2};
  o.batchSize = 24;
  std::vector<int64_t> input;
  for (int64_t v = 0; v < g->numNodes; v += 3) input.push_back(v);
  // Roomy sizes, and tight ones that trim the last hop.
  FixedSizeOptions tight;
  tight.numGraphs = 2;
  tight.numNodes = 120;
  tight.numEdges = 150;
  for (const FixedSizeOptions& fixed : {FixedSizeNeighborLoader::worstCase(*s, o), tight}) {
    FixedSizeNeighborLoader loader(g, s, input, o, fixed);
    loader.startEpoch(1);
    Batch b;
    ASSERT_TRUE(loader.next(b));
    ASSERT_EQ(b.nodesPerHop.size(), 4u);
    ASSERT_EQ(b.edgesPerHop.size(), 3u);
    int64_t nodes = 0, edges = 0;
    for (int64_t c : b.nodesPerHop) nodes += c;
    for (int64_t c : b.edgesPerHop) edges += c;
    EXPECT_EQ(nodes, b.numRealNodes);
    EXPECT_EQ(edges, b.numRealEdges);
    const json base = {{"in_channels", 5}, {"hidden_channels", 12}, {"num_layers", 3}, {"out_channels", 4}};
    for (const auto& [cls, extra] : std::vector<std::pair<std::string, json>>{
             {"GraphSAGE", json::object()},
             {"GraphSAGE", {{"aggr", "max"}, {"jk", "cat"}}},
             {"GraphSAGE", {{"aggr", "sum"}}},
             {"GIN", json::object()},
             {"GAT", {{"heads", 3}}},
             {"EdgeCNN", json::object()}}) {
      json args = base;
      for (const auto& [k, v] : extra.items()) args[k] = v;
      if (cls == "GAT") args["hidden_channels"] = 12;
      Generator gen(5);
      std::unique_ptr<BasicGNN> model = basicGNNFromSpec({{"class", cls}, {"args", args}}, gen);
      model->eval();  // no dropout: the same function either way
      expectSameAsWholeBatch(*model, b, cls + " " + extra.dump() + (fixed.numNodes == 120 ? " trimmed" : ""));
    }
  }
}

TEST(TrimToLayer, SageTargetsForwardRefusesEdgesPastTheTargets) {
  Generator gen(2);
  SAGEConv conv(3, 4, gen);
  const Variable x(Tensor::fromVector(std::vector<float>(15, 0.5f), {5, 3}));
  const Tensor ok = Tensor::fromVector(std::vector<int64_t>{3, 4, 0, 1}, {2, 2});
  EXPECT_EQ(conv.forward(x, ok, 2).dim(0), 2);
  const Tensor bad = Tensor::fromVector(std::vector<int64_t>{3, 4, 0, 2}, {2, 2});  // 4 -> 2, two targets
  EXPECT_THROW(conv.forward(x, bad, 2), std::invalid_argument);
  EXPECT_THROW(conv.forward(x, ok, 6), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
