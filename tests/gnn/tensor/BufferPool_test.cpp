// BufferPool: a step with the same shapes as the previous one takes every buffer from the pool; sizes close
// to each other share buffers.
#include "gnn/tensor/BufferPool.h"

#include <gtest/gtest.h>

#include "gnn/nn/Init.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"

namespace gnn {
namespace {

TEST(BufferPool, RepeatedFixedShapeStepsAllocateNothingNew) {
  Generator gen(1);
  GCNConv conv(8, 4, gen);
  Adam opt({{conv.parameters(), 0.0}}, 0.01);
  Tensor x = init::uniform({50, 8}, -1, 1, gen);
  Tensor ei = Tensor::fromVector<int64_t>({0, 1, 2, 3, 4, 1, 2, 3, 4, 0}, {2, 5});
  Tensor labels = Tensor::fromVector<int64_t>(std::vector<int64_t>(50, 1));
  auto step = [&] {
    Variable loss = crossEntropy(relu(conv.forward(Variable(x), ei)), labels);
    opt.zeroGrad();
    loss.backward();
    opt.step();
  };
  step();
  step();  // optimizer state now exists
  uint64_t misses = BufferPool::misses(), hits = BufferPool::hits();
  step();
  EXPECT_EQ(BufferPool::misses(), misses) << "a same-shape step allocated new buffers";
  EXPECT_GT(BufferPool::hits(), hits);
}

// SchNet's pairs within the cutoff differ from batch to batch: tensors a few percent apart in size share a
// buffer (a size class), where exact sizes missed the pool at every step.
TEST(BufferPool, SizesAFewPercentApartShareABuffer) {
  BufferPool::clear();
  { Tensor a({100000}); }
  uint64_t misses = BufferPool::misses();
  { Tensor b({97000}); }
  { Tensor c({100000}); }
  EXPECT_EQ(BufferPool::misses(), misses);
  { Tensor twice({200000}); }  // another class
  EXPECT_EQ(BufferPool::misses(), misses + 1);
}

TEST(BufferPool, CapacityBoundsWhatIsHeld) {
  BufferPool::clear();
  BufferPool::setCapacity(1 << 20);
  { Tensor big({1 << 19}); }  // 2 MiB: over the cap, returned to the system
  EXPECT_EQ(BufferPool::pooledBytes(), 0u);
  { Tensor small({1000}); }
  EXPECT_GT(BufferPool::pooledBytes(), 0u);
  EXPECT_LE(BufferPool::pooledBytes(), size_t{1} << 20);
  BufferPool::setCapacity(size_t{1} << 30);
}

}  // namespace
}  // namespace gnn
