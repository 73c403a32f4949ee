#include "gnn/nn/conv/RGCNConv.h"

#include <string>
#include <vector>

#include "gnn/nn/Init.h"
#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

namespace {
// PyG's glorot (torch_geometric/nn/inits.py): U(-a, a), a = sqrt(6 / (size(-2) + size(-1))) for any rank.
Tensor glorotOf(const Shape& shape, Generator& gen, DType dtype) {
  return init::glorotUniform(shape, shape[shape.size() - 2], shape.back(), gen, dtype);
}
}  // namespace

RGCNConv::RGCNConv(int64_t inChannels, int64_t outChannels, int64_t numRelations, Generator& gen, int64_t numBases,
                   int64_t numBlocks, const nlohmann::json& aggr, bool rootWeight, bool bias, DType dtype)
    : MessagePassing(aggregationFromPyG(aggr, gen, dtype)), in_(inChannels), out_(outChannels),
      relations_(numRelations), bases_(numBases), blocks_(numBlocks), rootWeight_(rootWeight), bias_(bias),
      dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0 && relations_ > 0, "RGCNConv: channel counts and num_relations must be positive, "
                "got ", in_, " -> ", out_, " with ", relations_, " relations");
  GNN_CHECK_ARG(bases_ >= 0 && blocks_ >= 0, "RGCNConv: num_bases and num_blocks must be positive (or None)");
  // PyG's own wording (rgcn_conv.py, __init__).
  GNN_CHECK_ARG(bases_ == 0 || blocks_ == 0,
                "RGCNConv: can not apply both basis-decomposition and block-diagonal-decomposition at the same time");
  GNN_CHECK_ARG(blocks_ == 0 || (in_ % blocks_ == 0 && out_ % blocks_ == 0), "RGCNConv: num_blocks ", blocks_,
                " must divide in_channels ", in_, " and out_channels ", out_);
  // PyG's order of parameters (weight, comp, root, bias) and initialisation (glorot, glorot, glorot, zeros).
  Shape weightShape = {relations_, in_, out_};
  if (bases_ > 0) weightShape = {bases_, in_, out_};
  if (blocks_ > 0) weightShape = {relations_, blocks_, in_ / blocks_, out_ / blocks_};
  weight_ = &registerParameter("weight", glorotOf(weightShape, gen, dtype_));
  if (bases_ > 0) comp_ = &registerParameter("comp", glorotOf({relations_, bases_}, gen, dtype_));
  if (rootWeight_) root_ = &registerParameter("root", glorotOf({in_, out_}, gen, dtype_));
  if (bias_) biasParam_ = &registerParameter("bias", Tensor::zeros({out_}, dtype_));
}

RGCNConv::Options RGCNConv::optionsFromPyG(const nlohmann::json& args, const char* className) {
  const PyGArgs a(args, className, {{"in_channels", nullptr}, {"out_channels", nullptr}, {"num_relations", nullptr},
                                    {"num_bases", nullptr}, {"num_blocks", nullptr}, {"aggr", "mean"},
                                    {"root_weight", true}, {"is_sorted", false}, {"bias", true}});
  Options o;
  if (a.at("in_channels").is_null())
    throw a.invalidValue("in_channels", nullptr, "featureless nodes (PyG's in_channels = the node count, x None) are "
                                                 "not offered: give node features (an Embedding's rows, say)");
  o.in = intChannels(a, "in_channels");
  o.out = intChannels(a, "out_channels");
  o.relations = intChannels(a, "num_relations");
  if (a.has("num_bases")) o.bases = intChannels(a, "num_bases");
  if (a.has("num_blocks")) o.blocks = intChannels(a, "num_blocks");
  o.aggr = aggregationArg(a);
  o.rootWeight = a.get<bool>("root_weight");
  (void)a.get<bool>("is_sorted");  // PyG reads it only on its pyg_lib path; the edges are grouped here anyway
  o.bias = a.get<bool>("bias");
  return o;
}

std::unique_ptr<RGCNConv> RGCNConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const Options o = optionsFromPyG(args, "RGCNConv");
  return std::make_unique<RGCNConv>(o.in, o.out, o.relations, gen, o.bases, o.blocks, o.aggr, o.rootWeight, o.bias,
                                    dtype);
}

std::unique_ptr<Module> RGCNConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<RGCNConv>(in_, out_, relations_, unused, bases_, blocks_, aggregation().spec(),
                                              rootWeight_, bias_, dtype_));
}

