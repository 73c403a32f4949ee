// ClusterData's large-graph paths: subgraphs cut from the compact CSR (targets only, edge ids only when an
// edge-level field needs them, or the edge list itself when it is sorted by source) equal a brute-force cut;
// a graph renumbered cluster by cluster (clusterOrder + OgbNodeDataset::permuteNodes) with its partition given
// yields the same batches, bit for bit, as the graph as read.
#include <gtest/gtest.h>

#include <numeric>

#include "data/OgbNodeDataset.h"
#include "gnn/system/Random.h"
#include "loaders/ClusterLoader.h"

namespace gnn {
namespace {

// Communities of random size, directed edges (some one way only), duplicates, self-loops, an isolated node;
// node-level labels and masks, float features; edge_attr only when asked.
Graph messyGraph(int64_t n, int64_t m, uint64_t seed, bool edgeAttr) {
  Generator g(seed);
  Graph gr;
  gr.numNodes = n;
  Tensor ei({2, m}, DType::I64);
  int64_t* s = ei.data<int64_t>();
  int64_t* d = s + m;
  for (int64_t j = 0; j < m; ++j) {
    s[j] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n - 1)));  // node n-1 stays isolated
    const uint64_t kind = g.nextBelow(10);
    d[j] = kind < 7 ? (s[j] / 50) * 50 + static_cast<int64_t>(g.nextBelow(50)) % (n - 1 - (s[j] / 50) * 50)
                    : kind == 7 ? s[j] : static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n - 1)));
    if (kind == 8 && j > 0) {
      s[j] = s[j - 1];
      d[j] = d[j - 1];
    }
  }
  gr.edgeIndex = ei;
  Tensor x({n, 3});
  for (int64_t i = 0; i < n * 3; ++i) x.data<float>()[i] = static_cast<float>(g.nextUniform());
  gr.x = x;
  Tensor y({n}, DType::I64), train({n}, DType::U8);
  for (int64_t v = 0; v < n; ++v) {
    y.data<int64_t>()[v] = v % 5;
    train.data<uint8_t>()[v] = v % 3 == 0;
  }
  gr.y = y;
  gr.trainMask = train;
  if (edgeAttr) {
    Tensor a({m, 1});
    for (int64_t j = 0; j < m; ++j) a.data<float>()[j] = static_cast<float>(j);
    gr.edgeAttr = a;
  }
  return gr;
}

// The cut by definition: chosen nodes cluster by cluster (ascending within each), then for each node in that
// order its out-edges in edge-list order whose target is chosen.
void expectBruteForceCut(const ClusterData& cd, const std::vector<int64_t>& clusters) {
  const Graph& g = cd.graph();
  std::vector<int64_t> nodes, local(static_cast<size_t>(g.numNodes), -1);
  for (int64_t c : clusters)
    for (int64_t v : cd.clusterNodes(c)) {
      local[v] = static_cast<int64_t>(nodes.size());
      nodes.push_back(v);
    }
  const int64_t m = g.numEdges();
  const int64_t* e = g.edgeIndex.data<int64_t>();
  std::vector<int64_t> src, dst, ids;
  for (int64_t v : nodes)
    for (int64_t j = 0; j < m; ++j)
      if (e[j] == v && local[e[m + j]] >= 0) {
        src.push_back(local[v]);
        dst.push_back(local[e[m + j]]);
        ids.push_back(j);
      }
  std::vector<int64_t> nodeIds;
  Graph sub = cd.subgraph(clusters, &nodeIds);
  EXPECT_EQ(nodeIds, nodes);
  ASSERT_EQ(sub.numEdges(), static_cast<int64_t>(src.size()));
  const int64_t k = sub.numEdges();
  const int64_t* se = sub.edgeIndex.data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(se, se + k), src);
  EXPECT_EQ(std::vector<int64_t>(se + k, se + 2 * k), dst);
  if (g.edgeAttr.defined()) {
    ASSERT_TRUE(sub.edgeAttr.defined());
    for (int64_t j = 0; j < k; ++j) EXPECT_EQ(sub.edgeAttr.data<float>()[j], g.edgeAttr.data<float>()[ids[j]]);
  } else {
    EXPECT_FALSE(sub.edgeAttr.defined());
  }
  for (size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(sub.y.data<int64_t>()[i], g.y.data<int64_t>()[nodes[i]]);
}

TEST(ClusterDataLarge, SubgraphsEqualTheBruteForceCutOnEveryPath) {
  for (bool attr : {false, true})
    for (bool sorted : {false, true}) {
      SCOPED_TRACE(std::string(attr ? "edge_attr" : "no edge_attr") + (sorted ? ", sorted by source" : ""));
      Graph g = messyGraph(400, 3000, 7, attr);
      if (sorted) {
        // A stable sort by source, edge_attr along.
        const int64_t m = g.numEdges();
        const int64_t* e = g.edgeIndex.data<int64_t>();
        std::vector<int64_t> perm(static_cast<size_t>(m));
        std::iota(perm.begin(), perm.end(), int64_t{0});
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return e[a] < e[b]; });
        Tensor ei({2, m}, DType::I64);
        Tensor ea = attr ? Tensor({m, 1}) : Tensor();
        for (int64_t j = 0; j < m; ++j) {
          ei.data<int64_t>()[j] = e[perm[j]];
          ei.data<int64_t>()[m + j] = e[m + perm[j]];
          if (attr) ea.data<float>()[j] = g.edgeAttr.data<float>()[perm[j]];
        }
        g.edgeIndex = ei;
        g.edgeAttr = ea;
      }
      ClusterData cd(g, 6, 1);
      expectBruteForceCut(cd, {2, 0, 5});
      expectBruteForceCut(cd, {4});
      expectBruteForceCut(cd, {0, 1, 2, 3, 4, 5});
    }
}

