#include "gnn/nn/conv/RGATConv.h"

#include <initializer_list>
#include <string>
#include <tuple>
#include <vector>

#include "gnn/nn/Init.h"
#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvArgs.h"
#include "gnn/ops/IndexPlan.h"

namespace gnn {

namespace {
// PyG's glorot (torch_geometric/nn/inits.py): U(-a, a), a = sqrt(6 / (size(-2) + size(-1))) for any rank.
Tensor rgatGlorot(const Shape& shape, Generator& gen, DType dtype) {
  return init::glorotUniform(shape, shape[shape.size() - 2], shape.back(), gen, dtype);
}

Tensor rgatIndex(const std::vector<int64_t>& v) {
  return v.empty() ? Tensor::zeros({0}, DType::I64) : Tensor::fromVector(v);
}

bool rgatOneOf(const std::string& v, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (v == n) return true;
  return false;
}

// 1 where alpha > 0, else 0: f-additive's alpha + 1 on the positive entries (torch.where(alpha > 0, alpha + 1,
// alpha)); a constant, so the gradient passes through as PyG's does on both branches.
Tensor rgatPositiveMask(const Tensor& alpha) {
  Tensor m = Tensor::zeros(alpha.shape(), alpha.dtype());
  dispatchFloat(alpha.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* a = alpha.data<T>();
    T* o = m.data<T>();
    for (int64_t i = 0; i < alpha.numel(); ++i) o[i] = a[i] > T(0) ? T(1) : T(0);
  });
  return m;
}
}  // namespace

RGATConv::RGATConv(int64_t inChannels, int64_t outChannels, int64_t numRelations, Generator& gen,
                   RGATConvOptions options)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), relations_(numRelations), opt_(std::move(options)) {
  const RGATConvOptions& o = opt_;
  GNN_CHECK_ARG(in_ > 0 && out_ > 0 && relations_ > 0 && o.heads > 0 && o.dim > 0 && o.edgeDim >= 0,
                "RGATConv: channels, num_relations, heads and dim must be positive (in ", in_, ", out ", out_,
                ", relations ", relations_, ", heads ", o.heads, ", dim ", o.dim, ", edge_dim ", o.edgeDim, ")");
  // PyG's checks and wording (rgat_conv.py, __init__).
  GNN_CHECK_ARG(rgatOneOf(o.attentionMechanism, {"within-relation", "across-relation"}),
                "RGATConv: attention mechanism must either be \"within-relation\" or \"across-relation\", got \"",
                o.attentionMechanism, "\"");
  GNN_CHECK_ARG(rgatOneOf(o.attentionMode, {"additive-self-attention", "multiplicative-self-attention"}),
                "RGATConv: attention mode must either be \"additive-self-attention\" or "
                "\"multiplicative-self-attention\", got \"", o.attentionMode, "\"");
  GNN_CHECK_ARG(o.attentionMode != "additive-self-attention" || o.dim == 1,
                "RGATConv: \"additive-self-attention\" mode cannot be applied when value of d is greater than 1. Use "
                "\"multiplicative-self-attention\" instead (dim ", o.dim, ")");
  GNN_CHECK_ARG(o.mod.empty() || rgatOneOf(o.mod, {"additive", "scaled", "f-additive", "f-scaled"}),
                "RGATConv: mod must be None, \"additive\", \"scaled\", \"f-additive\" or \"f-scaled\", got \"", o.mod,
                "\"");
  GNN_CHECK_ARG(o.dropout >= 0 && o.dropout < 1, "RGATConv: dropout must be in [0, 1), got ", o.dropout);
  GNN_CHECK_ARG(o.dropout == 0 || o.mod.empty(), "RGATConv: mod must be None with dropout value greater than 0 in "
                "order to sample attention coefficients stochastically (mod \"", o.mod, "\")");
  GNN_CHECK_ARG(o.numBases >= 0 && o.numBlocks >= 0, "RGATConv: num_bases and num_blocks must be positive (or None)");
  GNN_CHECK_ARG(o.numBases == 0 || o.numBlocks == 0,
                "RGATConv: can not apply both basis-decomposition and block-diagonal-decomposition at the same time");
  const int64_t H = o.heads, D = o.dim, C = out_, HC = H * C;
  GNN_CHECK_ARG(o.numBlocks == 0 || (in_ % o.numBlocks == 0 && HC % o.numBlocks == 0),
                "RGATConv: both 'in_channels' (", in_, ") and 'heads * out_channels' (", HC,
                ") must be multiple of 'num_blocks' (", o.numBlocks, ")");
  // PyG's order of parameters (named_parameters: its own, then lin_edge's).
  q_ = &registerParameter("q", Tensor({HC, H * D}, o.dtype));
  k_ = &registerParameter("k", Tensor({HC, H * D}, o.dtype));
  if (o.bias) bias_ = &registerParameter("bias", Tensor({(o.concat ? H : 1) * D * C}, o.dtype));
  if (o.edgeDim > 0) {
    linEdge_ = std::make_unique<Linear>(o.edgeDim, HC, gen, false, o.dtype);
    registerModule("lin_edge", *linEdge_);
    e_ = &registerParameter("e", Tensor({HC, H * D}, o.dtype));
  }
  if (o.numBases > 0) {
    att_ = &registerParameter("att", Tensor({relations_, o.numBases}, o.dtype));
    basis_ = &registerParameter("basis", Tensor({o.numBases, in_, HC}, o.dtype));
  } else if (o.numBlocks > 0) {
    const int64_t B = o.numBlocks;
    weight_ = &registerParameter("weight", Tensor({relations_, B, in_ / B, HC / B}, o.dtype));
  } else {
    weight_ = &registerParameter("weight", Tensor({relations_, in_, HC}, o.dtype));
  }
  w_ = &registerParameter("w", Tensor({C}, o.dtype));
  l1_ = &registerParameter("l1", Tensor({1, C}, o.dtype));
  b1_ = &registerParameter("b1", Tensor({1, C}, o.dtype));
  l2_ = &registerParameter("l2", Tensor({C, C}, o.dtype));
  b2_ = &registerParameter("b2", Tensor({1, C}, o.dtype));
  resetParameters(gen);
}

