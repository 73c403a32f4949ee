// layerwiseInference: a BasicGNN's outputs for every node computed a layer at a time over batches of targets
// with their incoming neighbours equal the whole-graph forward (in evaluation) for every class it takes, with
// jumping knowledge and batch norm, for batch sizes that cut the graph unevenly; it refuses GCN, graph-wise norms
// and edge features, and leaves the model's mode as it found it.
#include "loaders/LayerwiseInference.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gnn/ops/Ops.h"
#include "gnn/system/Random.h"
#include "loaders/RandomNodeGraph.h"

namespace gnn {
namespace {

using json = nlohmann::json;

struct SmallGraph {
  int64_t n = 0;
  Tensor x, edgeIndex;
};

// In-degrees 0 .. 8, 6 features.
SmallGraph smallGraph(int64_t n, uint64_t seed) {
  const std::shared_ptr<Graph> g = test::randomNodeGraph(n, 8, 6, 3, seed);
  return {n, g->x, g->edgeIndex};
}

std::vector<int64_t> degreeHistogram(const SmallGraph& s) {
  std::vector<int64_t> deg(static_cast<size_t>(s.n), 0), hist;
  const int64_t* d = s.edgeIndex.data<int64_t>() + s.edgeIndex.dim(1);
  for (int64_t e = 0; e < s.edgeIndex.dim(1); ++e) ++deg[static_cast<size_t>(d[e])];
  for (int64_t v : deg) {
    if (static_cast<int64_t>(hist.size()) <= v) hist.resize(static_cast<size_t>(v) + 1, 0);
    ++hist[static_cast<size_t>(v)];
  }
  return hist;
}

double maxAbsDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(a.at(i) - b.at(i)));
  return m;
}

TEST(LayerwiseInference, EqualsTheWholeGraphForward) {
  const SmallGraph s = smallGraph(150, 1);
  const NeighborSampler sampler(s.edgeIndex, s.n);
  const json base = {{"in_channels", 6}, {"hidden_channels", 16}, {"num_layers", 3}, {"out_channels", 5},
                     {"dropout", 0.3}};
  const std::vector<std::pair<std::string, json>> cases = {
      {"GraphSAGE", json::object()},
      {"GraphSAGE", {{"jk", "cat"}, {"norm", "batch_norm"}}},
      {"GIN", {{"jk", "max"}}},
      {"GAT", {{"heads", 4}}},
      {"GAT", {{"heads", 2}, {"v2", true}, {"jk", "lstm"}}},
      {"PNA", {{"aggregators", {"mean", "max", "std"}}, {"scalers", {"identity", "amplification"}},
               {"deg", degreeHistogram(s)}}},
      {"EdgeCNN", json::object()},
  };
  for (const auto& [cls, extra] : cases) {
    json args = base;
    for (const auto& [k, v] : extra.items()) args[k] = v;
    Generator gen(7);
    std::unique_ptr<BasicGNN> model = basicGNNFromSpec({{"class", cls}, {"args", args}}, gen);
    model->eval();
    Tensor whole;
    {
      NoGradGuard ng;
      whole = model->forward(Variable(s.x), s.edgeIndex).value();
    }
    model->train();
    for (int64_t batch : {1000, 37, 1}) {
      const Tensor lw = layerwiseInference(*model, s.x, sampler, batch);
      EXPECT_LT(maxAbsDiff(lw, whole), 1e-5) << cls << " " << extra.dump() << " batch " << batch;
      EXPECT_TRUE(model->isTraining()) << "the model's mode is restored";
    }
  }
}

TEST(LayerwiseInference, RefusesWhatABatchCannotCompute) {
  const SmallGraph s = smallGraph(30, 2);
  const NeighborSampler sampler(s.edgeIndex, s.n);
  const json base = {{"in_channels", 6}, {"hidden_channels", 8}, {"num_layers", 2}};
  Generator gen(3);
  auto make = [&](const std::string& cls, json extra) {
    json args = base;
    for (const auto& [k, v] : extra.items()) args[k] = v;
    return basicGNNFromSpec({{"class", cls}, {"args", args}}, gen);
  };
  auto gcn = make("GCN", json::object());
  EXPECT_NE(layerwiseInferenceRefusal(*gcn).find("degree"), std::string::npos);
  EXPECT_THROW(layerwiseInference(*gcn, s.x, sampler), std::invalid_argument);
  EXPECT_FALSE(layerwiseInferenceRefusal(*make("GraphSAGE", {{"norm", "graph_norm"}})).empty());
  EXPECT_FALSE(layerwiseInferenceRefusal(*make("GAT", {{"edge_dim", 3}})).empty());
  EXPECT_TRUE(layerwiseInferenceRefusal(*make("GraphSAGE", {{"norm", "BatchNorm"}})).empty());
  auto sage = make("GraphSAGE", json::object());
  EXPECT_THROW(layerwiseInference(*sage, s.x.slice(0, 10), sampler), std::invalid_argument);  // rows != nodes
}

}  // namespace
}  // namespace gnn