TEST(ClusterDataLarge, RenumberedByClusterTheBatchesAreTheSameBits) {
  Graph g = messyGraph(600, 5000, 8, /*edgeAttr=*/false);
  const int64_t k = 8;
  const std::vector<int64_t> part = ClusterData::partition(g.numNodes, g.edgeIndex, k, 2);
  auto original = std::make_shared<ClusterData>(g, part, k);
  const std::vector<int64_t> order = ClusterData::clusterOrder(part, k);
  OgbNodeDataset ds;
  ds.graph = g;
  ds.graph.x = g.x.clone();
  ds.graph.edgeIndex = g.edgeIndex.clone();
  ds.trainIdx = {0, 3, 599, 42};
  ds.permuteNodes(order);
  // Nodes cluster by cluster; the edge list sorted by source; rows, labels and split lists moved along.
  std::vector<int64_t> renumberedPart(order.size());
  for (size_t i = 0; i < order.size(); ++i) renumberedPart[i] = part[order[i]];
  EXPECT_TRUE(std::is_sorted(renumberedPart.begin(), renumberedPart.end()));
  const int64_t* e = ds.graph.edgeIndex.data<int64_t>();
  EXPECT_TRUE(std::is_sorted(e, e + ds.graph.numEdges()));
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(ds.graph.x.matrix<float>().row(i), g.x.matrix<float>().row(order[i]));
    EXPECT_EQ(ds.graph.y.data<int64_t>()[i], g.y.data<int64_t>()[order[i]]);
  }
  for (size_t t = 0; t < ds.trainIdx.size(); ++t)
    EXPECT_EQ(order[static_cast<size_t>(ds.trainIdx[t])], (std::vector<int64_t>{0, 3, 599, 42})[t]);
  auto renumbered = std::make_shared<ClusterData>(ds.graph, renumberedPart, k);
  ClusterLoader::Options lo;
  lo.clustersPerBatch = 3;
  lo.seed = 5;
  ClusterLoader a(original, original->worstCaseOptions(3), lo), b(renumbered, renumbered->worstCaseOptions(3), lo);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    a.startEpoch(epoch);
    b.startEpoch(epoch);
    int64_t batches = 0;
    for (Batch x, y; a.next(x);) {
      ASSERT_TRUE(b.next(y));
      EXPECT_TRUE(x.x.bitEqual(y.x));
      EXPECT_TRUE(x.edgeIndex.bitEqual(y.edgeIndex));
      EXPECT_TRUE(x.y.bitEqual(y.y));
      EXPECT_TRUE(x.trainMask.bitEqual(y.trainMask));
      for (size_t i = 0; i < x.nodeIndex.size(); ++i) EXPECT_EQ(x.nodeIndex[i], order[y.nodeIndex[i]]);
      ++batches;
    }
    EXPECT_EQ(batches, a.numBatches());
  }
}

TEST(ClusterDataLarge, GivenPartitionIsChecked) {
  Graph g = messyGraph(100, 400, 9, false);
  EXPECT_THROW(ClusterData(g, std::vector<int64_t>(99, 0), 2), std::invalid_argument);
  std::vector<int64_t> part(100, 0);
  part[7] = 2;
  EXPECT_THROW(ClusterData(g, part, 2), std::invalid_argument);
  EXPECT_THROW(ClusterData::clusterOrder(part, 2), std::invalid_argument);
  part[7] = 1;
  ClusterData cd(g, part, 2);
  EXPECT_EQ(cd.clusterSize(1), 1);
}

}  // namespace
}  // namespace gnn

namespace gnn {
namespace {

// The features and the edge list parked while METIS runs (cora_gcn --loader cluster on a large graph): the
// same partition, and both tensors back with the same bits, edgeIndex among them although METIS's input is
// built from it.
TEST(ClusterDataLarge, TensorsSpilledWhileMetisRunsComeBackAndChangeNoPartition) {
  Graph g = messyGraph(600, 5000, 8, /*edgeAttr=*/false);
  // Features wide enough (600 x 28,000 floats, 67 MB) to pass TensorSpill's 64 MB floor; the edge list is not.
  g.x = Tensor::empty({600, 28000});
  for (int64_t k = 0; k < g.x.numel(); ++k) g.x.data<float>()[k] = static_cast<float>(k % 1009) * 0.25f - 3.0f;
  const Tensor x = g.x.clone(), edges = g.edgeIndex.clone();
  int64_t cutA = 0, cutB = 0, spilled = -1;
  const std::vector<int64_t> plain = ClusterData::partition(g.numNodes, g.edgeIndex, 8, 2, &cutA);
  Graph h = g;
  h.x = g.x.clone();  // owned alone, as a loaded dataset's are
  h.edgeIndex = g.edgeIndex.clone();
  g = Graph();
  const std::vector<int64_t> parked =
      ClusterData::partition(h.numNodes, h.edgeIndex, 8, 2, &cutB, {&h.x, &h.edgeIndex}, &spilled);
  EXPECT_EQ(parked, plain);
  EXPECT_EQ(cutB, cutA);
  EXPECT_TRUE(h.x.bitEqual(x));
  EXPECT_TRUE(h.edgeIndex.bitEqual(edges));
  EXPECT_EQ(spilled, static_cast<int64_t>(x.nbytes())) << "the features were not parked (or the edges were)";
  // Below TensorSpill's 64 MB floor nothing is parked: small graphs never touch the disk.
  const std::vector<int64_t> small =
      ClusterData::partition(h.numNodes, h.edgeIndex, 8, 2, nullptr, {&h.edgeIndex}, &spilled);
  EXPECT_EQ(small, plain);
  EXPECT_EQ(spilled, 0);
}

}  // namespace
}  // namespace gnn
