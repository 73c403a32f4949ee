// The field table (loaders/BatchFields.h) through every loader: Graphormer's node-pair fields, in_degree and
// SchNet's pos/z reach the batch exactly, padding holds the documented pad values, and a field the collator
// cannot place is an error naming it.
#include "loaders/BatchFields.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "loaders/ClusterLoader.h"
#include "loaders/DataLoader.h"
#include "loaders/FixedSizeDataLoader.h"
#include "loaders/GraphTrim.h"
#include "loaders/SyntheticGraphs.h"

namespace gnn {
namespace {

// Entry `flat` of t as a double (exact for every value these tests use).
double at(const Tensor& t, int64_t flat) { return t.at(flat); }

// Checks one batch against the graphs it was made from, field by field from the table: every value of every real
// graph equals its source, and every padding position holds the pad value its field documents. `pads` holds the
// pad values (for DataLoader batches: the defaults, which only node-pair blocks use).
void expectBatchHolds(const Batch& b, const std::vector<Graph>& sources, const FixedSizeOptions& pads,
                      bool nodeLevelTargets = false) {
  ASSERT_NO_THROW(b.validate());
  ASSERT_EQ(static_cast<int64_t>(sources.size()), b.numRealGraphs);
  const int64_t m = b.maxNodesPerGraph;
  for (const BatchField& f : batchFields()) {
    const Tensor& t = b.*f.inBatch;
    bool anySource = false;
    for (const Graph& g : sources) anySource = anySource || (g.*f.inGraph).defined();
    if (!anySource && !(f.labelMask && b.y.defined()) && !f.nodeIds) {
      EXPECT_FALSE(t.defined()) << f.name << " appears from nowhere";
      continue;
    }
    ASSERT_TRUE(t.defined()) << f.name << " was dropped";
    const FieldLevel level = f.levelFor(nodeLevelTargets);
    const double pad = f.padValue(pads);
    if (f.nodeIds) {  // edge_index: source + node offset; padding self-loops are checked by validate()
      for (int64_t k = 0; k < b.numRealGraphs; ++k) {
        const Graph& g = sources[k];
        const int64_t e0 = b.edgePtr.at(k), n0 = b.ptr.at(k), e = g.numEdges();
        for (int64_t j = 0; j < e; ++j) {
          ASSERT_EQ(at(t, e0 + j), g.edgeIndex.at(j) + n0);
          ASSERT_EQ(at(t, b.numEdges + e0 + j), g.edgeIndex.at(e + j) + n0);
        }
      }
      continue;
    }
    const int64_t width = t.cols();
    switch (level) {
      case FieldLevel::Node:
      case FieldLevel::Edge: {
        const Tensor& offsets = level == FieldLevel::Node ? b.ptr : b.edgePtr;
        for (int64_t k = 0; k < b.numRealGraphs; ++k) {
          const Tensor& s = sources[k].*f.inGraph;
          const int64_t r0 = static_cast<int64_t>(offsets.at(k)), rows = static_cast<int64_t>(offsets.at(k + 1)) - r0;
          for (int64_t i = 0; i < rows * width; ++i) {
            double want = s.defined() ? at(s, i) : (f.labelMask ? 1.0 : -12345.0);
            ASSERT_EQ(at(t, r0 * width + i), want) << f.name << " of real graph " << k;
          }
        }
        const int64_t realRows = level == FieldLevel::Node ? b.numRealNodes : b.numRealEdges;
        for (int64_t i = realRows * width; i < t.numel(); ++i) ASSERT_EQ(at(t, i), pad) << f.name << " padding";
        break;
      }
      case FieldLevel::Graph:
        for (int64_t k = 0; k < b.numRealGraphs; ++k) {
          const Tensor& s = sources[k].*f.inGraph;
          for (int64_t i = 0; i < width; ++i)
            ASSERT_EQ(at(t, k * width + i), s.defined() ? at(s, i) : 1.0) << f.name << " of real graph " << k;
        }
        for (int64_t i = b.numRealGraphs * width; i < t.numel(); ++i) ASSERT_EQ(at(t, i), pad) << f.name << " padding";
        break;
      case FieldLevel::NodePair: {
        ASSERT_EQ(t.dim(0), b.numGraphs * m) << f.name;
        ASSERT_EQ(t.dim(1), m) << f.name;
        const int64_t inner = t.numel() / (b.numGraphs * m * m);  // K·Fe for edge_input, 1 for spatial_pos
        for (int64_t k = 0; k < b.numGraphs; ++k) {
          const Tensor* s = k < b.numRealGraphs ? &(sources[k].*f.inGraph) : nullptr;
          const int64_t n = s && s->defined() ? sources[k].numNodes : 0;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < m; ++j)
              for (int64_t c = 0; c < inner; ++c) {
                double got = at(t, ((k * m + i) * m + j) * inner + c);
                if (i < n && j < n)
                  ASSERT_EQ(got, at(*s, (i * n + j) * inner + c)) << f.name << " of real graph " << k << " at (" << i
                                                                  << ", " << j << ")";
                else
                  ASSERT_EQ(got, pad) << f.name << " block of graph " << k << " at (" << i << ", " << j << ")";
              }
        }
        break;
      }
    }
  }
}

// The graphs batch i of the loader's current epoch was collated from (trimmed copies where the plan trimmed).
std::vector<Graph> sourcesOf(const FixedSizeDataLoader& loader, const Dataset& ds, size_t i) {
  std::vector<Graph> out;
  for (const PlannedGraph& p : loader.plan().batches.at(i))
    out.push_back(p.trimmed ? *p.trimmed : ds.get(static_cast<size_t>(p.index)));
  return out;
}

FixedSizeOptions optionsFor(const Dataset& ds, PackingStrategy s) {
  return s == PackingStrategy::PadToMax ? FixedSizeOptions::fromDataset(ds, 5) : FixedSizeOptions::forPacking(ds, 8);
}

TEST(BatchFields, TableDescribesEveryFieldOnce) {
  std::set<std::string> names;
  std::vector<Tensor Graph::*> inGraph;  // member pointers compare only for equality
  for (const BatchField& f : batchFields()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_EQ(std::count(inGraph.begin(), inGraph.end(), f.inGraph), 0) << f.name;
    inGraph.push_back(f.inGraph);
  }
  for (const CollatorField& f : collatorFields()) EXPECT_TRUE(names.insert(f.name).second) << f.name;
  auto level = [&](const char* name) {
    for (const BatchField& f : batchFields())
      if (std::string(f.name) == name) return f.level;
    ADD_FAILURE() << name << " is not in the table";
    return FieldLevel::Graph;
  };
  EXPECT_EQ(level("spatial_pos"), FieldLevel::NodePair);
  EXPECT_EQ(level("edge_input"), FieldLevel::NodePair);
  EXPECT_EQ(level("in_degree"), FieldLevel::Node);
  EXPECT_EQ(level("pos"), FieldLevel::Node);
  EXPECT_EQ(level("z"), FieldLevel::Node);
  EXPECT_EQ(level("edge_attr"), FieldLevel::Edge);
  EXPECT_EQ(level("y"), FieldLevel::Graph);
  // Graphormer's collator adds 1 and pads with 0 (graphormer/data/collator.py): -1 before that shift.
  EXPECT_EQ(FixedSizeOptions{}.pairPadValue, -1.0);
}

TEST(BatchFields, HeaderExamples) {
  Generator gen(1);
  Graph g = test::graphormerGraph(gen, 4, 4);
  // loaders/BatchFields.h
  std::vector<std::string> carried;
  for (const BatchField& f : batchFields())
    if ((g.*f.inGraph).defined()) carried.push_back(std::string(fieldLevelName(f.level)) + " " + f.name);
  EXPECT_NE(std::find(carried.begin(), carried.end(), "node-pair spatial_pos"), carried.end());
  EXPECT_EQ(carried.size(), 10u);  // all but the three split masks
  // loaders/Batch.h
  FixedSizeOptions opts = FixedSizeOptions::fromDataset(InMemoryDataset({g, g}), 3);
  Batch b = FixedSizeCollator(opts).collate({g, g});
  Tensor sp = b.spatialPos.reshape({b.numGraphs, b.maxNodesPerGraph, b.maxNodesPerGraph});
  EXPECT_EQ(sp.shape(), (Shape{3, 4, 4}));
  // loaders/FixedSizeOptions.h
  int64_t nodes = 8, edges = b.numRealEdges, graphs = 2;
  bool ok = opts.fits(nodes, edges, graphs);
  EXPECT_TRUE(ok);
}

class GraphormerThroughLoaders : public ::testing::TestWithParam<PackingStrategy> {};

TEST_P(GraphormerThroughLoaders, EveryValueOfEveryGraphExactly) {
  auto ds = test::graphormerDataset(150, 3);
  Generator gen(17);
  ds->push(test::graphormerGraph(gen, 0, 0));  // an empty molecule: no node-pair fields, no pos, no z
  FixedSizeOptions o = optionsFor(*ds, GetParam());
  o.nodePadValue = 7;  // pos, z and in_degree of padding nodes
  o.edgePadValue = 5;
  o.graphPadValue = -3;
  EXPECT_EQ(o.maxGraphNodes(), 12);  // the dataset's largest graph: node-pair blocks stay small
  FixedSizeDataLoader::Options lo;
  lo.strategy = GetParam();
  lo.seed = 5;
  FixedSizeDataLoader loader(ds, o, lo);
  int64_t graphs = 0;
  bool sawUnreachable = false;
  for (int64_t epoch : {0, 1}) {
    loader.startEpoch(epoch);
    Batch b;
    for (size_t i = 0; loader.next(b); ++i) {
      ASSERT_TRUE(b.spatialPos.defined() && b.inDegree.defined() && b.edgeInput.defined() && b.pos.defined() &&
                  b.z.defined());
      EXPECT_EQ(b.maxNodesPerGraph, 12);
      EXPECT_EQ(b.spatialPos.shape(), (Shape{o.numGraphs * 12, 12}));
      EXPECT_EQ(b.edgeInput.shape(), (Shape{o.numGraphs * 12, 12, 3, 3}));
      expectBatchHolds(b, sourcesOf(loader, *ds, i), o);
      for (int64_t v = 0; v < b.spatialPos.numel(); ++v) sawUnreachable = sawUnreachable || b.spatialPos.at(v) == 510;
      graphs += b.numRealGraphs;
    }
  }
  EXPECT_EQ(graphs, 2 * static_cast<int64_t>(ds->size()));
  EXPECT_TRUE(sawUnreachable);
}

TEST_P(GraphormerThroughLoaders, MicroBatchStacksKeepEveryField) {
  auto ds = test::graphormerDataset(120, 4);
  FixedSizeOptions o = optionsFor(*ds, GetParam());
  FixedSizeDataLoader::Options lo;
  lo.strategy = GetParam();
  lo.seed = 2;
  FixedSizeDataLoader single(ds, o, lo);
  lo.microBatchesPerRequest = 3;
  FixedSizeDataLoader combined(ds, o, lo);
  single.startEpoch(0);
  combined.startEpoch(0);
  Batch req, one;
  int64_t requests = 0;
  while (combined.nextRequest(req)) {
    ++requests;
    const int64_t parts = req.numGraphs / o.numGraphs;  // 3, or fewer in the epoch's last request
    ASSERT_TRUE(parts >= 1 && parts <= 3);
    EXPECT_EQ(req.spatialPos.shape(), (Shape{parts * o.numGraphs * o.maxGraphNodes(), o.maxGraphNodes()}));
    EXPECT_EQ(req.edgeInput.dim(0), parts * o.numGraphs * o.maxGraphNodes());
    EXPECT_EQ(req.inDegree.dim(0), parts * o.numNodes);
    for (int64_t k = 0; k < parts; ++k) {
      ASSERT_TRUE(single.next(one));
      Batch mb = parts == 1 ? req : microBatch(req, k, parts);
      mb.validate();
      for (const BatchField& f : batchFields())
        EXPECT_TRUE((mb.*f.inBatch).bitEqual(one.*f.inBatch)) << f.name << ", micro-batch " << k;
      for (const CollatorField& f : collatorFields())
        EXPECT_TRUE((mb.*f.inBatch).bitEqual(one.*f.inBatch)) << f.name << ", micro-batch " << k;
      EXPECT_EQ(mb.graphIndex, one.graphIndex);
    }
  }
  EXPECT_GE(requests, 2);
  EXPECT_FALSE(single.next(one));  // every batch came in some request
}

INSTANTIATE_TEST_SUITE_P(Loaders, GraphormerThroughLoaders,
                         ::testing::Values(PackingStrategy::PadToMax, PackingStrategy::StreamPack,
                                           PackingStrategy::PlannedPack),
                         [](const auto& info) { return std::string(packingStrategyName(info.param)); });

TEST(BatchFields, TrimmingKeepsNodePairFieldsOfTheKeptNodes) {
  Generator gen(23);
  Graph big = test::graphormerGraph(gen, 30, 30, 4);
  for (OverSizeStrategy s : {OverSizeStrategy::TrimNodes, OverSizeStrategy::TrimNodesAndEdges, OverSizeStrategy::TrimEdges}) {
    Generator g(5);
    std::vector<int64_t> kept;
    const int64_t maxNodes = s == OverSizeStrategy::TrimEdges ? 30 : 17;
    Graph t = trimGraph(big, maxNodes, 40, s, g, false, "graph 0", &kept);
    ASSERT_EQ(static_cast<int64_t>(kept.size()), t.numNodes);
    ASSERT_LE(t.numNodes, maxNodes);
    ASSERT_LE(t.numEdges(), 40);
    // The trimmed graph's encodings are the whole graph's, restricted to the kept nodes (rows and columns).
    EXPECT_TRUE(t.spatialPos.bitEqual(detail::takePairs(big.spatialPos, kept)));
    EXPECT_TRUE(t.edgeInput.bitEqual(detail::takePairs(big.edgeInput, kept)));
    EXPECT_TRUE(t.inDegree.bitEqual(detail::takeRows(big.inDegree, kept)));
    EXPECT_TRUE(t.pos.bitEqual(detail::takeRows(big.pos, kept)));
    EXPECT_TRUE(t.z.bitEqual(detail::takeRows(big.z, kept)));
    EXPECT_TRUE(t.y.bitEqual(big.y));
    EXPECT_EQ(t.spatialPos.shape(), (Shape{t.numNodes, t.numNodes}));
    EXPECT_EQ(t.edgeInput.shape(), (Shape{t.numNodes, t.numNodes, 4, 3}));
  }
}

TEST(BatchFields, TrimmedGraphsThroughTheLoaderKeepEveryField) {
  auto ds = test::graphormerDataset(60, 8, 2, 10);
  Generator gen(31);
  ds->push(test::graphormerGraph(gen, 40, 40));  // graph 60 exceeds the fixed size
  FixedSizeOptions o{70, 150, 5};
  o.maxNodesPerGraph = 20;  // node-pair blocks of 20: graph 60 must lose nodes
  for (OverSizeStrategy s : {OverSizeStrategy::TrimNodes, OverSizeStrategy::TrimNodesAndEdges}) {
    FixedSizeDataLoader::Options lo;
    lo.strategy = PackingStrategy::StreamPack;
    lo.overSize = s;
    lo.prefetch = 0;
    FixedSizeDataLoader loader(ds, o, lo);
    loader.startEpoch(1);
    EXPECT_EQ(loader.report().trimmed, 1);
    Batch b;
    bool found = false;
    for (size_t i = 0; loader.next(b); ++i) {
      expectBatchHolds(b, sourcesOf(loader, *ds, i), o);
      for (size_t k = 0; k < b.graphIndex.size(); ++k) {
        if (b.graphIndex[k] != 60) continue;
        found = true;
        const Graph& t = *loader.plan().batches[i][k].trimmed;
        EXPECT_LE(t.numNodes, 20);
        EXPECT_EQ(t.spatialPos.dim(0), t.numNodes);
      }
    }
    EXPECT_TRUE(found);
  }
  // Without trimming the same graph is an error that names it and the per-graph limit.
  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::StreamPack;
  try {
    FixedSizeDataLoader(ds, o, lo).startEpoch(0);
    FAIL() << "expected an over-size error";
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("graph 60"), std::string::npos) << msg;
    EXPECT_NE(msg.find("maxNodesPerGraph = 20"), std::string::npos) << msg;
  }
}

