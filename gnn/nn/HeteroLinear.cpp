#include "gnn/nn/HeteroLinear.h"

#include <string>

#include "gnn/nn/PyGArgs.h"
#include "gnn/ops/Ops.h"

namespace gnn {

HeteroLinear::HeteroLinear(int64_t inChannels, int64_t outChannels, int64_t numTypes, Generator& gen, bool isSorted,
                           bool bias, DType dtype)
    : in_(inChannels), out_(outChannels), types_(numTypes), isSorted_(isSorted), bias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0 && types_ > 0, "HeteroLinear: in_channels, out_channels and num_types must be ",
                "positive, got ", in_, ", ", out_, ", ", types_);
  for (int64_t t = 0; t < types_; ++t) {
    lins_.push_back(std::make_unique<Linear>(in_, out_, gen, bias_, dtype_));
    registerModule("lins." + std::to_string(t), *lins_.back());
  }
}

std::unique_ptr<HeteroLinear> HeteroLinear::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "HeteroLinear", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"num_types", nullptr},
                                         {"is_sorted", false}, {"bias", true}});
  for (const char* key : {"in_channels", "out_channels", "num_types"}) {
    const nlohmann::json& v = a.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 1)
      throw a.invalidValue(key, v, "only a positive int is supported (not -1, lazy)");
  }
  return std::make_unique<HeteroLinear>(a.get<int64_t>("in_channels"), a.get<int64_t>("out_channels"),
                                        a.get<int64_t>("num_types"), gen, a.get<bool>("is_sorted"),
                                        a.get<bool>("bias"), dtype);
}

std::unique_ptr<Module> HeteroLinear::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<HeteroLinear>(in_, out_, types_, unused, isSorted_, bias_, dtype_));
}

Variable HeteroLinear::forward(const Variable& x, const Tensor& typeVec) const {
  GNN_CHECK_ARG(x.defined() && x.value().rank() == 2 && x.dim(1) == in_, "HeteroLinear: input has shape ",
                x.defined() ? shapeString(x.shape()) : std::string("none"), ", expected [N, ", in_, "]");
  const int64_t n = x.dim(0);
  GNN_CHECK_ARG(typeVec.defined() && typeVec.dtype() == DType::I64 && typeVec.numel() == n,
                "HeteroLinear: type_vec must be int64 [", n, "] (each row's type)");
  const int64_t* t = typeVec.data<int64_t>();
  // The rows grouped by type, stable (a counting sort). Rows found sorted stay in place and each group is a
  // slice (PyG's is_sorted promises that order; checking it costs one pass, so it is not taken on trust).
  std::vector<int64_t> start(static_cast<size_t>(types_) + 1, 0);
  bool sorted = true;
  for (int64_t k = 0; k < n; ++k) {
    GNN_CHECK_ARG(t[k] >= 0 && t[k] < types_, "HeteroLinear: row ", k, " has type ", t[k], ", not in [0, ", types_,
                  ")");
    ++start[static_cast<size_t>(t[k]) + 1];
    sorted = sorted && (k == 0 || t[k - 1] <= t[k]);
  }
  if (types_ == 1 || n == 0) return lins_[0]->forward(x);
  for (int64_t ty = 0; ty < types_; ++ty) start[static_cast<size_t>(ty) + 1] += start[static_cast<size_t>(ty)];
  std::vector<int64_t> order(static_cast<size_t>(n)), next(start.begin(), start.end() - 1);
  for (int64_t k = 0; k < n; ++k) order[static_cast<size_t>(next[static_cast<size_t>(t[k])]++)] = k;
  // Each group through its Linear, the outputs joined in group order (concatRows), and a gather puts them back in
  // x's order.
  std::vector<Variable> parts;
  for (int64_t ty = 0; ty < types_; ++ty) {
    const int64_t b = start[static_cast<size_t>(ty)], e = start[static_cast<size_t>(ty) + 1];
    if (b == e) continue;  // no rows: that Linear is not read (PyG's gives it no gradient either)
    const Variable rows =
        sorted ? sliceRows(x, b, e)
               : gatherRows(x, Tensor::fromVector(std::vector<int64_t>(order.begin() + b, order.begin() + e)));
    parts.push_back(lins_[static_cast<size_t>(ty)]->forward(rows));
  }
  const Variable grouped = concatRows(parts);
  if (sorted) return grouped;
  std::vector<int64_t> where(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) where[static_cast<size_t>(order[static_cast<size_t>(k)])] = k;
  return gatherRows(grouped, Tensor::fromVector(where));
}

}  // namespace gnn