std::unique_ptr<RGATConv> RGATConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "RGATConv",
                  {{"in_channels", nullptr}, {"out_channels", nullptr}, {"num_relations", nullptr},
                   {"num_bases", nullptr}, {"num_blocks", nullptr}, {"mod", nullptr},
                   {"attention_mechanism", "across-relation"}, {"attention_mode", "additive-self-attention"},
                   {"heads", 1}, {"dim", 1}, {"concat", true}, {"negative_slope", 0.2}, {"dropout", 0.0},
                   {"edge_dim", nullptr}, {"bias", true}});
  RGATConvOptions o;
  if (a.has("num_bases")) o.numBases = intChannels(a, "num_bases");
  if (a.has("num_blocks")) o.numBlocks = intChannels(a, "num_blocks");
  if (a.has("mod")) o.mod = a.get<std::string>("mod");
  o.attentionMechanism = a.get<std::string>("attention_mechanism");
  o.attentionMode = a.get<std::string>("attention_mode");
  o.heads = intChannels(a, "heads");
  o.dim = intChannels(a, "dim");
  o.concat = a.get<bool>("concat");
  o.negativeSlope = a.get<double>("negative_slope");
  o.dropout = a.get<double>("dropout");
  if (a.has("edge_dim")) o.edgeDim = intChannels(a, "edge_dim");
  o.bias = a.get<bool>("bias");
  o.dtype = dtype;
  return std::make_unique<RGATConv>(intChannels(a, "in_channels"), intChannels(a, "out_channels"),
                                    intChannels(a, "num_relations"), gen, o);
}

