#include "gnn/nn/conv/HGTConv.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "gnn/nn/Init.h"
#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

namespace {

const std::set<std::string> kGroups = {"sum", "mean", "min", "max", "cat"};

// The node types' widths from PyG's in_channels: an int for every type of the metadata, or a dict, its types in
// the metadata's order first (JSON objects come here sorted by key; PyG keeps the dict's order, the names match).
std::vector<std::pair<std::string, int64_t>> widthsOf(const PyGArgs& a, const std::vector<std::string>& nodeTypes) {
  const nlohmann::json& in = a.at("in_channels");
  std::vector<std::pair<std::string, int64_t>> widths;
  if (in.is_number_integer()) {
    for (const std::string& t : nodeTypes) widths.emplace_back(t, in.get<int64_t>());
    return widths;
  }
  if (!in.is_object()) throw a.invalidValue("in_channels", in, "an int or a dict node type -> int");
  for (const auto& [type, width] : in.items())
    if (!width.is_number_integer()) throw a.invalidValue("in_channels", in, "a dict of ints");
  for (const std::string& t : nodeTypes)
    if (in.contains(t)) widths.emplace_back(t, in[t].get<int64_t>());
  for (const auto& [type, width] : in.items())
    if (std::find(nodeTypes.begin(), nodeTypes.end(), type) == nodeTypes.end())
      widths.emplace_back(type, width.get<int64_t>());
  return widths;
}

}  // namespace

HGTConv::HGTConv(std::vector<std::pair<std::string, int64_t>> inChannels, int64_t outChannels,
                 std::vector<EdgeType> edgeTypes, Generator& gen, int64_t heads, std::string group, DType dtype)
    : MessagePassing("sum"), in_(std::move(inChannels)), out_(outChannels), heads_(heads),
      relations_(std::move(edgeTypes)), group_(std::move(group)), dtype_(dtype) {
  GNN_CHECK_ARG(!in_.empty(), "HGTConv: no node types");
  GNN_CHECK_ARG(out_ > 0 && heads_ > 0, "HGTConv: out_channels and heads must be positive, got ", out_, " and ",
                heads_);
  // PyG's check and wording (hgt_conv.py, __init__).
  GNN_CHECK_ARG(out_ % heads_ == 0, "HGTConv: 'out_channels' (got ", out_,
                ") must be divisible by the number of heads (got ", heads_, ")");
  GNN_CHECK_ARG(kGroups.count(group_), "HGTConv: group '", group_, "': one of sum, mean, min, max, cat (PyG's None "
                "stacks the relations into [N, R, out], which its a_lin and skip do not handle)");
  for (const auto& [type, width] : in_) {
    GNN_CHECK_ARG(width > 0, "HGTConv: node type '", type, "': in_channels must be positive, got ", width,
                  " (lazy -1 is not offered: give each type's width)");
    GNN_CHECK_ARG(!types_.count(type), "HGTConv: node type '", type, "' given twice");
    types_[type].in = width;
  }
  std::set<std::string> seen;
  for (const EdgeType& r : relations_) {
    for (const std::string& end : {r.src, r.dst})
      GNN_CHECK_ARG(types_.count(end), "HGTConv: relation '", r.str(), "' names node type '", end,
                    "', which has no in_channels");
    GNN_CHECK_ARG(seen.insert(r.str()).second, "HGTConv: relation '", r.str(), "' given twice in the metadata");
  }
  // PyG's parameter order: k_lin, q_lin, v_lin, a_lin (every type each), skip, a_rel, m_rel, p_rel.
  for (const char* kind : {"k_lin", "q_lin", "v_lin", "a_lin"}) {
    for (const auto& [type, width] : in_) {
      TypeParams& p = types_[type];
      const std::string k = kind;
      std::unique_ptr<Linear>& lin = k == "k_lin" ? p.k : k == "q_lin" ? p.q : k == "v_lin" ? p.v : p.a;
      lin = std::make_unique<Linear>(k == "a_lin" ? out_ : width, out_, gen, true, dtype_);
      registerModule(k + "." + type, *lin);
    }
  }
  for (const auto& typeWidth : in_)
    types_[typeWidth.first].skip = &skip_.add(typeWidth.first, Tensor::full({1}, 1.0, dtype_));
  const int64_t D = out_ / heads_;
  relParams_.resize(relations_.size());
  // PyG's glorot over [H, D, D]: U(-a, a), a = sqrt(6 / (D + D)).
  for (size_t r = 0; r < relations_.size(); ++r)
    relParams_[r].aRel = &aRel_.add(relations_[r].str(), init::glorotUniform({heads_, D, D}, D, D, gen, dtype_));
  for (size_t r = 0; r < relations_.size(); ++r)
    relParams_[r].mRel = &mRel_.add(relations_[r].str(), init::glorotUniform({heads_, D, D}, D, D, gen, dtype_));
  for (size_t r = 0; r < relations_.size(); ++r)
    relParams_[r].pRel = &pRel_.add(relations_[r].str(), Tensor::full({heads_}, 1.0, dtype_));
  registerModule("skip", skip_);
  registerModule("a_rel", aRel_);
  registerModule("m_rel", mRel_);
  registerModule("p_rel", pRel_);
}

