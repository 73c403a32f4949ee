// Node-level float features (Batch::nodeFeatures; molecules: the user's atom descriptors) in GIN, GCN and D-MPNN:
// every parameter's gradient, the new ones included, against finite differences; real molecules' outputs the
// same bits whatever the padding; the features reach the output; and a model built without them has exactly
// the parameters (names, shapes, initial values) it had before they existed.
#include <gtest/gtest.h>

#include <cmath>

#include "../gnn/GradCheck.h"
#include "Molecules.h"
#include "models/Dmpnn.h"
#include "models/NodeFeatures.h"
#include "models/OgbMolGCN.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

constexpr int64_t kWidth = 3;

// test::molecules with kWidth random values per atom.
std::shared_ptr<InMemoryDataset> featuredMolecules(int64_t count, uint64_t seed) {
  auto plain = test::molecules(count, seed);
  auto ds = std::make_shared<InMemoryDataset>();
  Generator g(seed + 1000);
  for (size_t i = 0; i < plain->size(); ++i) {
    Graph gr = plain->get(i);
    std::vector<float> v;
    for (int64_t k = 0; k < gr.numNodes * kWidth; ++k) v.push_back(static_cast<float>(g.nextUniform() * 4 - 2));
    gr.nodeFeatures = Tensor::fromVector(v, {gr.numNodes, kWidth});
    ds->push(std::move(gr));
  }
  return ds;
}

std::unique_ptr<BlockModel> makeModel(const std::string& kind, int64_t nodeFeatures, DType dtype, uint64_t seed) {
  Generator gen(seed);
  if (kind == "dmpnn") {
    DmpnnOptions o;
    o.hidden = 5;
    o.ffnHidden = 4;
    o.tasks = 2;
    o.nodeFeatures = nodeFeatures;
    o.dtype = dtype;
    return std::make_unique<Dmpnn>(o, gen);
  }
  GraphModelOptions o;
  o.layers = 2;
  o.hidden = 4;
  o.tasks = 2;
  o.nodeFeatures = nodeFeatures;
  o.dtype = dtype;
  if (kind == "gcn") return std::make_unique<OgbMolGCN>(o, gen);
  return std::make_unique<OgbMolGIN>(o, gen);
}

class NodeFeatureModels : public ::testing::TestWithParam<std::string> {};

