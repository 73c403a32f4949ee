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

Tensor RGCNConv::checkedInputs(const char* layer, const Variable& x, const Tensor& edgeIndex, const Tensor& edgeType,
                               int64_t numTargets) const {
  GNN_CHECK_ARG(!x.defined() || x.dtype() == DType::F32 || x.dtype() == DType::F64, layer,
                ": node features must be float; PyG's featureless form (node ids as x) is not offered");
  checkNodeFeatures(layer, x, in_);
  GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64, layer,
                ": edge_index must be int64 [2, E], got ", shapeString(edgeIndex.shape()));
  const int64_t E = edgeIndex.dim(1), n = x.dim(0), m = numTargets < 0 ? n : numTargets;
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  for (int64_t e = 0; e < E; ++e) {
    const int64_t s = src.data<int64_t>()[e], d = dst.data<int64_t>()[e];
    GNN_CHECK_ARG(s >= 0 && s < n && d >= 0 && d < m, layer, ": edge ", e, " (", s, " -> ", d, ") points outside the ",
                  n, " source", m == n ? "" : " or " + std::to_string(m) + " target", " nodes");
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

Variable RGCNConv::relationProduct(const Variable& h, int64_t r, const Variable& weights) const {
  if (blocks_ == 0) return matmul(h, sliceRows(weights, r * in_, (r + 1) * in_));
  // Theta_r block-diagonal: block b of h's channels times weight[r, b] (PyG's einsum('abc,bcd->abd') for one
  // relation), one matmul per block: a row's bits must not depend on how many rows there are (padding), which
  // matmul keeps and a batched product does not.
  const int64_t B = blocks_, ib = in_ / B;
  std::vector<Variable> parts;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t first = (r * B + b) * ib;
    parts.push_back(matmul(B == 1 ? h : sliceCols(h, b * ib, (b + 1) * ib), sliceRows(weights, first, first + ib)));
  }
  return B == 1 ? parts[0] : concatCols(parts);
}

std::vector<RGCNConv::RelationEdges> RGCNConv::relationEdges(const Tensor& edgeIndex, const Tensor& type,
                                                              int64_t numTargets) const {
  const int64_t E = edgeIndex.dim(1), R = relations_, m = numTargets;
  const Tensor srcT = edgeRow(edgeIndex, 0), dstT = edgeRow(edgeIndex, 1);
  const int64_t *src = srcT.data<int64_t>(), *dst = dstT.data<int64_t>(), *t = type.data<int64_t>();
  std::vector<RelationEdges> rel(static_cast<size_t>(R));
  // Each relation's targets ascending: mark the targets of each relation, then number them.
  std::vector<int64_t> slot(static_cast<size_t>(m * R), -1);
  for (int64_t e = 0; e < E; ++e) slot[static_cast<size_t>(t[e] * m + dst[e])] = 0;
  for (int64_t r = 0; r < R; ++r) {
    std::vector<int64_t>& targets = rel[static_cast<size_t>(r)].target;
    for (int64_t i = 0; i < m; ++i) {
      int64_t& s = slot[static_cast<size_t>(r * m + i)];
      if (s < 0) continue;
      s = static_cast<int64_t>(targets.size());
      targets.push_back(i);
    }
  }
  for (int64_t e = 0; e < E; ++e) {
    RelationEdges& re = rel[static_cast<size_t>(t[e])];
    re.row.push_back(slot[static_cast<size_t>(t[e] * m + dst[e])]);
    re.source.push_back(src[e]);
  }
  return rel;
}

Variable RGCNConv::forward(const Variable& x, const Tensor& edgeIndex, const Tensor& edgeType) {
  const Tensor type = checkedInputs("RGCNConv", x, edgeIndex, edgeType);
  return convolve(x, x, edgeIndex, type);
}

Variable RGCNConv::forward(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex,
                           const Tensor& edgeType) {
  GNN_CHECK_ARG(xDst.defined() && xDst.value().rank() == 2 && xDst.dim(1) == in_ && xDst.dtype() == xSrc.dtype(),
                "RGCNConv: the targets' features must be [M, ", in_, "] of the sources' dtype, got ",
                xDst.defined() ? shapeString(xDst.shape()) : std::string("none"));
  const Tensor type = checkedInputs("RGCNConv", xSrc, edgeIndex, edgeType, xDst.dim(0));
  return convolve(xSrc, xDst, edgeIndex, type);
}

Variable RGCNConv::convolve(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex, const Tensor& type) {
  // A layer that widens its input (in < out: a classifier's last layer) aggregates into every target's row per
  // relation and makes one product; one that narrows it (or has blocks) multiplies each relation's aggregates
  // on their own. Chosen by the layer's shape alone, so padding never changes which one runs.
  // A linear aggregation commutes with Theta_r: a narrowing layer (in > out) then multiplies every source row
  // first and aggregates the products, so it keeps no per-relation aggregates [targets_r, in] for its backward
  // (on a 100k-paper ogbn-mag-shaped graph the first layer's 310 MB), at the cost of products over all rows.
  if (blocks_ == 0 && in_ < out_) return stackedRelationSum(xSrc, xDst, edgeIndex, type);
  return addRootAndBias(relationSum(xSrc, xDst.dim(0), edgeIndex, type), xDst);
}

