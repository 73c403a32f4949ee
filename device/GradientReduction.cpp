#include "device/GradientReduction.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace gnn {

Tensor sumInto(const Tensor& acc, const Tensor& g) {
  if (!acc.defined()) return g;
  Tensor out = Tensor::empty(acc.shape(), acc.dtype());
  dispatchFloat(acc.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    out.flat<T>() = acc.flat<T>() + g.flat<T>();
  });
  return out;
}

bool allFinite(const Tensor& t) {
  bool ok = true;
  dispatchFloat(t.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    ok = t.flat<T>().allFinite();
  });
  return ok;
}

int64_t countNonFinite(const std::vector<Tensor>& grads) {
  int64_t n = 0;
  for (const Tensor& g : grads)
    if (g.defined() && !allFinite(g)) ++n;
  return n;
}

std::vector<Tensor> reduceGradients(int64_t replicas, int64_t stages, size_t params,
                                    const std::function<Tensor(int64_t replica, int64_t stage, size_t param)>& gradOf) {
  std::vector<Tensor> grads(params);
  for (size_t i = 0; i < params; ++i)
    for (int64_t r = 0; r < replicas; ++r)
      for (int64_t s = 0; s < stages; ++s) {
        Tensor g = gradOf(r, s, i);
        if (g.defined()) grads[i] = sumInto(grads[i], g);
      }
  return grads;
}

void allGatherShards(std::vector<std::vector<Variable>>& replicaParams,
                     const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  const size_t replicas = replicaParams.size();
  int64_t begin = 0;
  for (size_t i = 0; i < replicaParams.front().size(); ++i) {
    const Tensor& first = std::as_const(replicaParams.front()[i]).value();
    const int64_t n = first.numel();
    const size_t bytes = dtypeSize(first.dtype());
    for (size_t r = 0; r < replicas; ++r) {
      const int64_t lo = std::max(begin, ranges[r].first) - begin;
      const int64_t hi = std::min(begin + n, ranges[r].second) - begin;
      if (lo >= hi) continue;
      const char* src = static_cast<const char*>(std::as_const(replicaParams[r][i].value()).raw());
      for (size_t q = 0; q < replicas; ++q)
        if (q != r)
          std::memcpy(static_cast<char*>(replicaParams[q][i].value().raw()) + lo * static_cast<int64_t>(bytes),
                      src + lo * static_cast<int64_t>(bytes), static_cast<size_t>(hi - lo) * bytes);
    }
    begin += n;
  }
}

}  // namespace gnn