Tensor RGCNConv::checkedInputs(const char* layer, const Variable& x, const Tensor& edgeIndex,
                               const Tensor& edgeType) const {
  GNN_CHECK_ARG(!x.defined() || x.dtype() == DType::F32 || x.dtype() == DType::F64, layer,
                ": node features must be float; PyG's featureless form (node ids as x) is not offered");
  checkNodeFeatures(layer, x, in_);
  GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64, layer,
                ": edge_index must be int64 [2, E], got ", shapeString(edgeIndex.shape()));
  const int64_t E = edgeIndex.dim(1), n = x.dim(0);
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  for (int64_t e = 0; e < E; ++e) {
    const int64_t s = src.data<int64_t>()[e], d = dst.data<int64_t>()[e];
    GNN_CHECK_ARG(s >= 0 && s < n && d >= 0 && d < n, layer, ": edge ", e, " (", s, " -> ", d,
                  ") points outside the ", n, " nodes");
  }
  if (!edgeType.defined()) {
    GNN_CHECK_ARG(relations_ == 1, layer, ": ", relations_, " relations need each edge's type (int64 [", E, "])");
    return Tensor::zeros({E}, DType::I64);
  }
  GNN_CHECK_ARG(edgeType.dtype() == DType::I64 && edgeType.numel() == E, layer, ": edge_type must be int64 [", E,
                "], got ", dtypeName(edgeType.dtype()), " ", shapeString(edgeType.shape()));
  const Tensor& t = edgeType;
  for (int64_t e = 0; e < E; ++e)
    GNN_CHECK_ARG(t.data<int64_t>()[e] >= 0 && t.data<int64_t>()[e] < relations_, layer, ": edge ", e, " has type ",
                  t.data<int64_t>()[e], ", not in [0, ", relations_, ")");
  return t;
}

Variable RGCNConv::relationWeights() const {
  if (bases_ == 0) return *weight_;
  // comp [R, B] x weight [B, in out]: rgcn_conv.py's (self.comp @ weight.view(self.num_bases, -1)).
  return reshape(matmul(*comp_, reshape(*weight_, {bases_, in_ * out_})), {relations_, in_, out_});
}

Variable RGCNConv::addRootAndBias(const Variable& out, const Variable& x) const {
  Variable y = out;
  if (root_) y = add(y, matmul(x, *root_));
  if (biasParam_) y = add(y, *biasParam_);
  return y;
}

Variable RGCNConv::blockProduct(const Variable& h) const {
  // H's columns are (relation, block, channel). Per block b, the relations' channels side by side times the
  // relations' blocks stacked, [N, R in/B] x [R in/B, out/B], sums over relations (PyG's einsum('abc,bcd->abd')
  // per relation, with the relations' sum inside the product). One matmul per block, not a batched product: a
  // row's bits must not depend on how many rows there are (padding), which matmul keeps and bmm does not.
  const int64_t n = h.dim(0), B = blocks_, ib = in_ / B, ob = out_ / B, K = relations_ * ib;
  const Variable hb = reshape(permute(reshape(h, {n, relations_, B, ib}), {2, 0, 1, 3}), {B * n, K});
  const Variable wb = reshape(permute(*weight_, {1, 0, 2, 3}), {B * K, ob});
  std::vector<Variable> blocks;
  for (int64_t b = 0; b < B; ++b)
    blocks.push_back(matmul(sliceRows(hb, b * n, (b + 1) * n), sliceRows(wb, b * K, (b + 1) * K)));
  return B == 1 ? blocks[0] : concatCols(blocks);
}

Variable RGCNConv::forward(const Variable& x, const Tensor& edgeIndex, const Tensor& edgeType) {
  const Tensor type = checkedInputs("RGCNConv", x, edgeIndex, edgeType);
  const int64_t n = x.dim(0), E = edgeIndex.dim(1), R = relations_;
  const Tensor srcT = edgeRow(edgeIndex, 0), dstT = edgeRow(edgeIndex, 1);
  const int64_t *src = srcT.data<int64_t>(), *dst = dstT.data<int64_t>(), *t = type.data<int64_t>();
  // Each (target, relation) pair is a row of its own, i R + r: aggregating over those rows gives every node's
  // per-relation aggregates side by side ([N R, in] is [N, R in]), so one product with the relations' weights
  // stacked [R in, out] sums over the relations (rgcn_conv.py loops over the relations, a propagate and a
  // product each).
  std::vector<int64_t> rows(static_cast<size_t>(E)), cols(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) {
    rows[static_cast<size_t>(e)] = dst[e] * R + t[e];
    cols[static_cast<size_t>(e)] = src[e];
  }
  Variable h;
  const std::string aggr = aggregation().name();
  if (isLinearAggregation(aggregation())) {
    // Sum and mean as one sparse product; the mean divides each row by its edges (duplicates count).
    const SparseMatrix a =
        SparseMatrix::fromCoo(n * R, n, rows, cols, std::vector<double>(static_cast<size_t>(E), 1.0), x.dtype());
    h = spmm(aggr == "mean" ? a.rowNormalized() : a, x);
  } else {
    const Tensor rowIndex = E > 0 ? Tensor::fromVector(rows) : Tensor::zeros({0}, DType::I64);
    h = aggregate(gatherRows(x, srcT), rowIndex, n * R);
  }
  GNN_CHECK_ARG(h.dim(1) == in_, "RGCNConv: the aggregation gives ", h.dim(1), " channels per node, the relations' ",
                "weights take ", in_, " (an aggregation that widens its input does not fit)");
  h = reshape(h, {n, R * in_});
  const Variable out = blocks_ > 0 ? blockProduct(h) : matmul(h, reshape(relationWeights(), {R * in_, out_}));
  return addRootAndBias(out, x);
}

}  // namespace gnn