std::unique_ptr<Module> HGTConv::ParameterDict::clone() const {
  auto copy = std::make_unique<ParameterDict>();
  for (const auto& [key, p] : namedParameters()) copy->add(key, p.value().clone());
  copy->train(isTraining());
  return copy;
}

std::unique_ptr<HGTConv> HGTConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "HGTConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"metadata", nullptr},
                                    {"heads", 1}, {"group", "sum"}});
  const nlohmann::json& meta = a.at("metadata");
  if (!meta.is_array() || meta.size() != 2 || !meta[0].is_array() || !meta[1].is_array())
    throw a.invalidValue("metadata", meta, "[node types, edge types] (HeteroData.metadata())");
  std::vector<std::string> nodeTypes;
  std::vector<EdgeType> edgeTypes;
  try {
    nodeTypes = meta[0].get<std::vector<std::string>>();
    for (const auto& e : meta[1]) {
      const auto t = e.get<std::vector<std::string>>();
      if (t.size() != 3) throw a.invalidValue("metadata", e, "an edge type is [src, rel, dst]");
      edgeTypes.push_back({t[0], t[1], t[2]});
    }
  } catch (const nlohmann::json::exception&) {
    throw a.invalidValue("metadata", meta, "node types as strings, edge types as [src, rel, dst] strings");
  }
  if (!a.at("group").is_string()) throw a.invalidValue("group", a.at("group"), "a string");
  return std::make_unique<HGTConv>(widthsOf(a, nodeTypes), intChannels(a, "out_channels"), edgeTypes, gen,
                                   intChannels(a, "heads"), a.get<std::string>("group"), dtype);
}

std::unique_ptr<Module> HGTConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<HGTConv>(in_, out_, relations_, unused, heads_, group_, dtype_));
}

std::vector<const Tensor*> HGTConv::givenRelations(
    const std::map<std::string, Variable>& xDict, const std::vector<std::pair<EdgeType, Tensor>>& edgeIndexDict) const {
  for (const auto& [type, x] : xDict) {
    auto it = types_.find(type);
    GNN_CHECK_ARG(it != types_.end(), "HGTConv: x_dict has node type '", type, "', which has no in_channels");
    GNN_CHECK_ARG(x.defined() && (x.dtype() == DType::F32 || x.dtype() == DType::F64), "HGTConv: node type '", type,
                  "' needs float features");
    checkNodeFeatures(("HGTConv (node type '" + type + "')").c_str(), x, it->second.in);
  }
  std::vector<const Tensor*> given(relations_.size(), nullptr);
  for (const auto& [type, edgeIndex] : edgeIndexDict) {
    const auto r = std::find(relations_.begin(), relations_.end(), type);
    GNN_CHECK_ARG(r != relations_.end(), "HGTConv: relation '", type.str(), "' is not in the metadata");
    const size_t k = static_cast<size_t>(r - relations_.begin());
    GNN_CHECK_ARG(!given[k], "HGTConv: relation '", type.str(), "' given twice");
    for (const std::string& end : {type.src, type.dst})
      GNN_CHECK_ARG(xDict.count(end), "HGTConv: relation '", type.str(), "' needs node type '", end,
                    "' in x_dict");
    GNN_CHECK_ARG(edgeIndex.defined() && edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 &&
                      edgeIndex.dtype() == DType::I64,
                  "HGTConv: relation '", type.str(), "': edge_index must be int64 [2, E], got ",
                  edgeIndex.defined() ? shapeString(edgeIndex.shape()) : std::string("none"));
    const int64_t ns = xDict.at(type.src).dim(0), nd = xDict.at(type.dst).dim(0), E = edgeIndex.dim(1);
    const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
    for (int64_t e = 0; e < E; ++e) {
      const int64_t s = src.data<int64_t>()[e], d = dst.data<int64_t>()[e];
      GNN_CHECK_ARG(s >= 0 && s < ns && d >= 0 && d < nd, "HGTConv: relation '", type.str(), "': edge ", e, " (",
                    s, " -> ", d, ") points outside the ", ns, " '", type.src, "' nodes or the ", nd, " '", type.dst,
                    "' nodes");
    }
    given[k] = &edgeIndex;
  }
  return given;
}

