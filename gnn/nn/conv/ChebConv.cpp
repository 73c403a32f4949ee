#include "gnn/nn/conv/ChebConv.h"

#include <algorithm>
#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

ChebConv::ChebConv(int64_t inChannels, int64_t outChannels, int64_t K, Generator& gen,
                   const std::string& normalization, bool bias, DType dtype)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), k_(K), normalization_(normalization),
      hasBias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0, "ChebConv: channel counts must be positive, got ", in_, " -> ", out_);
  GNN_CHECK_ARG(k_ > 0, "ChebConv: K = ", k_, " must be > 0");
  GNN_CHECK_ARG(normalization_.empty() || normalization_ == "sym" || normalization_ == "rw",
                "ChebConv: normalization '", normalization_, "' is not sym, rw or none");
  for (int64_t k = 0; k < k_; ++k) {
    lins_.push_back(std::make_unique<Linear>(in_, out_, gen, /*bias=*/false, dtype_));
    lins_.back()->weight().value() = init::glorotUniform({out_, in_}, in_, out_, gen, dtype_);
    registerModule("lins." + std::to_string(k), *lins_.back());
  }
  if (hasBias_) bias_ = &registerParameter("bias", Tensor::zeros({out_}, dtype_));
}

std::unique_ptr<ChebConv> ChebConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "ChebConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"K", nullptr},
                                     {"normalization", "sym"}, {"bias", true}});
  const nlohmann::json& norm = a.at("normalization");
  if (!norm.is_null() && !(norm.is_string() && (norm == "sym" || norm == "rw")))
    throw a.invalidValue("normalization", norm, "sym, rw or null");
  return std::make_unique<ChebConv>(intChannels(a, "in_channels"), intChannels(a, "out_channels"),
                                    a.get<int64_t>("K"), gen, norm.is_null() ? "" : norm.get<std::string>(),
                                    a.get<bool>("bias"), dtype);
}

std::unique_ptr<Module> ChebConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<ChebConv>(in_, out_, k_, unused, normalization_, hasBias_, dtype_));
}

SparseMatrix ChebConv::scaledLaplacian(const Tensor& edgeIndex, int64_t n, DType dtype,
                                       const std::vector<double>& lambdaMax, const Tensor& batch) const {
  GNN_CHECK_ARG(lambdaMax.size() <= 1 || batch.defined(), "ChebConv: ", lambdaMax.size(),
                " lambda_max values need the batch vector (each node's graph)");
  const Tensor srcT = edgeRow(edgeIndex, 0), dstT = edgeRow(edgeIndex, 1);
  const int64_t* s = srcT.data<int64_t>();
  const int64_t* d = dstT.data<int64_t>();
  const int64_t E = edgeIndex.dim(1);
  // get_laplacian: self-loops removed, the degree counted at each edge's source.
  std::vector<double> deg(static_cast<size_t>(n), 0.0);
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(s[e] >= 0 && s[e] < n && d[e] >= 0 && d[e] < n, "ChebConv: edge ", e, " (", s[e], " -> ", d[e],
                  ") points outside the ", n, " nodes");
    if (s[e] != d[e]) deg[static_cast<size_t>(s[e])] += 1;
  }
  std::vector<double> scale(static_cast<size_t>(n), 0.0);  // sym: deg^-1/2, rw: deg^-1 (0 for degree 0)
  for (int64_t i = 0; i < n; ++i) {
    const double g = deg[static_cast<size_t>(i)];
    scale[static_cast<size_t>(i)] = g == 0 ? 0.0 : normalization_ == "sym" ? 1.0 / std::sqrt(g) : 1.0 / g;
  }
  std::vector<int64_t> rows, cols;
  std::vector<double> values;
  rows.reserve(static_cast<size_t>(E + n));
  cols.reserve(static_cast<size_t>(E + n));
  values.reserve(static_cast<size_t>(E + n));
  for (int64_t e = 0; e < E; ++e) {
    if (s[e] == d[e]) continue;
    const double w = normalization_ == "sym"  ? -scale[static_cast<size_t>(s[e])] * scale[static_cast<size_t>(d[e])]
                     : normalization_ == "rw" ? -scale[static_cast<size_t>(s[e])]
                                              : -1.0;
    rows.push_back(d[e]);  // the message x_j flows to the target's row
    cols.push_back(s[e]);
    values.push_back(w);
  }
  for (int64_t i = 0; i < n; ++i) {
    rows.push_back(i);
    cols.push_back(i);
    values.push_back(normalization_.empty() ? deg[static_cast<size_t>(i)] : 1.0);
  }
  // lambda_max: given (per graph: the graph of the edge's source), else 2 x the largest entry (loops included).
  double largest = -INFINITY;
  for (double v : values) largest = std::max(largest, v);
  const int64_t* graphOf = batch.defined() ? batch.data<int64_t>() : nullptr;
  for (size_t k = 0; k < values.size(); ++k) {
    double lambda = 2.0 * largest;
    if (lambdaMax.size() == 1) lambda = lambdaMax[0];
    if (lambdaMax.size() > 1) {
      const int64_t g = graphOf[cols[k]];
      GNN_CHECK_ARG(g >= 0 && g < static_cast<int64_t>(lambdaMax.size()), "ChebConv: node ", cols[k], "'s graph ", g,
                    " has no lambda_max (", lambdaMax.size(), " given)");
      lambda = lambdaMax[static_cast<size_t>(g)];
    }
    double v = 2.0 * values[k] / lambda;
    if (std::isinf(v)) v = 0;  // PyG's masked_fill_(== inf, 0)
    values[k] = rows[k] == cols[k] ? v - 1.0 : v;
  }
  return SparseMatrix::fromCoo(n, n, rows, cols, values, dtype);
}

Variable ChebConv::forward(const Variable& x, const Tensor& edgeIndex, const std::vector<double>& lambdaMax,
                           const Tensor& batch) {
  checkNodeFeatures("ChebConv", x, in_);
  const SparseMatrix l = scaledLaplacian(edgeIndex, x.dim(0), x.dtype(), lambdaMax, batch);
  Variable t0 = x;
  Variable out = lins_[0]->forward(t0);
  if (k_ > 1) {
    Variable t1 = spmm(l, x);
    out = add(out, lins_[1]->forward(t1));
    for (int64_t k = 2; k < k_; ++k) {
      Variable t2 = sub(scale(spmm(l, t1), 2.0), t0);
      out = add(out, lins_[static_cast<size_t>(k)]->forward(t2));
      t0 = t1;
      t1 = t2;
    }
  }
  return bias_ ? add(out, *bias_) : out;
}

}  // namespace gnn
