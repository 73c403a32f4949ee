#include "gnn/nn/aggr/DegreeScalerAggregation.h"

#include <cmath>

#include "gnn/nn/aggr/StdAggregation.h"
#include "gnn/ops/Ops.h"
#include "gnn/ops/PnaAggregate.h"

namespace gnn {
namespace {

const char* const kScalers[] = {"identity", "amplification", "attenuation", "linear", "inverse_linear"};

bool knownScaler(const std::string& s) {
  for (const char* k : kScalers)
    if (s == k) return true;
  return false;
}

// Training nodes in the histogram (PyG's N = int(deg.sum())), which must not be 0 (PyG divides by it).
float histogramNodes(const std::vector<int64_t>& deg) {
  float n = 0;
  for (int64_t c : deg) {
    GNN_CHECK_ARG(c >= 0, "DegreeScalerAggregation: negative count ", c, " in the degree histogram");
    n += static_cast<float>(c);
  }
  GNN_CHECK_ARG(n > 0, "DegreeScalerAggregation: the degree histogram `deg` counts no node");
  return n;
}

// Per node (column vector [N, 1]) f(in-degree), in the output's dtype as PyG computes it (degree() in
// out.dtype, then the scaler's elementwise ops).
template <class F>
Tensor perNode(const std::vector<int64_t>& degree, DType dtype, F f) {
  const int64_t N = static_cast<int64_t>(degree.size());
  Tensor t = Tensor::empty({N, 1}, dtype);
  dispatchFloat(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* p = t.data<T>();
    for (int64_t i = 0; i < N; ++i) p[i] = f(static_cast<T>(degree[i]));
  });
  return t;
}

}  // namespace

DegreeScalerAggregation::DegreeScalerAggregation(std::vector<std::string> aggregators,
                                                 std::vector<std::string> scalers, std::vector<int64_t> deg,
                                                 bool trainNorm, DType dtype)
    : aggrNames_(std::move(aggregators)), scalers_(std::move(scalers)), deg_(std::move(deg)),
      trainNorm_(trainNorm), dtype_(dtype) {
  GNN_CHECK_ARG(!aggrNames_.empty() && !scalers_.empty(),
                "DegreeScalerAggregation: needs at least one aggregator and one scaler");
  for (const std::string& a : aggrNames_) (void)aggregationFromName(a);  // PyG's names, or an error listing them
  for (const std::string& s : scalers_)
    GNN_CHECK_ARG(knownScaler(s), "DegreeScalerAggregation: unknown scaler '", s,
                  "' (identity, amplification, attenuation, linear, inverse_linear)");
  // PyG keeps the averages as float32 tensors filled from Python floats (float32 even in a float64 model, whose
  // .double() converts the float32 values).
  Tensor lin = Tensor::fromVector<double>({static_cast<double>(static_cast<float>(averageDegreeLinear(deg_)))});
  Tensor log = Tensor::fromVector<double>({static_cast<double>(static_cast<float>(averageDegreeLog(deg_)))});
  avgLin_ = &registerParameter("avg_deg_lin", lin.to(dtype));
  avgLog_ = &registerParameter("avg_deg_log", log.to(dtype));
  avgLin_->setRequiresGrad(trainNorm);  // buffers unless trained (registerBuffer's flag)
  avgLog_->setRequiresGrad(trainNorm);
}

std::unique_ptr<Module> DegreeScalerAggregation::clone() const {
  return cloneInto(std::make_unique<DegreeScalerAggregation>(aggrNames_, scalers_, deg_, trainNorm_, dtype_));
}

double DegreeScalerAggregation::averageDegreeLinear(const std::vector<int64_t>& deg) {
  const float n = histogramNodes(deg);
  float s = 0;  // (bin_degree * deg).sum() in float32
  for (size_t k = 0; k < deg.size(); ++k) s += static_cast<float>(k) * static_cast<float>(deg[k]);
  return static_cast<double>(s) / static_cast<double>(static_cast<int64_t>(n));
}

double DegreeScalerAggregation::averageDegreeLog(const std::vector<int64_t>& deg) {
  const float n = histogramNodes(deg);
  float s = 0;  // ((bin_degree + 1).log() * deg).sum() in float32
  for (size_t k = 0; k < deg.size(); ++k) s += std::log(static_cast<float>(k + 1)) * static_cast<float>(deg[k]);
  return static_cast<double>(s) / static_cast<double>(static_cast<int64_t>(n));
}

Variable DegreeScalerAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  // The aggregators side by side in one pass over each node's messages (the numbers of aggregationFromName's
  // modules side by side).
  const Variable out = pnaAggregate(Variable(), Variable(), x, Tensor(), index, dimSize, aggrNames_,
                                    StdAggregation::kEps);
  return scale(out, scalerFactors(index, dimSize, out.dtype()));
}

std::vector<Variable> DegreeScalerAggregation::scalerFactors(const Tensor& index, int64_t dimSize,
                                                             DType dt) const {
  GNN_CHECK_ARG(index.dtype() == DType::I64 && index.rank() == 1,
                "DegreeScalerAggregation: index must be int64 [E], got ", dtypeName(index.dtype()), " ",
                shapeString(index.shape()));
  std::vector<int64_t> degree(static_cast<size_t>(dimSize), 0);
  const int64_t* idx = index.data<int64_t>();
  for (int64_t e = 0; e < index.numel(); ++e) {
    GNN_CHECK_ARG(idx[e] >= 0 && idx[e] < dimSize, "DegreeScalerAggregation: index ", idx[e], " at position ", e,
                  " is outside [0, ", dimSize, ")");
    ++degree[idx[e]];
  }
  // Each factor is a constant per node times the average (or its reciprocal), so train_norm's gradient reaches
  // the average; PyG divides where this multiplies by a reciprocal (one rounding apart).
  std::vector<Variable> factors;
  for (const std::string& s : scalers_) {
    Variable factor;
    if (s == "amplification") {
      factor = mul(Variable(perNode(degree, dt, [](auto d) { return std::log(d + 1); })), reciprocal(*avgLog_));
    } else if (s == "attenuation") {
      auto inv = [](auto d) { return 1 / std::log(std::max<decltype(d)>(d, 1) + 1); };
      factor = mul(Variable(perNode(degree, dt, inv)), *avgLog_);
    } else if (s == "linear") {
      factor = mul(Variable(perNode(degree, dt, [](auto d) { return d; })), reciprocal(*avgLin_));
    } else if (s == "inverse_linear") {
      factor = mul(Variable(perNode(degree, dt, [](auto d) { return 1 / std::max<decltype(d)>(d, 1); })), *avgLin_);
    }
    factors.push_back(factor);
  }
  return factors;
}

Variable DegreeScalerAggregation::scale(const Variable& aggregated, const std::vector<Variable>& factors) {
  std::vector<Variable> scaled;
  for (const Variable& f : factors) scaled.push_back(f.defined() ? mul(aggregated, f) : aggregated);
  return scaled.size() == 1 ? scaled[0] : concatCols(scaled);
}

}  // namespace gnn
