// Module::clone: deep copies for replicas (same class, names, values, training flags; new storage), and the
// errors for modules that cannot be cloned.
#include "gnn/nn/Module.h"

#include <gtest/gtest.h>

#include "CloneCheck.h"

#include "gnn/nn/Embedding.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/norm/LayerNorm.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"

namespace gnn {
namespace {

// The usage example of gnn/nn/Module.h.
class Mlp : public Module {
 public:
  Mlp(Generator& g) : a_(16, 32, g), b_(32, 1, g) { registerModule("a", a_); registerModule("b", b_); }
  Variable forward(const Variable& x) { return b_.forward(relu(a_.forward(x))); }
  std::unique_ptr<Module> clone() const override {
    Generator unused;                                    // the fresh weights are overwritten
    return cloneInto(std::make_unique<Mlp>(unused));
  }
 private:
  Linear a_, b_;
};

using testing::expectDeepCopy;

TEST(Module, CloneOfTheHeaderExample) {
  Generator g(1);
  Mlp mlp(g);
  mlp.eval();
  std::unique_ptr<Mlp> replica = cloneModule(mlp);
  expectDeepCopy(mlp, *replica);
  Tensor x = init::uniform({4, 16}, -1, 1, g);
  EXPECT_TRUE(replica->forward(Variable(x)).value().bitEqual(mlp.forward(Variable(x)).value()));
}

TEST(Module, TrainingACloneLeavesTheOriginalAlone) {
  Generator g(2);
  Mlp mlp(g);
  std::vector<Tensor> before;
  for (const auto& p : mlp.parameters()) before.push_back(p.value().clone());
  std::unique_ptr<Mlp> replica = cloneModule(mlp);
  Adam opt({{replica->parameters(), 0.0}}, 0.1);
  Tensor x = init::uniform({4, 16}, -1, 1, g);
  for (int s = 0; s < 3; ++s) {
    opt.zeroGrad();
    sum(replica->forward(Variable(x))).backward();
    opt.step();
  }
  auto now = mlp.parameters();
  for (size_t i = 0; i < now.size(); ++i) {
    EXPECT_TRUE(now[i].value().bitEqual(before[i]));
    EXPECT_FALSE(now[i].hasGrad());
  }
  EXPECT_FALSE(replica->parameters()[0].value().bitEqual(before[0]));
}

TEST(Module, CloneKeepsEveryTrainingFlagAndFrozenParameter) {
  Generator g(3);
  Mlp mlp(g);
  mlp.eval();
  mlp.parameters()[1].setRequiresGrad(false);  // a frozen bias stays frozen in the copy
  std::unique_ptr<Mlp> replica = cloneModule(mlp);
  expectDeepCopy(mlp, *replica);
  mlp.train();
  EXPECT_FALSE(replica->isTraining());
}

TEST(Module, LayersCloneThemselves) {
  Generator g(4);
  Linear lin(3, 5, g, /*bias=*/false, DType::F64);
  LayerNorm norm(5, 1e-3, DType::F64);
  Embedding emb(7, 5, g);
  norm.parameters()[0].value() = init::uniform({5}, 0.5, 1.5, g, DType::F64);
  std::unique_ptr<Linear> lin2 = cloneModule(lin);
  std::unique_ptr<LayerNorm> norm2 = cloneModule(norm);
  std::unique_ptr<Embedding> emb2 = cloneModule(emb);
  expectDeepCopy(lin, *lin2);
  expectDeepCopy(norm, *norm2);
  expectDeepCopy(emb, *emb2);
  EXPECT_EQ(lin2->bias(), nullptr);
  Tensor x = init::uniform({4, 3}, -1, 1, g, DType::F64);
  Variable a = norm.forward(lin.forward(Variable(x))), b = norm2->forward(lin2->forward(Variable(x)));
  EXPECT_TRUE(a.value().bitEqual(b.value()));  // same eps too
  Tensor idx = Tensor::fromVector<int64_t>({6, 0, 3});
  EXPECT_TRUE(emb.forward(idx).value().bitEqual(emb2->forward(idx).value()));
}

class NotCloneable : public Module {
 public:
  NotCloneable() { registerParameter("w", Tensor({2})); }
};
class DerivedLinear : public Linear {
 public:
  using Linear::Linear;
};

TEST(Module, CloneErrorsNameTheClass) {
  NotCloneable m;
  try {
    m.clone();
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NotCloneable does not implement clone()"), std::string::npos) << e.what();
  }
  // A subclass that does not override clone() would be copied as its base class: refused.
  Generator g(5);
  DerivedLinear d(2, 2, g);
  try {
    d.clone();
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("DerivedLinear must override clone()"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gnn