Variable HGTConv::headBlocks(const Variable& rel, const Variable* scale) const {
  // Head h's [D, D] block at rows and columns [h D, (h + 1) D): the heads' blocks stacked, [H D, D], then per
  // head the rows of the other heads zeroed and the heads' copies put side by side.
  const int64_t H = heads_, D = out_ / heads_;
  Variable rows = reshape(rel, {H * D, D});
  std::vector<int64_t> headOfRow(static_cast<size_t>(H * D));
  for (int64_t i = 0; i < H * D; ++i) headOfRow[static_cast<size_t>(i)] = i / D;
  if (scale) rows = mul(rows, gatherRows(reshape(*scale, {H, 1}), Tensor::fromVector(headOfRow)));
  if (H == 1) return rows;
  std::vector<Variable> columns;
  for (int64_t h = 0; h < H; ++h) {
    std::vector<double> mask(static_cast<size_t>(H * D), 0.0);
    std::fill(mask.begin() + h * D, mask.begin() + (h + 1) * D, 1.0);
    columns.push_back(mul(rows, Variable(Tensor::fromVector(mask, {H * D, 1}).to(rel.dtype()))));
  }
  return concatCols(columns);
}

Variable HGTConv::foldedLinear(Linear& lin, const Variable& map, const Variable& x) {
  const int64_t out = lin.outFeatures();
  const Variable weight = matmul(transpose(map, 0, 1), lin.weight());                 // map^T W: [out, in]
  const Variable bias = reshape(matmul(reshape(*lin.bias(), {1, out}), map), {out});  // b map
  return linear(x, weight, bias);
}

Variable HGTConv::grouped(const std::string& type, const std::vector<Variable>& messages) const {
  const size_t R = messages.size();
  if (R == 1) return messages.front();
  GNN_CHECK_ARG(group_ != "cat", "HGTConv: group 'cat' puts node type '", type, "''s ", R, " relations side by side (",
                static_cast<int64_t>(R) * out_, " columns), which its a_lin (", out_, " inputs) does not take");
  if (group_ == "sum" || group_ == "mean") {
    Variable s = messages.front();
    for (size_t k = 1; k < R; ++k) s = add(s, messages[k]);  // in the metadata's order
    return group_ == "sum" ? s : scale(s, 1.0 / static_cast<double>(R));
  }
  // min / max per element over the relations: [N, R out] as [N R, out], node i's rows i R .. i R + R - 1 reduced
  // (the gradient to the first relation holding the extreme, as torch.max / torch.min along a dimension).
  const int64_t n = messages.front().dim(0), r = static_cast<int64_t>(R);
  const Variable rows = reshape(concatCols(messages), {n * r, out_});
  std::vector<int64_t> node(static_cast<size_t>(n * r));
  for (int64_t i = 0; i < n * r; ++i) node[static_cast<size_t>(i)] = i / r;
  const Tensor index = n > 0 ? Tensor::fromVector(node) : Tensor::zeros({0}, DType::I64);
  return group_ == "max" ? scatterMax(rows, index, n) : scatterMin(rows, index, n);
}

std::map<std::string, Variable> HGTConv::forward(const std::map<std::string, Variable>& xDict,
                                                 const std::vector<std::pair<EdgeType, Tensor>>& edgeIndexDict) {
  const std::vector<const Tensor*> given = givenRelations(xDict, edgeIndexDict);
  const double scale = 1.0 / std::sqrt(static_cast<double>(out_ / heads_));
  std::map<std::string, Variable> queries;
  std::map<std::string, std::vector<Variable>> messages;
  for (size_t r = 0; r < relations_.size(); ++r) {
    if (!given[r]) continue;
    const EdgeType& t = relations_[r];
    TypeParams &src = types_.at(t.src), &dst = types_.at(t.dst);
    const Variable& xs = xDict.at(t.src);
    if (!queries.count(t.dst)) queries[t.dst] = dst.q->forward(xDict.at(t.dst));
    const Variable k = foldedLinear(*src.k, headBlocks(*relParams_[r].aRel, relParams_[r].pRel), xs);
    const Variable v = foldedLinear(*src.v, headBlocks(*relParams_[r].mRel, nullptr), xs);
    messages[t.dst].push_back(dotAttentionMessageSum(queries[t.dst], k, v, Variable(), *given[r], heads_, scale));
  }
  std::map<std::string, Variable> out;
  for (const auto& [type, list] : messages) {
    TypeParams& p = types_.at(type);
    const Variable a = gelu(grouped(type, list));
    if (out_ != p.in) {
      out.emplace(type, p.a->forward(a));
      continue;
    }
    // sigmoid(skip) a_lin(a) + (1 - sigmoid(skip)) x, with sigmoid(skip) folded into a_lin's weight and bias: skip's
    // gradient then reads a (kept for a_lin's anyway), not a_lin's output, which would be an [N_t, out] more to keep.
    const Variable alpha = sigmoid(*p.skip);
    const Variable keep = sub(Variable(Tensor::full({1}, 1.0, alpha.dtype())), alpha);
    const Variable mixed = linear(a, scaleByScalar(p.a->weight(), alpha), scaleByScalar(*p.a->bias(), alpha));
    out.emplace(type, add(mixed, scaleByScalar(xDict.at(type), keep)));
  }
  return out;
}

}  // namespace gnn
