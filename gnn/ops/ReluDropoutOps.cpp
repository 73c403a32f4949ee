// reluDropout: dropout(relu(x)) as one op, for the hidden layers of models that apply both (BasicGNN). The pair
// keeps relu's output and dropout's float mask for the backward, two tensors of x's size; this op keeps one
// byte per element (kept, positive) and gives the same numbers: the forward and backward below are the two
// ops' own arithmetic, step for step (an element's relu, then its product with 0 or 1/(1-p); the gradient
// times that mask value, then times 0 or 1), and the mask is dropout()'s draw from the same stream.
#include <vector>

#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

constexpr uint8_t kKept = 1, kPositive = 2;

// The bits of x's elements: kKept as dropoutMask keeps them (the same draws), kPositive where x > 0 (where
// relu's output is positive, which its derivative reads).
template <class T>
void reluDropoutBits(const T* x, uint8_t* bits, int64_t n, double p, Generator& gen) {
  const uint64_t first = gen.reserve(Generator::dropoutCounters(static_cast<uint64_t>(n)));
  const uint32_t threshold = Generator::dropoutThreshold(p);
  const Generator& g = gen;
  // Chunks start at multiples of 16 elements (parallelElements), as uniform16 needs multiples of 4.
  parallelElements(n, [&](int64_t b, int64_t e) {
    std::vector<uint16_t> u(static_cast<size_t>(e - b));
    g.uniform16(first, b, e, u.data());
    const uint16_t* __restrict ur = u.data();
    const T* __restrict xr = x + b;
    uint8_t* __restrict br = bits + b;
    for (int64_t i = 0; i < e - b; ++i)
      br[i] = static_cast<uint8_t>((ur[i] >= threshold ? kKept : 0) | (xr[i] > 0 ? kPositive : 0));
  });
}

}  // namespace

Variable reluDropout(const Variable& a, double p, Generator& gen, bool training) {
  GNN_CHECK_ARG(p >= 0 && p < 1, "reluDropout: p must be in [0, 1), got ", p);
  if (!training || p == 0) return relu(a);
  const Tensor& X = a.value();
  GNN_CHECK_ARG(X.isFloating(), "reluDropout: expected a float tensor, got ", dtypeName(X.dtype()));
  const int64_t n = X.numel();
  Tensor bits = Tensor::empty(X.shape(), DType::U8);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    reluDropoutBits(X.data<T>(), bits.data<uint8_t>(), n, p, gen);
    const T keep = static_cast<T>(1 / (1 - p));
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    const T* __restrict x = X.data<T>();
    const uint8_t* __restrict m = bits.data<uint8_t>();
    T* __restrict y = Y.data<T>();
    // relu's value, then times dropout's mask value (0 or keep, as dropoutMask writes it).
    parallelElements(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = (x[i] > 0 ? x[i] : T(0)) * (static_cast<T>(m[i] & kKept) * keep);
    });
    const int64_t bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"reluDropout", 2 * n, bytes, bytes + n, 2 * n};
    return Variable::record(info, Y, {a}, {bits}, [keep](const Tensor& gy, std::vector<GradInput>& in,
                                                         const std::vector<Tensor>& saved) {
      const int64_t count = gy.numel();
      Tensor G = Tensor::empty(gy.shape(), gy.dtype());
      const T* __restrict g = gy.data<T>();
      const uint8_t* __restrict mb = saved[0].data<uint8_t>();
      T* __restrict o = G.data<T>();
      // dropout's backward (times the mask value), then relu's (times its derivative, 1 or 0).
      parallelElements(count, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          o[i] = (g[i] * (static_cast<T>(mb[i] & kKept) * keep)) * ((mb[i] & kPositive) ? T(1) : T(0));
      });
      in[0].addGrad(G);
    });
  });
}

Variable reluDropout(const Variable& a, double p, bool training) {
  GNN_CHECK_ARG(p >= 0 && p < 1, "reluDropout: p must be in [0, 1), got ", p);
  if (!training || p == 0) return relu(a);
  // One random op, as dropout: the stream comes from the context's key and this op's index in the step.
  Generator gen = ExecutionContext::current().nextRandomStream();
  return reluDropout(a, p, gen, training);
}

}  // namespace gnn
