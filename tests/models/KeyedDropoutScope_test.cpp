// KeyedDropoutScope (models/KeyedDropoutScope.h): GIN, GCN and D-MPNN with dropout, in eval mode inside the
// scope, give each molecule the same output bits in every batch it can sit in (other shapes, packings, orders,
// neighbours and padding), a different output per sample, and their plain eval output outside the scope.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>

#include "Molecules.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "models/Dmpnn.h"
#include "models/KeyedDropoutScope.h"
#include "models/OgbMolGCN.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

using Outputs = std::map<int64_t, std::vector<float>>;  // dataset position -> output row

struct ModelCase {
  std::string name;
  std::function<std::unique_ptr<BlockModel>()> make;
  uint64_t sites;  // dropouts per forward pass
};

std::vector<ModelCase> cases() {
  GraphModelOptions g;
  g.layers = 3;
  g.hidden = 16;
  g.tasks = 2;
  g.dropout = 0.3;
  DmpnnOptions d;
  d.hidden = 16;
  d.ffnHidden = 12;
  d.depth = 3;
  d.tasks = 2;
  d.ffnLayers = 2;
  d.dropout = 0.3;
  return {{"GIN", [g] { Generator gen(1); return std::unique_ptr<BlockModel>(new OgbMolGIN(g, gen)); }, 3},
          {"GCN", [g] { Generator gen(2); return std::unique_ptr<BlockModel>(new OgbMolGCN(g, gen)); }, 3},
          // depth - 1 bond updates, the atoms, the FFN's hidden layers
          {"Dmpnn", [d] { Generator gen(3); return std::unique_ptr<BlockModel>(new Dmpnn(d, gen)); }, 2 + 1 + 2}};
}

// Molecule i's key: any function of the molecule, not of the batch.
uint64_t keyOf(int64_t position) { return 0x1234567ULL * static_cast<uint64_t>(position + 1); }

// Every molecule's output under sample `sample` (scope == false: no scope, the plain eval pass).
Outputs run(BlockModel& model, const std::vector<Batch>& batches, uint64_t sample, bool scope, uint64_t sites) {
  NoGradGuard noGrad;
  Outputs out;
  for (const Batch& b : batches) {
    std::vector<uint64_t> keys;
    for (int64_t g = 0; g < b.numRealGraphs; ++g) keys.push_back(keyOf(b.graphIndex[static_cast<size_t>(g)]));
    Tensor y;
    if (scope) {
      KeyedDropoutScope mc(b, keys, 9, sample);
      y = model.forward(b).value();
      EXPECT_EQ(mc.sites(), sites);
    } else {
      y = model.forward(b).value();
    }
    for (int64_t g = 0; g < b.numRealGraphs; ++g) {
      const float* row = y.data<float>() + g * y.cols();
      out[b.graphIndex[static_cast<size_t>(g)]] = std::vector<float>(row, row + y.cols());
    }
  }
  return out;
}

TEST(KeyedDropoutScope, MoleculeOutputsDoNotDependOnTheirBatch) {
  auto ds = test::molecules(40, 21);
  const FixedSizeOptions pad = FixedSizeOptions::fromDataset(*ds, 5);
  FixedSizeOptions padExtra = pad;
  padExtra.numNodes += 29;
  padExtra.numEdges += 41;
  padExtra.numGraphs += 3;
  struct Layout {
    FixedSizeOptions fixed;
    PackingStrategy strategy;
    uint64_t seed;  // the loader's shuffle
  };
  const std::vector<Layout> layouts = {{pad, PackingStrategy::PadToMax, 3},
                                       {padExtra, PackingStrategy::PadToMax, 4},
                                       {FixedSizeOptions{64, 128, 8}, PackingStrategy::StreamPack, 5},
                                       {FixedSizeOptions{101, 190, 13}, PackingStrategy::PlannedPack, 6}};
  for (const ModelCase& c : cases()) {
    std::unique_ptr<BlockModel> model = c.make();
    model->eval();
    const std::vector<Batch> first = test::batchesOf(ds, layouts[0].fixed, layouts[0].strategy, layouts[0].seed);
    const Outputs plain = run(*model, first, 0, false, 0);
    const Outputs s0 = run(*model, first, 0, true, c.sites), s1 = run(*model, first, 1, true, c.sites);
    ASSERT_EQ(s0.size(), ds->size()) << c.name;
    int64_t differs = 0, fromPlain = 0;
    for (const auto& [i, row] : s0) {
      differs += row != s1.at(i);
      fromPlain += row != plain.at(i);
    }
    EXPECT_GT(differs, 35) << c.name << ": samples 0 and 1 should differ for nearly every molecule";
    EXPECT_GT(fromPlain, 35) << c.name << ": a sample should differ from the pass without dropout";
    // After the scope: the plain eval pass again, bit for bit.
    EXPECT_EQ(run(*model, first, 0, false, 0), plain) << c.name;
    for (size_t l = 1; l < layouts.size(); ++l) {
      const std::vector<Batch> other = test::batchesOf(ds, layouts[l].fixed, layouts[l].strategy, layouts[l].seed);
      const Outputs o = run(*model, other, 0, true, c.sites);
      ASSERT_EQ(o.size(), s0.size()) << c.name << " layout " << l;
      for (const auto& [i, row] : s0)
        EXPECT_EQ(std::memcmp(row.data(), o.at(i).data(), row.size() * sizeof(float)), 0)
            << c.name << " layout " << l << ": molecule " << i << " " << row[0] << " vs " << o.at(i)[0];
    }
  }
}

TEST(KeyedDropoutScope, TrainingOutsideTheScopeKeepsItsDropout) {
  // layerDropout outside a scope is dropout(): the context's stream, the same masks as before keyed dropout.
  Tensor x = Tensor::full({6, 8}, 1.0);
  ExecutionContext::current().setRandomKey({5, 1, 0});
  Tensor a = layerDropout(Variable(x), 0.5, true, RowLevel::Node).value();
  ExecutionContext::current().setRandomKey({5, 1, 0});
  Tensor b = dropout(Variable(x), 0.5, true).value();
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
  EXPECT_EQ(layerDropout(Variable(x), 0.5, false, RowLevel::Node).value().raw(), x.raw());
}

TEST(KeyedDropoutScope, RefusesKeysThatDoNotMatchTheBatch) {
  auto ds = test::molecules(5, 2);
  const std::vector<Batch> batches = test::batchesOf(ds, FixedSizeOptions::fromDataset(*ds, 5), PackingStrategy::PadToMax);
  ASSERT_FALSE(batches.empty());
  EXPECT_THROW(KeyedDropoutScope(batches[0], {1, 2}, 0, 0), std::invalid_argument);
  EXPECT_EQ(KeyedDropoutScope::current(), nullptr);
}

}  // namespace
}  // namespace gnn