TEST(BatchFields, DataLoaderBlocksAreAsLargeAsTheLargestGraph) {
  auto ds = test::graphormerDataset(40, 6, 1, 9);
  DataLoader::Options lo;
  lo.batchSize = 7;
  lo.prefetch = 0;
  DataLoader loader(ds, lo);
  loader.startEpoch(0);
  FixedSizeOptions defaults;
  for (Batch b; loader.next(b);) {
    std::vector<Graph> src;
    int64_t largest = 0;
    for (int64_t idx : b.graphIndex) {
      src.push_back(ds->get(static_cast<size_t>(idx)));
      largest = std::max(largest, src.back().numNodes);
    }
    EXPECT_EQ(b.maxNodesPerGraph, largest);  // as Graphormer's collator pads to its batch's max_node
    expectBatchHolds(b, src, defaults);
  }
}

TEST(BatchFields, SchNetPosAndZSurviveEveryLoader) {
  // pos and z only (no Graphormer encodings), float32 and int64.
  auto ds = test::graphormerDataset(80, 9);
  for (Graph& g : ds->graphs()) g.spatialPos = g.inDegree = g.edgeInput = Tensor();
  for (PackingStrategy s : {PackingStrategy::PadToMax, PackingStrategy::StreamPack, PackingStrategy::PlannedPack}) {
    FixedSizeOptions o = optionsFor(*ds, s);
    o.nodePadValue = -2;
    FixedSizeDataLoader::Options lo;
    lo.strategy = s;
    FixedSizeDataLoader loader(ds, o, lo);
    loader.startEpoch(0);
    Batch b;
    for (size_t i = 0; loader.next(b); ++i) {
      EXPECT_EQ(b.pos.dtype(), DType::F32);
      EXPECT_EQ(b.z.dtype(), DType::I64);
      EXPECT_FALSE(b.spatialPos.defined());
      expectBatchHolds(b, sourcesOf(loader, *ds, i), o);
    }
  }
}