void RGATConv::resetParameters(Generator& gen) {
  const DType dt = opt_.dtype;
  if (basis_) {
    basis_->value() = rgatGlorot(basis_->shape(), gen, dt);
    att_->value() = rgatGlorot(att_->shape(), gen, dt);
  } else {
    weight_->value() = rgatGlorot(weight_->shape(), gen, dt);
  }
  q_->value() = rgatGlorot(q_->shape(), gen, dt);
  k_->value() = rgatGlorot(k_->shape(), gen, dt);
  if (bias_) bias_->value() = Tensor::zeros(bias_->shape(), dt);
  w_->value() = Tensor::full(w_->shape(), 1.0, dt);
  l1_->value() = Tensor::full(l1_->shape(), 1.0, dt);
  b1_->value() = Tensor::zeros(b1_->shape(), dt);
  l2_->value() = Tensor::full(l2_->shape(), 1.0 / static_cast<double>(out_), dt);
  b2_->value() = Tensor::zeros(b2_->shape(), dt);
  if (linEdge_) {
    linEdge_->resetGlorot(gen);
    e_->value() = rgatGlorot(e_->shape(), gen, dt);
  }
}

std::unique_ptr<Module> RGATConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<RGATConv>(in_, out_, relations_, unused, opt_));
}

RGATConv::SortedEdges RGATConv::sortedEdges(const Tensor& edgeIndex, const Tensor& edgeType, int64_t n) const {
  GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64,
                "RGATConv: edge_index must be int64 [2, E], got ", shapeString(edgeIndex.shape()));
  const int64_t E = edgeIndex.dim(1), R = relations_;
  GNN_CHECK_ARG(edgeType.defined() && edgeType.dtype() == DType::I64 && edgeType.numel() == E,
                "RGATConv: edge_type must be int64 [", E, "] (each edge's relation), got ",
                edgeType.defined() ? std::string(dtypeName(edgeType.dtype())) + " " + shapeString(edgeType.shape())
                                    : std::string("none"));
  const Tensor srcT = edgeRow(edgeIndex, 0), dstT = edgeRow(edgeIndex, 1);
  const int64_t *src = srcT.data<int64_t>(), *dst = dstT.data<int64_t>(), *t = edgeType.data<int64_t>();
  std::vector<int64_t> key(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(src[e] >= 0 && src[e] < n && dst[e] >= 0 && dst[e] < n, "RGATConv: edge ", e, " (", src[e], " -> ",
                  dst[e], ") points outside the ", n, " nodes");
    GNN_CHECK_ARG(t[e] >= 0 && t[e] < R, "RGATConv: edge ", e, " has type ", t[e], ", not in [0, ", R,
                  ") (num_relations ", R, ")");
    key[static_cast<size_t>(e)] = dst[e] * R + t[e];
  }
  // Grouped by (target, relation): each target's edges are then contiguous too, so one order serves both
  // attention mechanisms' softmax and the sum at the targets. Padding edges (between padding rows, numbered after
  // the real ones) sort after every real edge: the real edges' positions, dropout draws included, do not move.
  SortedEdges s;
  std::tie(s.order, s.pairPtr) = ops::groupedRows("RGATConv", rgatIndex(key), n * R);
  const int64_t* perm = s.order.data<int64_t>();
  std::vector<int64_t> ss(static_cast<size_t>(E)), sd(static_cast<size_t>(E)), st(static_cast<size_t>(E));
  for (int64_t k = 0; k < E; ++k) {
    ss[static_cast<size_t>(k)] = src[perm[k]];
    sd[static_cast<size_t>(k)] = dst[perm[k]];
    st[static_cast<size_t>(k)] = t[perm[k]];
  }
  s.src = rgatIndex(ss);
  s.dst = rgatIndex(sd);
  s.type = rgatIndex(st);
  std::vector<int64_t> targetPtr(static_cast<size_t>(n + 1));
  for (int64_t i = 0; i <= n; ++i) targetPtr[static_cast<size_t>(i)] = s.pairPtr.data<int64_t>()[i * R];
  s.targetPtr = Tensor::fromVector(targetPtr);
  return s;
}

