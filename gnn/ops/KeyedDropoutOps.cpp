// keyedDropout (gnn/ops/KeyedDropout.h): the mask of element (r, c) is hashed from (key, row key, c) with
// SplitMix64's finaliser (Steele, Lea & Flood 2014), four 16-bit draws per 64-bit value as Generator's
// dropout draws.
#include "gnn/ops/KeyedDropout.h"

#include <type_traits>

#include "gnn/autograd/OpInfo.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/system/Check.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/Random.h"

namespace gnn {

namespace {
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
}  // namespace

uint64_t keyedDropoutStream(uint64_t seed, uint64_t sample, uint64_t site) {
  uint64_t z = Generator::mix64(seed * kGolden + 0x6a09e667f3bcc909ULL);
  z = Generator::mix64(z ^ ((sample + 1) * kGolden));
  return Generator::mix64(z ^ ((site + 1) * 0xbb67ae8584caa73bULL));
}

uint64_t keyedDropoutRow(uint64_t groupKey, uint64_t indexInGroup) {
  return Generator::mix64(Generator::mix64(groupKey + kGolden) ^ ((indexInGroup + 1) * 0x3c6ef372fe94f82bULL));
}

Tensor keyedDropoutMask(const Shape& shape, DType dtype, double p, const std::vector<uint64_t>& rowKeys, uint64_t key) {
  GNN_CHECK_ARG(p >= 0 && p < 1, "keyedDropout: p must be in [0, 1), got ", p);
  GNN_CHECK_ARG(!shape.empty(), "keyedDropout: expected rows along dimension 0, got a scalar");
  Tensor M = Tensor::empty(shape, dtype);
  const int64_t rows = shape[0];
  GNN_CHECK_ARG(static_cast<int64_t>(rowKeys.size()) == rows, "keyedDropout: ", rowKeys.size(),
                " row keys for a tensor of ", rows, " rows");
  const int64_t cols = M.cols();
  const uint32_t threshold = Generator::dropoutThreshold(p);
  dispatchFloat(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T keep = static_cast<T>(1 / (1 - p));
    T* m = M.data<T>();
    // Each element's value is a function of (key, its row's key, its column) alone: any chunking gives the same.
    parallelFor(rows, grainFor(cols), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      for (int64_t r = b; r < e; ++r) {
        const uint64_t rowSeed = Generator::mix64(key ^ Generator::mix64(rowKeys[static_cast<size_t>(r)] + kGolden));
        T* mr = m + r * cols;
        for (int64_t c = 0; c < cols; c += 4) {
          const uint64_t bits = Generator::mix64(rowSeed + static_cast<uint64_t>(c / 4 + 1) * kGolden);
          for (int64_t j = 0; j < 4 && c + j < cols; ++j)
            mr[c + j] = static_cast<T>(static_cast<uint16_t>(bits >> (16 * j)) >= threshold) * keep;
        }
      }
    });
  });
  return M;
}

Variable keyedDropout(const Variable& a, double p, const std::vector<uint64_t>& rowKeys, uint64_t key) {
  GNN_CHECK_ARG(p >= 0 && p < 1, "keyedDropout: p must be in [0, 1), got ", p);
  const Tensor& X = a.value();
  GNN_CHECK_ARG(X.isFloating(), "keyedDropout: expected a float tensor, got ", dtypeName(X.dtype()));
  GNN_CHECK_ARG(X.rank() >= 1 && static_cast<int64_t>(rowKeys.size()) == X.dim(0), "keyedDropout: ", rowKeys.size(),
                " row keys for a tensor of shape ", shapeString(X.shape()));
  if (p == 0) return a;
  Tensor M = keyedDropoutMask(X.shape(), X.dtype(), p, rowKeys, key);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    ops::multiplyInto<T>(Y, X, M);
    const int64_t bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"keyedDropout", X.numel(), 2 * bytes, bytes, X.numel()};
    return Variable::record(info, Y, {a}, {M}, [](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
      Tensor G = Tensor::empty(gy.shape(), gy.dtype());
      ops::multiplyInto<T>(G, gy, saved[0]);
      in[0].addGrad(G);
    });
  });
}

}  // namespace gnn