TEST(BatchFields, ClusterBatchesCarryZWithTheNodesEvenWhenTrimmed) {
  Generator gen(3);
  Graph g = test::randomGraph(gen, 200, 200, 0.5);
  std::vector<int64_t> z;
  std::vector<float> pos;
  for (int64_t v = 0; v < g.numNodes; ++v) {
    z.push_back(1000 + v);
    for (int d = 0; d < 3; ++d) pos.push_back(static_cast<float>(v) + 0.25f * static_cast<float>(d));
  }
  g.z = Tensor::fromVector(z);
  g.pos = Tensor::fromVector(pos, {g.numNodes, 3});
  g.y = Tensor();
  auto cd = std::make_shared<ClusterData>(g, 8, 1);
  ClusterLoader::Options lo;
  lo.clustersPerBatch = 3;
  for (FixedSizeOptions o : {cd->worstCaseOptions(3), FixedSizeOptions{60, 150, 2}}) {
    ClusterLoader loader(cd, o, lo);
    loader.startEpoch(0);
    for (Batch b; loader.next(b);) {
      b.validate();
      ASSERT_EQ(static_cast<int64_t>(b.nodeIndex.size()), b.numRealNodes);
      for (int64_t i = 0; i < b.numRealNodes; ++i) {
        EXPECT_EQ(b.z.at(i), 1000 + b.nodeIndex[i]);
        EXPECT_EQ(b.pos.at(3 * i + 2), static_cast<float>(b.nodeIndex[i]) + 0.5f);
      }
      for (int64_t i = b.numRealNodes; i < b.numNodes; ++i) EXPECT_EQ(b.z.at(i), o.nodePadValue);
    }
    if (o.numNodes == 60) {
      EXPECT_GT(loader.report().trimmed, 0);
    }
  }
}

