// SchNet building its radius graph per micro-batch (SchNetOptions::radiusGraphOnDevice) planned on the
// simulated IPU: the plan counts the knnGraph op (its FLOPs in the input block, element-wise), the rest of
// the model is the host radius graph's, and a plan for smaller micro-batches shrinks the [N, N] matrix with
// the square.
#include <gtest/gtest.h>

#include <cmath>

#include "SmallMolecules.h"
#include "data/RadiusGraph.h"
#include "device/Device.h"
#include "device/ModelProfile.h"
#include "device/Plan.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"
#include "loaders/FixedSizeCollator.h"
#include "models/SchNet.h"

namespace gnn {
namespace {

constexpr int64_t kNeighbours = 6;
constexpr double kCutoff = 3.0;

// Carbon chains of random shape, with or without the host's radius graph.
std::vector<Graph> molecules(bool withEdges) {
  Generator gen(9);
  std::vector<Graph> out;
  for (int64_t n : {5, 11, 8, 14}) {
    Graph g;
    g.numNodes = n;
    g.x = Tensor::zeros({n, 9}, DType::I64);
    for (int64_t i = 0; i < n; ++i) g.x.data<int64_t>()[i * 9] = 5;
    g.pos = init::uniform({n, 3}, 0, 4, gen, DType::F32);
    g.edgeIndex = withEdges ? radiusGraph(g.pos, kCutoff, kNeighbours) : Tensor({2, 0}, DType::I64);
    g.y = Tensor::fromVector<float>({1.0f}, {1});
    g.yMask = Tensor::fromVector(std::vector<uint8_t>{1}, {1});
    out.push_back(g);
  }
  return out;
}

// 38 real atoms and 10 padding atoms in 2 padding graphs; the host's batch has as many edges as the device
// builds.
Batch batchOf(bool withEdges) {
  FixedSizeOptions o;
  o.numGraphs = 6;
  o.numNodes = 48;
  o.numEdges = withEdges ? o.numNodes * kNeighbours : o.numGraphs;
  return FixedSizeCollator(o).collate(molecules(withEdges));
}

Plan planOf(bool onDevice) {
  SchNetOptions o;
  o.hidden = 16;
  o.filters = 16;
  o.interactions = 2;
  o.gaussians = 8;
  o.cutoff = kCutoff;
  o.maxNeighbors = kNeighbours;
  o.radiusGraphOnDevice = onDevice;
  Generator gen(3);
  SchNet model(o, gen);
  Adam opt({{model.parameters(), 0.0}}, 1e-3);
  return planProgram(model, test::maskedL1(), &opt, batchOf(!onDevice), IpuOptions{});
}

const OpCost* findOp(const BlockProfile& b, const std::string& name) {
  for (const OpCost& c : b.forward)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(SchNetRadiusGraphPlan, CountsTheNeighbourGraphBuiltOnTheDevice) {
  const Plan host = planOf(false), device = planOf(true);
  ASSERT_NE(host.profile, nullptr);
  ASSERT_NE(device.profile, nullptr);
  const BlockProfile &h = host.profile->blocks[0], &d = device.profile->blocks[0];
  ASSERT_EQ(d.name, "input");
  EXPECT_EQ(findOp(h, "knnGraph"), nullptr);
  const OpCost* knn = findOp(d, "knnGraph");
  ASSERT_NE(knn, nullptr);
  // 48 x 48 pairs, 8 FLOPs each for the distance and ceil(log2(7)) = 3 comparisons for the top 6.
  EXPECT_EQ(knn->flops, 48 * 48 * (8 + 3));
  EXPECT_EQ(knn->cls, OpClass::Elementwise);
  EXPECT_FALSE(knn->floating);
  for (const OpCost& c : d.backward) EXPECT_NE(c.name, "knnGraph") << "no backward";
  // The same neighbours, so the rest of the model is the host's: the input block's FLOPs differ by the op
  // alone.
  EXPECT_EQ(d.forwardFlops - h.forwardFlops, knn->flops);
  for (size_t b = 1; b < host.profile->blocks.size(); ++b)
    EXPECT_EQ(device.profile->blocks[b].forwardFlops, host.profile->blocks[b].forwardFlops) << b;
  EXPECT_GT(device.cost.samplesPerSecond, 0);
  // Micro-batches half the size: a quarter of the matrix.
  const ModelProfile half = device.profile->scaled(0.5);
  EXPECT_EQ(findOp(half.blocks[0], "knnGraph")->flops, 48 * 48 * 11 / 4);
}

}  // namespace
}  // namespace gnn
