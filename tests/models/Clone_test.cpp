// Module::clone for the models' modules: a clone has the same class, structure, names, values (in new storage)
// and training flags, computes the same bits, runs its own blocks on its own parameters, and training it
// leaves the original unchanged.
#include <gtest/gtest.h>

#include "../gnn/CloneCheck.h"
#include "Molecules.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/ExecutionContext.h"
#include "models/NodeGCN.h"
#include "models/OgbMolGCN.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

using testing::expectDeepCopy;

std::vector<Tensor> values(const Module& m) {
  std::vector<Tensor> out;
  for (const auto& p : m.parameters()) out.push_back(p.value().clone());
  return out;
}

TEST(Clone, Encoders) {
  Generator g(1);
  CategoricalEncoder cat({3, 4}, 5, g, DType::F64);
  AtomEncoder atoms(6, g);
  BondEncoder bonds(6, g);
  std::unique_ptr<CategoricalEncoder> cat2 = cloneModule(cat);
  std::unique_ptr<AtomEncoder> atoms2 = cloneModule(atoms);
  std::unique_ptr<BondEncoder> bonds2 = cloneModule(bonds);
  expectDeepCopy(cat, *cat2);
  expectDeepCopy(atoms, *atoms2);
  expectDeepCopy(bonds, *bonds2);
  EXPECT_EQ(cat2->dims(), cat.dims());
  Tensor x = Tensor::fromVector<int64_t>({2, 3, 0, 1}, {2, 2});
  EXPECT_TRUE(cat.forward(x).value().bitEqual(cat2->forward(x).value()));
}

TEST(Clone, GraphModelsComputeTheSameBitsAndTrainApart) {
  auto ds = test::molecules(30, 2);
  std::vector<Batch> batches = test::batchesOf(ds, FixedSizeOptions{64, 128, 8}, PackingStrategy::PlannedPack);
  for (bool gin : {true, false}) {
    Generator g(3);
    GraphModelOptions o;
    o.layers = 2;
    o.hidden = 8;
    o.dropout = 0.2;
    std::unique_ptr<GraphModel> model;
    if (gin) model = std::make_unique<OgbMolGIN>(o, g);
    else model = std::make_unique<OgbMolGCN>(o, g);
    std::unique_ptr<GraphModel> copy = cloneModule(*model);
    expectDeepCopy(*model, *copy);
    EXPECT_EQ(copy->blockNames(), model->blockNames());
    EXPECT_STREQ(copy->name(), model->name());
    // Training mode with dropout: the same key gives the same masks, so the same bits.
    for (const Batch& b : batches) {
      ExecutionContext::current().setRandomKey({1, 0, 0});
      Tensor a = model->forward(b).value();
      ExecutionContext::current().setRandomKey({1, 0, 0});
      EXPECT_TRUE(copy->forward(b).value().bitEqual(a)) << model->name();
    }
    // Train the copy: the original's values and gradients stay as they were.
    std::vector<Tensor> before = values(*model);
    Adam opt({{copy->parameters(), 0.0}}, 0.01);
    for (uint64_t step = 0; step < 3; ++step) {
      ExecutionContext::current().setRandomKey({1, step, 0});
      opt.zeroGrad();
      l1Loss(copy->forward(batches[0]), batches[0].y, batches[0].yMask).backward();
      opt.step();
    }
    std::vector<Tensor> after = values(*model);
    for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(after[i].bitEqual(before[i])) << model->name() << " " << i;
    for (const auto& p : model->parameters()) EXPECT_FALSE(p.hasGrad());
    // The copy's blocks run the copy's (now different) parameters, not the original's.
    model->eval();
    copy->eval();
    EXPECT_FALSE(copy->forward(batches[0]).value().bitEqual(model->forward(batches[0]).value())) << model->name();
    EXPECT_FALSE(cloneModule(*model)->isTraining());
  }
}

TEST(Clone, GinConvKeepsItsPathAndNodeGcnItsOptions) {
  Generator g(4);
  OgbMolGINConv conv(6, g, true, DType::F64);
  conv.setFused(false);
  std::unique_ptr<OgbMolGINConv> conv2 = cloneModule(conv);
  expectDeepCopy(conv, *conv2);
  NodeGCNOptions no;
  no.dropout = 0.3;
  NodeGCN net(3, 4, 2, g, no);
  net.eval();
  std::unique_ptr<NodeGCN> net2 = cloneModule(net);
  expectDeepCopy(net, *net2);
  Tensor x = init::uniform({5, 3}, -1, 1, g);
  Tensor ei = Tensor::fromVector<int64_t>({0, 1, 2, 3, 1, 2, 3, 4}, {2, 4});
  EXPECT_TRUE(net.forward(Variable(x), ei).value().bitEqual(net2->forward(Variable(x), ei).value()));
  net.train();
  net2->train();
  ExecutionContext::current().setRandomKey({2, 0, 0});
  Tensor a = net.forward(Variable(x), ei).value();
  ExecutionContext::current().setRandomKey({2, 0, 0});
  EXPECT_TRUE(net2->forward(Variable(x), ei).value().bitEqual(a));  // same dropout rate
}

}  // namespace
}  // namespace gnn