Variable RGATConv::relationProducts(const Variable& x) const {
  const int64_t n = x.dim(0), R = relations_, HC = opt_.heads * out_;
  if (opt_.numBlocks == 0) {
    // Theta_r for every relation ([R, in, HC]; bases: rgat_conv.py's att @ basis.view(num_bases, -1)), laid side by
    // side [in, R HC]: one product gives every node's rows of every relation (PyG multiplies each edge's two rows
    // instead, twice E products where this makes N R).
    const Variable theta = basis_ ? reshape(matmul(*att_, reshape(*basis_, {opt_.numBases, in_ * HC})), {R, in_, HC})
                                  : *weight_;
    return reshape(matmul(x, reshape(permute(theta, {1, 0, 2}), {in_, R * HC})), {n * R, HC});
  }
  // Block-diagonal Theta_r: block b of x's channels times weight[r, b] (PyG's einsum('abcd,acde->ace')), one
  // matmul per block and relation, laid out as the dense case's [N, R HC].
  const int64_t B = opt_.numBlocks, ib = in_ / B;
  const Variable blocks = reshape(*weight_, {R * in_, HC / B});
  std::vector<Variable> parts;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t b = 0; b < B; ++b) {
      const int64_t first = (r * B + b) * ib;
      parts.push_back(matmul(B == 1 ? x : sliceCols(x, b * ib, (b + 1) * ib), sliceRows(blocks, first, first + ib)));
    }
  return reshape(parts.size() == 1 ? parts[0] : concatCols(parts), {n * R, HC});
}

Variable RGATConv::logits(const Variable& gi, const Variable& gj, const Variable& edgeAttrIn,
                          const SortedEdges& s) const {
  const Variable qi = matmul(gi, *q_), kj = matmul(gj, *k_);
  Variable edgeTerm;
  if (edgeAttrIn.defined()) {
    // PyG asserts lin_edge exists when edge_attr is given.
    GNN_CHECK_ARG(linEdge_ != nullptr, "RGATConv: edge_attr given to a layer without edge_dim: set edge_dim = ",
                  "edge_attr.size(-1) (", edgeAttrIn.value().rank() == 1 ? 1 : edgeAttrIn.dim(1), ")");
    const Variable edgeAttr =
        edgeAttrIn.value().rank() == 1 ? reshape(edgeAttrIn, {edgeAttrIn.dim(0), 1}) : edgeAttrIn;
    GNN_CHECK_ARG(edgeAttr.value().rank() == 2 && edgeAttr.dim(0) == s.src.numel() && edgeAttr.dim(1) == opt_.edgeDim,
                  "RGATConv: edge_attr has shape ", shapeString(edgeAttrIn.shape()), ", expected [", s.src.numel(),
                  ", ", opt_.edgeDim, "]");
    // (a_e W_e^T) E = a_e (W_e^T E): the edge features through an [edge_dim, heads * dim] matrix, without the
    // [E, heads * out] projection.
    const Variable m = matmul(transpose(linEdge_->weight(), 0, 1), *e_);
    edgeTerm = matmul(gatherRows(edgeAttr, s.order), m);
  }
  if (opt_.attentionMode == "additive-self-attention") {
    Variable sum = add(qi, kj);
    if (edgeTerm.defined()) sum = add(sum, edgeTerm);
    return leakyRelu(sum, opt_.negativeSlope);
  }
  Variable product = mul(qi, kj);
  return edgeTerm.defined() ? mul(product, edgeTerm) : product;
}

Variable RGATConv::attention(const Variable& logit, const SortedEdges& s) const {
  const bool within = opt_.attentionMechanism == "within-relation";
  const Variable alpha = segmentSoftmax(logit, within ? s.pairPtr : s.targetPtr);
  if (opt_.mod == "f-additive") return add(alpha, Variable(rgatPositiveMask(alpha.value())));
  // PyG drops attention only without a mod (its elif chain); the constructor refuses dropout with one.
  if (opt_.mod.empty()) return dropout(alpha, opt_.dropout, isTraining());
  return alpha;
}