// --- Fields the collator cannot place are errors that name the field and the graph.

std::string collateError(const std::vector<Graph>& gs, const FixedSizeOptions& o, std::vector<int64_t> idx = {}) {
  try {
    FixedSizeCollator(o).collate(gs, idx);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

void expectMentions(const std::string& msg, std::initializer_list<const char*> words) {
  for (const char* w : words) EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' missing from: " << msg;
}

TEST(BatchFields, AFieldSomeGraphsLackIsAnError) {
  auto ds = test::graphormerDataset(3, 11, 3, 6);
  FixedSizeOptions o = FixedSizeOptions::fromDataset(*ds, 4);
  std::vector<Graph> gs{ds->get(0), ds->get(1), ds->get(2)};
  gs[1].spatialPos = Tensor();
  expectMentions(collateError(gs, o, {20, 21, 22}), {"spatial_pos", "graph 21", "graph 20"});
  gs = {ds->get(0), ds->get(1), ds->get(2)};
  gs[2].inDegree = Tensor();
  expectMentions(collateError(gs, o, {20, 21, 22}), {"in_degree", "graph 22"});
  gs = {ds->get(0), ds->get(1), ds->get(2)};
  gs[0].edgeInput = Tensor();  // the first graph lacks it: still an error, not a silent drop
  expectMentions(collateError(gs, o, {20, 21, 22}), {"edge_input", "graph 20"});
  gs = {ds->get(0), ds->get(1), ds->get(2)};
  gs[0].y = Tensor();
  gs[0].yMask = Tensor();
  expectMentions(collateError(gs, o, {20, 21, 22}), {"y", "graph 20"});
  // Through a loader the message names the dataset index.
  auto broken = test::graphormerDataset(12, 12, 2, 6);
  broken->graphs()[5].edgeInput = Tensor();
  FixedSizeDataLoader::Options lo;
  lo.shuffle = false;
  lo.prefetch = 0;
  FixedSizeDataLoader loader(broken, FixedSizeOptions::fromDataset(*broken, 13), lo);
  loader.startEpoch(0);
  Batch b;
  try {
    loader.next(b);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    expectMentions(e.what(), {"edge_input", "graph 5"});
  }
}

TEST(BatchFields, AFieldOfTheWrongShapeOrTypeIsAnError) {
  auto ds = test::graphormerDataset(2, 13, 3, 6);
  FixedSizeOptions o = FixedSizeOptions::fromDataset(*ds, 3);
  std::vector<Graph> gs{ds->get(0), ds->get(1)};
  const int64_t n = gs[1].numNodes;
  gs[1].spatialPos = Tensor({n, n + 1}, DType::I64);  // not [N, N]
  expectMentions(collateError(gs, o, {7, 8}), {"spatial_pos", "graph 8", "node-pair"});
  gs = {ds->get(0), ds->get(1)};
  gs[0].edgeInput = Tensor({gs[0].numNodes, gs[0].numNodes, 2, 3}, DType::I64);  // K = 2 beside K = 3
  expectMentions(collateError(gs, o, {7, 8}), {"edge_input", "graph 7"});
  gs = {ds->get(0), ds->get(1)};
  gs[1].inDegree = Tensor({n + 2}, DType::I64);
  expectMentions(collateError(gs, o, {7, 8}), {"in_degree", "graph 8"});
  gs = {ds->get(0), ds->get(1)};
  gs[0].pos = gs[0].pos.to(DType::F64);  // float64 beside float32
  expectMentions(collateError(gs, o, {7, 8}), {"pos", "graph 7"});
  gs = {ds->get(0), ds->get(1)};
  gs[1].yMask = Tensor({3}, DType::U8);  // y has one value
  expectMentions(collateError(gs, o, {7, 8}), {"y_mask", "graph 8"});
  // A pad value the field's type cannot hold, and a type the loaders cannot pad.
  gs = {ds->get(0), ds->get(1)};
  for (Graph& g : gs) g.spatialPos = Tensor(g.spatialPos.shape(), DType::U8);
  expectMentions(collateError(gs, o), {"spatial_pos", "uint8", "-1"});
  gs = {ds->get(0), ds->get(1)};
  for (Graph& g : gs) g.pos = Tensor(g.pos.shape(), DType::F16);
  expectMentions(collateError(gs, o), {"pos", "float16"});
}

}  // namespace
}  // namespace gnn
