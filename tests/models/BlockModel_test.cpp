// Models made of blocks: GIN, GCN and NodeGCN list their blocks, running them all (or in any split) gives the
// bits of the models written out op by op, every op carries its block, and dropout masks depend on the random
// key (seed, step, micro-batch), not on the order micro-batches run in.
#include "models/BlockModel.h"

#include <gtest/gtest.h>

#include <set>

#include "ByHand.h"
#include "Molecules.h"
#include "gnn/autograd/OpInfo.h"
#include "gnn/nn/Init.h"
#include "gnn/system/ExecutionContext.h"
#include "models/NodeGCN.h"
#include "models/OgbMolGCN.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

std::vector<Batch> someBatches() {
  static auto ds = test::molecules(50, 11);
  return test::batchesOf(ds, FixedSizeOptions{64, 128, 8}, PackingStrategy::PlannedPack);
}

// A small graph with dense and sparse features for NodeGCN.
struct NodeGraph {
  Tensor x, edgeIndex;
  SparseMatrix xs;
};
NodeGraph nodeGraph() {
  NodeGraph g;
  g.x = Tensor::fromVector<float>({0, 1, 0, 0.5f, 0, 0, 0, 0, 2, 0, 0, 1, 1, 0, 0, 0, 3, 0, 0, 0, 0.25f}, {7, 3});
  std::vector<int64_t> rows, cols;
  std::vector<double> vals;
  for (int64_t i = 0; i < 21; ++i)
    if (g.x.at(i) != 0) rows.push_back(i / 3), cols.push_back(i % 3), vals.push_back(g.x.at(i));
  g.xs = SparseMatrix::fromCoo(7, 3, rows, cols, vals);
  g.edgeIndex = Tensor::fromVector<int64_t>({0, 1, 2, 3, 4, 5, 6, 1, 1, 2, 3, 4, 5, 6, 0, 0}, {2, 8});
  return g;
}

std::unique_ptr<GraphModel> makeModel(bool gin, DType dt, double dropout, uint64_t seed = 3) {
  Generator g(seed);
  GraphModelOptions o;
  o.layers = 3;
  o.hidden = 16;
  o.dtype = dt;
  o.dropout = dropout;
  if (gin) return std::make_unique<OgbMolGIN>(o, g);
  return std::make_unique<OgbMolGCN>(o, g);
}

TEST(BlockModel, GraphModelsListTheirBlocks) {
  std::vector<std::string> expected{"input", "layers/0", "layers/1", "layers/2", "head"};
  for (bool gin : {true, false}) {
    auto m = makeModel(gin, DType::F32, 0);
    EXPECT_EQ(m->blockNames(), expected);
    EXPECT_EQ(m->numBlocks(), 5u);
    EXPECT_EQ(m->blockIndex("layers/1"), 2u);
  }
  Generator g(1);
  NodeGCN net(6, 4, 3, g);
  EXPECT_EQ(net.blockNames(), (std::vector<std::string>{"layers/0", "layers/1"}));
}

// Output and every parameter's gradient of sum(r * out), for a model and its by-hand reference under the same
// random key.
struct Result {
  Tensor out;
  std::vector<Tensor> grads;
};
template <class F>
Result runWithGrads(const Module& m, F forward, uint64_t step) {
  for (auto p : m.parameters()) p.zeroGrad();
  ExecutionContext::current().setRandomKey({42, step, 0});
  Variable out = forward();
  Generator g(step);
  out.backward(init::uniform(out.shape(), -1, 1, g, out.dtype()));
  Result r{out.value(), {}};
  for (const auto& p : m.parameters()) r.grads.push_back(p.hasGrad() ? p.grad().clone() : Tensor());
  return r;
}

void expectBitEqual(const Result& a, const Result& b, const std::string& what) {
  EXPECT_TRUE(a.out.bitEqual(b.out)) << what;
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i) {
    ASSERT_EQ(a.grads[i].defined(), b.grads[i].defined()) << what << " grad " << i;
    if (a.grads[i].defined()) {
      EXPECT_TRUE(a.grads[i].bitEqual(b.grads[i])) << what << " grad " << i;
    }
  }
}

TEST(BlockModel, GinAndGcnEqualTheirOpsWrittenOutByHand) {
  for (bool gin : {true, false})
    for (DType dt : {DType::F32, DType::F64})
      for (bool training : {false, true}) {
        auto m = makeModel(gin, dt, 0.25);
        m->train(training);
        uint64_t step = 0;
        for (const Batch& b : someBatches()) {
          Result blocks = runWithGrads(*m, [&] { return m->forward(b); }, step);
          Result byHand = runWithGrads(*m, [&] { return test::graphModel(*m, b, gin); }, step);
          expectBitEqual(blocks, byHand, std::string(m->name()) + " " + dtypeName(dt) + (training ? " train" : " eval"));
          ++step;
        }
      }
}

