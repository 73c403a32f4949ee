// reluDropout: the same bits as dropout(relu(x)) (values, gradients, the random stream after it), and relu in
// evaluation. Its gradient check is the op table's "reluDropout" case.
#include <cstring>

#include "GradCheck.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

void expectSameBits(const Tensor& a, const Tensor& b, const char* what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0) << what;
}

// x with exact zeros, negative zeros and values of both signs; the gradient seed with both signs too.
Tensor inputs(DType dtype, uint64_t seed) {
  Tensor x = testing::randomTensor({700, 300}, seed).to(dtype);
  dispatchFloat(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    for (int64_t i = 0; i < x.numel(); i += 7) x.data<T>()[i] = (i % 2) ? T(0) : -T(0);
  });
  return x;
}

void expectSameAsPair(DType dtype, int threads) {
  setNumThreads(threads);
  const Tensor x = inputs(dtype, 1), seed = testing::randomTensor({700, 300}, 2).to(dtype);
  ExecutionContext& ctx = ExecutionContext::current();
  ctx.setRandomKey({11, 4, 2});
  Variable a(x.clone(), true);
  Variable pair = dropout(relu(a), 0.5, true);
  const uint64_t drawn = ctx.randomOps();
  pair.backward(seed);
  ctx.setRandomKey({11, 4, 2});
  Variable b(x.clone(), true);
  Variable fused = reluDropout(b, 0.5, true);
  EXPECT_EQ(ctx.randomOps(), drawn) << "one random op, as dropout";
  fused.backward(seed);
  expectSameBits(fused.value(), pair.value(), "value");
  expectSameBits(b.grad(), a.grad(), "gradient");
  setNumThreads(0);
}

TEST(ReluDropout, SameBitsAsReluThenDropout) {
  for (DType dtype : {DType::F32, DType::F64})
    for (int threads : {1, 2}) expectSameAsPair(dtype, threads);
}

TEST(ReluDropout, ReluInEvaluation) {
  const Tensor x = inputs(DType::F32, 3);
  expectSameBits(reluDropout(Variable(x), 0.5, false).value(), relu(Variable(x)).value(), "training off");
  expectSameBits(reluDropout(Variable(x), 0.0, true).value(), relu(Variable(x)).value(), "p = 0");
}

}  // namespace
}  // namespace gnn