TEST_P(NodeFeatureModels, ParameterGradientsMatchFiniteDifferences) {
  auto ds = featuredMolecules(8, 13);
  Batch b = test::batchesOf(ds, FixedSizeOptions{96, 160, 9}, PackingStrategy::PlannedPack)[0];
  ASSERT_TRUE(b.nodeFeatures.defined());
  ASSERT_GT(b.numRealEdges, 30);  // bonds, so that messages (and W_i, W_h) matter
  auto model = makeModel(GetParam(), kWidth, DType::F64, 4);
  Tensor r = testing::randomTensor({b.numGraphs, 2}, 99);
  auto loss = [&] { return sum(mul(model->forward(b), Variable(r))); };
  model->zeroGrad();
  loss().backward();
  const double eps = 1e-6;
  int64_t checked = 0, featureWeights = 0;
  for (auto& [name, p] : model->namedParameters()) {
    ASSERT_TRUE(p.hasGrad()) << name;
    Tensor analytic = p.grad().clone();
    double* v = p.value().data<double>();
    for (int64_t j = 0; j < p.value().numel(); ++j) {
      const double saved = v[j];
      NoGradGuard ng;
      v[j] = saved + eps;
      const double up = loss().value().item();
      v[j] = saved - eps;
      const double down = loss().value().item();
      v[j] = saved;
      const double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(analytic.at(j), numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << name << " " << j;
      checked += numeric != 0.0;
      // The weights that read the features: GIN/GCN's node_features Linear; D-MPNN's W_i and W_o dense weights.
      const bool reads = name.rfind("node_features", 0) == 0 || name == "W_i.weight" || name == "W_o.weight";
      featureWeights += reads && std::abs(analytic.at(j)) > 1e-9;
    }
  }
  EXPECT_GT(checked, 50);
  EXPECT_GT(featureWeights, 5) << "no gradient reached the weights that read the atom features";
}

TEST_P(NodeFeatureModels, RealMoleculesDoNotDependOnPaddingAndTheFeaturesMatter) {
  auto ds = featuredMolecules(23, 5);
  auto model = makeModel(GetParam(), kWidth, DType::F32, 8);
  model->eval();
  // Each molecule's output alone (with the least padding: a batch of one); then in batches of other shapes with
  // padding rows of value 1.
  const FixedSizeCollator single(FixedSizeOptions::fromDataset(*ds, 2));
  std::vector<Tensor> alone;
  for (size_t i = 0; i < ds->size(); ++i) {
    Graph g = ds->get(i);
    alone.push_back(model->forward(single.collate({&g}, {static_cast<int64_t>(i)})).value());
  }
  FixedSizeOptions pad = FixedSizeOptions::fromDataset(*ds, 6), plan{101, 191, 13};
  int64_t compared = 0;
  for (FixedSizeOptions* o : {&pad, &plan}) {
    o->nodePadValue = 1;  // node_features pads with 0 whatever this is (FieldPad::Zero)
    o->edgePadValue = 1;
    for (PackingStrategy s : {PackingStrategy::PadToMax, PackingStrategy::PlannedPack}) {
      if (o == &plan && s == PackingStrategy::PadToMax) continue;
      for (const Batch& b : test::batchesOf(ds, *o, s, 11)) {
        for (int64_t i = b.numRealNodes * kWidth; i < b.nodeFeatures.numel(); ++i)
          ASSERT_EQ(b.nodeFeatures.at(i), 0.0) << "padding row";
        Tensor y = model->forward(b).value();
        compared += b.numRealGraphs;
        for (int64_t k = 0; k < b.numRealGraphs; ++k)
          for (int64_t t = 0; t < 2; ++t)
            EXPECT_EQ(y.at(k * 2 + t), alone[static_cast<size_t>(b.graphIndex[static_cast<size_t>(k)])].at(t))
                << GetParam() << " molecule " << b.graphIndex[static_cast<size_t>(k)];
      }
    }
  }
  EXPECT_EQ(compared, 3 * 23);  // pad (PadToMax, PlannedPack) and plan (PlannedPack): every molecule each time
  // Other features, other outputs.
  Graph g = ds->get(0);
  Tensor before = model->forward(single.collate({&g}, {0})).value();
  g.nodeFeatures.data<float>()[0] += 1.0f;
  Tensor after = model->forward(single.collate({&g}, {0})).value();
  EXPECT_NE(before.at(0), after.at(0));
  // A batch without the field is refused, naming it.
  g.nodeFeatures = Tensor();
  try {
    model->forward(single.collate({&g}, {0}));
    FAIL() << "a batch without node_features was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("node_features"), std::string::npos) << e.what();
  }
}

// Without node features a model is the one it always was: the parameters it had, in their order, drawn in the same
// order (the new ones come after the atom encoder: GIN's and GCN's head and encoder keep their initial values).
TEST_P(NodeFeatureModels, WithoutThemTheModelIsUnchanged) {
  const bool dmpnn = GetParam() == "dmpnn";
  auto plain = makeModel(GetParam(), 0, DType::F32, 3);
  auto featured = makeModel(GetParam(), kWidth, DType::F32, 3);
  auto a = plain->namedParameters(), b = featured->namedParameters();
  ASSERT_EQ(b.size(), a.size() + (dmpnn ? 1 : 2));  // dmpnn: W_i gains a dense weight; gin, gcn: a Linear
  for (auto& [name, p] : a) {
    EXPECT_EQ(name.find("node_features"), std::string::npos) << name;
    const Variable* q = nullptr;
    for (auto& [other, v] : b)
      if (other == name) q = &v;
    ASSERT_NE(q, nullptr) << name;
    if (name != "W_o.weight") {
      EXPECT_EQ(q->shape(), p.shape()) << name;
    }
    if (!dmpnn && (name.rfind("atom_encoder", 0) == 0 || name.rfind("head", 0) == 0)) {
      EXPECT_TRUE(p.value().bitEqual(q->value())) << name;
    }
  }
}

// A single-atom molecule on its own, concatenated without padding, is a batch with no edges at all: the
// models run on it (the bond encoder's index is [0, 3]), give the output the padded batch gives, and train.
TEST_P(NodeFeatureModels, ASingleAtomMoleculeWithoutPaddingGivesThePaddedOutput) {
  auto ds = featuredMolecules(1, 5);
  Graph g = ds->get(0);
  g.numNodes = 1;
  g.x = Tensor::fromVector<int64_t>({5, 0, 0, 5, 4, 0, 2, 0, 0}, {1, 9});  // OGB's smiles2graph("C")
  g.nodeFeatures = Tensor::fromVector<float>({0.5f, -1.0f, 2.0f}, {1, kWidth});
  g.edgeIndex = Tensor::empty({2, 0}, DType::I64);
  g.edgeAttr = Tensor::empty({0, 3}, DType::I64);
  auto model = makeModel(GetParam(), kWidth, DType::F32, 8);
  model->eval();
  Batch bare = FixedSizeCollator::concatenate({&g}, {0});
  ASSERT_EQ(bare.numEdges, 0);
  Tensor y = model->forward(bare).value();
  FixedSizeOptions o{4, 6, 2};
  Tensor padded = model->forward(FixedSizeCollator(o).collate({&g}, {0})).value();
  ASSERT_EQ(y.numel(), 2);
  for (int64_t t = 0; t < 2; ++t) {
    EXPECT_TRUE(std::isfinite(y.at(t))) << GetParam();
    EXPECT_EQ(y.at(t), padded.at(t)) << GetParam() << " task " << t;
  }
  model->train();
  Variable loss = sum(model->forward(bare));
  loss.backward();
  for (auto& [name, p] : model->namedParameters()) ASSERT_TRUE(p.grad().defined() || !p.requiresGrad()) << name;
}

INSTANTIATE_TEST_SUITE_P(Models, NodeFeatureModels, ::testing::Values("gin", "gcn", "dmpnn"));

TEST(NodeFeatures, SourcesAreTheEdgesFirstRow) {
  auto ds = featuredMolecules(3, 2);
  Graph g = ds->get(1);
  Batch b = FixedSizeCollator::concatenate({&g}, {1});
  Tensor src = nodeFeaturesOfSources(b, kWidth, DType::F64, "test").value();
  ASSERT_EQ(src.shape(), (Shape{b.numEdges, kWidth}));
  for (int64_t e = 0; e < b.numEdges; ++e)
    for (int64_t c = 0; c < kWidth; ++c)
      EXPECT_EQ(src.at(e * kWidth + c), b.nodeFeatures.at(b.edgeIndex.at(e) * kWidth + c));
  EXPECT_THROW(nodeFeaturesInput(b, kWidth + 1, DType::F32, "test"), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