Variable RGATConv::aggregateMessages(const Variable& alpha, const Variable& gj, const SortedEdges& s,
                                     int64_t n) const {
  const int64_t E = s.src.numel(), H = opt_.heads, D = opt_.dim, C = out_;
  // Message [e, h, d, :] = alpha[e, h, d] g_j[e, h, :]: g_j's head rows repeated D times, each scaled by its alpha.
  Variable rows = reshape(gj, {E * H, C});
  if (D > 1) {
    std::vector<int64_t> repeat(static_cast<size_t>(E * H * D));
    for (int64_t k = 0; k < E * H * D; ++k) repeat[static_cast<size_t>(k)] = k / D;
    rows = gatherRows(rows, rgatIndex(repeat));
  }
  Variable messages = mul(rows, reshape(alpha, {E * H * D, 1}));
  if (opt_.mod == "additive") messages = add(messages, mul(rows, *w_));  // + w g_j, as PyG's w * (g_j * 1)
  Variable out = segmentSum(reshape(messages, {E, H * D * C}), s.targetPtr);  // [N, H D C]
  if (opt_.mod != "scaled" && opt_.mod != "f-scaled") return out;
  // Both scale every message into i by a function of i's in-degree (every relation's edges): applied to the sum,
  // once per target, instead of to each message.
  std::vector<double> degree(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    degree[static_cast<size_t>(i)] =
        static_cast<double>(s.targetPtr.data<int64_t>()[i + 1] - s.targetPtr.data<int64_t>()[i]);
  const Variable deg(Tensor::fromVector(degree, {n, 1}).to(opt_.dtype));
  if (opt_.mod == "f-scaled") return mul(out, deg);
  // relu(|N(i)| l1 + b1) l2 + b2 per channel, [N, C], multiplying each head's (and d's) channels.
  const Variable scaleRows = add(matmul(relu(add(matmul(deg, *l1_), *b1_)), *l2_), *b2_);
  std::vector<int64_t> node(static_cast<size_t>(n * H * D));
  for (int64_t k = 0; k < n * H * D; ++k) node[static_cast<size_t>(k)] = k / (H * D);
  const Variable scales = H * D == 1 ? scaleRows : gatherRows(scaleRows, rgatIndex(node));
  return reshape(mul(reshape(out, {n * H * D, C}), scales), {n, H * D * C});
}

Variable RGATConv::finish(const Variable& aggregated, int64_t n) const {
  const int64_t H = opt_.heads, DC = opt_.dim * out_;
  Variable out = opt_.concat || H == 1 ? aggregated : meanAxis(reshape(aggregated, {n, H, DC}), 1);
  return bias_ ? add(out, *bias_) : out;
}

Variable RGATConv::forward(const Variable& x, const Tensor& edgeIndex, const Tensor& edgeType,
                           const Variable& edgeAttr) {
  GNN_CHECK_ARG(x.defined() && (x.dtype() == DType::F32 || x.dtype() == DType::F64), "RGATConv: node features ",
                "must be float [N, ", in_, "]; PyG's featureless form (node ids as x) is not offered");
  checkNodeFeatures("RGATConv", x, in_);
  const int64_t n = x.dim(0), R = relations_, E = edgeIndex.rank() == 2 ? edgeIndex.dim(1) : 0;
  const SortedEdges s = sortedEdges(edgeIndex, edgeType, n);
  // Row i R + r of the products is node i under relation r: each edge reads its target's and its source's row.
  std::vector<int64_t> targetRow(static_cast<size_t>(E)), sourceRow(static_cast<size_t>(E));
  for (int64_t k = 0; k < E; ++k) {
    targetRow[static_cast<size_t>(k)] = s.dst.data<int64_t>()[k] * R + s.type.data<int64_t>()[k];
    sourceRow[static_cast<size_t>(k)] = s.src.data<int64_t>()[k] * R + s.type.data<int64_t>()[k];
  }
  const Variable g = relationProducts(x);
  const Variable gi = gatherRows(g, rgatIndex(targetRow)), gj = gatherRows(g, rgatIndex(sourceRow));
  const Variable alpha = attention(logits(gi, gj, edgeAttr, s), s);
  return finish(aggregateMessages(alpha, gj, s, n), n);
}

}  // namespace gnn