// The usage examples of models/BlockModel.h, models/GraphModel.h and models/NodeGCN.h.
TEST(BlockModel, HeaderExamples) {
  Generator gen(2);
  GraphModelOptions opts;
  opts.layers = 2;
  opts.hidden = 8;
  opts.dropout = 0.1;
  OgbMolGIN model(opts, gen);
  const Batch batch = someBatches().front();
  uint64_t seed = 1, step = 0;
  ExecutionContext::current().setRandomKey({seed, step, 0});   // step: the optimizer's step count
  Variable pred = model.forward(batch);                  // all blocks; the state's "out"
  Variable loss = l1Loss(pred, batch.y, batch.yMask);    // padding graphs have yMask 0
  ExecutionContext::current().setRandomKey({seed, step, 0});
  BlockState s = model.runBlocks({}, batch, 0, 3);       // stage 1: input, layers/0, layers/1
  Variable same = model.runBlocks(s, batch, 3, model.numBlocks()).get("out");
  EXPECT_TRUE(same.value().bitEqual(pred.value()));
  EXPECT_EQ(s.names(), std::vector<std::string>{"h"});

  NodeGraph g = nodeGraph();
  NodeGCN net(3, 16, 7, gen);
  ExecutionContext::current().setRandomKey({seed, step, 0});    // step: the optimizer's step count
  Variable logits = net.forward(g.xs, g.edgeIndex);      // features: SparseMatrix or Variable
  EXPECT_EQ(logits.shape(), (Shape{7, 7}));
}

TEST(BlockModel, AnySplitIntoRangesGivesTheSameBits) {
  auto m = makeModel(true, DType::F32, 0.25);
  const Batch b = someBatches().front();
  ExecutionContext::current().setRandomKey({1, 2, 3});
  Tensor whole = m->forward(b).value();
  for (size_t cut = 0; cut <= m->numBlocks(); ++cut) {
    ExecutionContext::current().setRandomKey({1, 2, 3});
    BlockState s = m->runBlocks(BlockState(), b, 0, cut);
    Tensor split = m->runBlocks(s, b, cut, m->numBlocks()).get("out").value();
    EXPECT_TRUE(split.bitEqual(whole)) << "cut before block " << cut;
  }
  ExecutionContext::current().setRandomKey({1, 2, 3});
  Tensor h = m->nodeEmbeddings(b).value();
  ExecutionContext::current().setRandomKey({1, 2, 3});
  EXPECT_TRUE(h.bitEqual(m->runBlocks(BlockState(), b, 0, 4).get("h").value()));
}

// A model's last block hands on its output alone: what the blocks before it (or a caller) put in the state
// does not move on with it to the loss or out of a device's last stage.
TEST(BlockModel, TheLastBlockHandsOnOnlyTheOutput) {
  const std::vector<std::string> out{"out"};
  const Batch b = someBatches().front();
  for (bool gin : {true, false}) {
    auto m = makeModel(gin, DType::F32, 0);
    BlockState s = m->runBlocks(BlockState(), b, 0, m->numBlocks() - 1);
    s.set("extra", Variable(Tensor::zeros({1})));
    EXPECT_EQ(s.names(), (std::vector<std::string>{"h", "extra"}));
    EXPECT_EQ(m->runBlocks(s, b, m->numBlocks() - 1, m->numBlocks()).names(), out) << m->name();
  }
  NodeGraph ng = nodeGraph();
  Generator g(6);
  NodeGCN net(3, 5, 2, g);
  Batch nb;
  nb.edgeIndex = ng.edgeIndex;
  BlockState s;
  s.set("x", Variable(ng.x));  // as forward(Variable, edgeIndex) does
  EXPECT_EQ(net.runBlocks(s, nb, 0, net.numBlocks()).names(), out);
}

struct BlockRecorder : OpObserver {
  void onOp(const OpEvent& e) override {
    if (e.pass == Pass::Forward) ops.emplace_back(e.block, e.info->name);
  }
  std::vector<std::pair<std::string, std::string>> ops;
};

TEST(BlockModel, EveryOpCarriesItsBlock) {
  auto m = makeModel(true, DType::F32, 0.1);
  const Batch b = someBatches().front();
  BlockRecorder rec;
  {
    ObserverScope watch(rec);
    m->forward(b);
  }
  std::vector<std::string> names = m->blockNames();
  std::set<std::string> seen;
  for (const auto& [block, op] : rec.ops) {
    EXPECT_NE(std::find(names.begin(), names.end(), block), names.end()) << op << " in '" << block << "'";
    seen.insert(block);
  }
  EXPECT_EQ(seen.size(), names.size());  // no block is empty
  EXPECT_EQ(rec.ops.front(), (std::pair<std::string, std::string>{"input", "embeddingBag"}));
  EXPECT_EQ(rec.ops.back().first, "head");
}