Variable RGCNConv::relationSum(const Variable& x, int64_t numTargets, const Tensor& edgeIndex, const Tensor& type) {
  const int64_t n = x.dim(0), m = numTargets;
  // Relation by relation, summed in order, as rgcn_conv.py's loop (a propagate and a product per relation) sums
  // them. Either every source row times Theta_r, then aggregated (see convolve), or the relation's aggregates,
  // one row for each target that has an edge of it, times Theta_r, then scattered to their targets: on a typed
  // graph a relation reaches one node type, so every node's [N, R in] would be mostly zeros (ogbn-mag: 7
  // relations, about a third of the pairs used). Each relation's product is added on its own, so no [pairs, out]
  // copy of them all is made.
  const std::vector<RelationEdges> rel = relationEdges(edgeIndex, type, m);
  const bool linear = isLinearAggregation(aggregation()), mean = std::string(aggregation().name()) == "mean";
  const bool transformFirst = linear && blocks_ == 0 && in_ > out_;
  const Variable weights = blocks_ > 0 ? reshape(*weight_, {relations_ * in_, out_ / blocks_})
                                       : reshape(relationWeights(), {relations_ * in_, out_});
  Variable out;
  for (int64_t r = 0; r < relations_; ++r) {
    const RelationEdges& re = rel[static_cast<size_t>(r)];
    const int64_t rows = static_cast<int64_t>(re.target.size());
    if (rows == 0) continue;
    Variable h;
    if (transformFirst) {
      // Each edge straight to its target's row: the mean then divides by the target's edges of this relation.
      std::vector<int64_t> targetRows(re.row.size());
      for (size_t k = 0; k < re.row.size(); ++k) targetRows[k] = re.target[static_cast<size_t>(re.row[k])];
      const SparseMatrix a = SparseMatrix::fromCoo(m, n, targetRows, re.source,
                                                   std::vector<double>(re.row.size(), 1.0), x.dtype());
      const Variable part = spmm(mean ? a.rowNormalized() : a, matmul(x, sliceRows(weights, r * in_, (r + 1) * in_)));
      out = out.defined() ? add(out, part) : part;
      continue;
    }
    if (linear) {
      // Sum and mean as a sparse product; the mean divides each row by its edges (duplicates count).
      const SparseMatrix a = SparseMatrix::fromCoo(rows, n, re.row, re.source,
                                                   std::vector<double>(re.row.size(), 1.0), x.dtype());
      h = spmm(mean ? a.rowNormalized() : a, x);
    } else {
      h = aggregate(gatherRows(x, Tensor::fromVector(re.source)), Tensor::fromVector(re.row), rows);
    }
    GNN_CHECK_ARG(h.dim(1) == in_, "RGCNConv: the aggregation gives ", h.dim(1), " channels per node, the ",
                  "relations' weights take ", in_, " (an aggregation that widens its input does not fit)");
    const Variable part = scatterSum(relationProduct(h, r, weights), Tensor::fromVector(re.target), m);
    out = out.defined() ? add(out, part) : part;
  }
  return out.defined() ? out : Variable(Tensor::zeros({m, out_}, x.dtype()));
}

Variable RGCNConv::stackedRelationSum(const Variable& x, const Variable& xDst, const Tensor& edgeIndex,
                                      const Tensor& type) {
  const int64_t n = x.dim(0), m = xDst.dim(0), E = edgeIndex.dim(1), R = relations_;
  const Tensor srcT = edgeRow(edgeIndex, 0), dstT = edgeRow(edgeIndex, 1);
  const int64_t *src = srcT.data<int64_t>(), *dst = dstT.data<int64_t>(), *t = type.data<int64_t>();
  // Each (target, relation) pair is a row of its own, i R + r: aggregating over those rows gives every target's
  // per-relation aggregates side by side ([M R, in] is [M, R in]), so one product with the relations' weights
  // stacked [R in, out] sums over the relations, with no [M, out] partial sum per relation. [M, R in] holds a
  // row for every pair, those without an edge too: cheaper than the products' [M, out] partial sums when
  // in < out. Every relation has its columns, so the product's depth does not depend on the edges.
  std::vector<int64_t> rows(static_cast<size_t>(E)), cols(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) {
    rows[static_cast<size_t>(e)] = dst[e] * R + t[e];
    cols[static_cast<size_t>(e)] = src[e];
  }
  Variable h;
  if (isLinearAggregation(aggregation())) {
    // Sum and mean as one sparse product; the mean divides each row by its edges (duplicates count).
    const SparseMatrix a =
        SparseMatrix::fromCoo(m * R, n, rows, cols, std::vector<double>(static_cast<size_t>(E), 1.0), x.dtype());
    h = spmm(std::string(aggregation().name()) == "mean" ? a.rowNormalized() : a, x);
  } else {
    const Tensor rowIndex = E > 0 ? Tensor::fromVector(rows) : Tensor::zeros({0}, DType::I64);
    h = aggregate(gatherRows(x, srcT), rowIndex, m * R);
  }
  GNN_CHECK_ARG(h.dim(1) == in_, "RGCNConv: the aggregation gives ", h.dim(1), " channels per node, the relations' ",
                "weights take ", in_, " (an aggregation that widens its input does not fit)");
  // The root weight is one more block of columns (the targets' own rows) and the bias the product's: no [M, out]
  // partial sums at all.
  Variable a = reshape(h, {m, R * in_}), w = reshape(relationWeights(), {R * in_, out_});
  h = Variable();  // the aggregates' only copy is then a's (the concatenation frees them)
  if (root_) {
    a = concatCols({a, xDst});
    w = concatRows({w, *root_});
  }
  return linear(a, transpose(w, 0, 1), biasParam_ ? *biasParam_ : Variable());
}

}  // namespace gnn