TEST(BlockModel, ErrorsNameWhatIsThere) {
  auto m = makeModel(false, DType::F32, 0);
  try {
    m->blockIndex("layers/9");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("blocks: input, layers/0, layers/1, layers/2, head"), std::string::npos)
        << e.what();
  }
  const Batch b = someBatches().front();
  EXPECT_THROW(m->runBlocks(BlockState(), b, 2, 6), std::invalid_argument);
  try {
    m->runBlocks(BlockState(), b, 1, 2);  // layers/0 without the input block's "h"
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no entry 'h' (present: none)"), std::string::npos) << e.what();
  }
}

TEST(BlockModel, NodeGcnEqualsItsOpsWrittenOutByHand) {
  NodeGraph ng = nodeGraph();
  Generator g(4);
  NodeGCN net(3, 5, 2, g);
  Batch b;
  b.x = ng.x;
  b.edgeIndex = ng.edgeIndex;
  for (bool training : {false, true}) {
    net.train(training);
    auto P = test::paramsOf(net);
    auto byHand = [&] {
      Variable h = relu(test::gcnConv(P, "conv1.", dropout(Variable(ng.x), 0.5, training), ng.edgeIndex));
      return test::gcnConv(P, "conv2.", dropout(h, 0.5, training), ng.edgeIndex);
    };
    Result ref = runWithGrads(net, byHand, 7);
    expectBitEqual(runWithGrads(net, [&] { return net.forward(Variable(ng.x), ng.edgeIndex); }, 7), ref, "dense");
    expectBitEqual(runWithGrads(net, [&] { return net.forward(b); }, 7), ref, "batch");
  }
  net.eval();  // sparse and dense features give the same logits (up to the product's rounding)
  Tensor dense = net.forward(Variable(ng.x), ng.edgeIndex).value(), sparse = net.forward(ng.xs, ng.edgeIndex).value();
  EXPECT_LT((dense.matrix<float>() - sparse.matrix<float>()).cwiseAbs().maxCoeff(), 1e-6);
}

// Micro-batch k's masks come from key (seed, step, k): running micro-batches 2, 1, 0 gives each the output it
// had when they ran 0, 1, 2 (as pipeline stages and replicas run them in any order).
TEST(Dropout, MasksDoNotDependOnTheOrderMicroBatchesRun) {
  std::vector<Batch> batches = someBatches();
  ASSERT_GE(batches.size(), 3u);
  for (bool gin : {true, false}) {
    auto m = makeModel(gin, DType::F32, 0.5);
    m->train();
    auto run = [&](int64_t k) {
      ExecutionContext::current().setRandomKey({9, 4, static_cast<uint64_t>(k)});
      return m->forward(batches[static_cast<size_t>(k)]).value();
    };
    std::vector<Tensor> forward(3), backward(3);
    for (int64_t k = 0; k < 3; ++k) forward[k] = run(k);
    for (int64_t k = 2; k >= 0; --k) backward[k] = run(k);
    for (int64_t k = 0; k < 3; ++k) EXPECT_TRUE(forward[k].bitEqual(backward[k])) << m->name() << " micro-batch " << k;
    // The masks are really drawn: another step or micro-batch gives other outputs.
    ExecutionContext::current().setRandomKey({9, 5, 0});
    EXPECT_FALSE(m->forward(batches[0]).value().bitEqual(forward[0])) << m->name();
    // A context of its own (another thread's, a replica's) with the same key draws the same masks.
    ExecutionContext other;
    other.setRandomKey({9, 4, 1});
    ContextScope use(other);
    EXPECT_TRUE(m->forward(batches[1]).value().bitEqual(forward[1])) << m->name();
  }
  // NodeGCN's sparse feature dropout draws from the context too.
  NodeGraph ng = nodeGraph();
  Generator g(5);
  NodeGCN net(3, 5, 2, g);
  auto sparseRun = [&](uint64_t k) {
    ExecutionContext::current().setRandomKey({9, 4, k});
    return net.forward(ng.xs, ng.edgeIndex).value();
  };
  Tensor k0 = sparseRun(0), k1 = sparseRun(1);
  EXPECT_TRUE(sparseRun(1).bitEqual(k1));
  EXPECT_TRUE(sparseRun(0).bitEqual(k0));
  EXPECT_FALSE(k0.bitEqual(k1));
}

}  // namespace
}  // namespace gnn
