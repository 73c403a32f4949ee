#include "gnn/nn/conv/FastRGCNConv.h"

#include <string>
#include <vector>

namespace gnn {

FastRGCNConv::FastRGCNConv(int64_t inChannels, int64_t outChannels, int64_t numRelations, Generator& gen,
                           int64_t numBases, int64_t numBlocks, const nlohmann::json& aggr, bool rootWeight, bool bias,
                           DType dtype)
    : RGCNConv(inChannels, outChannels, numRelations, gen, numBases, numBlocks, aggr, rootWeight, bias, dtype) {
  const std::string a = aggregation().name();
  // rgcn_conv.py, FastRGCNConv.forward: assert self.aggr in ['add', 'sum', 'mean'].
  GNN_CHECK_ARG(a == "sum" || a == "mean", "FastRGCNConv: aggr must be \"add\", \"sum\" or \"mean\" (as PyG's), got ",
                aggregation().spec().dump(), "; RGCNConv takes the others");
}

std::unique_ptr<FastRGCNConv> FastRGCNConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const Options o = optionsFromPyG(args, "FastRGCNConv");
  return std::make_unique<FastRGCNConv>(o.in, o.out, o.relations, gen, o.bases, o.blocks, o.aggr, o.rootWeight,
                                        o.bias, dtype);
}

std::unique_ptr<Module> FastRGCNConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<FastRGCNConv>(in_, out_, relations_, unused, bases_, blocks_,
                                                  aggregation().spec(), rootWeight_, bias_, dtype_));
}

Variable FastRGCNConv::transformedRows(const Variable& x) const {
  const int64_t n = x.dim(0), R = relations_;
  if (blocks_ == 0) {
    // x [N, in] times the relations' weights side by side [in, R out]: row j holds x_j Theta_r for r = 0..R-1.
    const Variable w = reshape(permute(relationWeights(), {1, 0, 2}), {in_, R * out_});
    return reshape(matmul(x, w), {n * R, out_});
  }
  // Block b of x_j times block b of every relation, [N, in/B] x [in/B, R out/B] (a matmul per block: a row's bits
  // must not depend on the number of rows, as a batched product's do), then the columns put in (node, relation,
  // block) order (PyG's bmm over [E B, 1, in/B] x [E B, in/B, out/B]).
  const int64_t B = blocks_, ib = in_ / B, ob = out_ / B;
  const Variable wb = reshape(permute(*weight_, {1, 2, 0, 3}), {B * ib, R * ob});
  std::vector<Variable> blocks;
  for (int64_t b = 0; b < B; ++b)
    blocks.push_back(matmul(sliceCols(x, b * ib, (b + 1) * ib), sliceRows(wb, b * ib, (b + 1) * ib)));
  const Variable y = B == 1 ? blocks[0] : concatCols(blocks);  // [N, B R out/B], block-major
  return reshape(permute(reshape(y, {n, B, R, ob}), {0, 2, 1, 3}), {n * R, out_});
}

Variable FastRGCNConv::forward(const Variable& x, const Tensor& edgeIndex, const Tensor& edgeType) {
  const Tensor type = checkedInputs("FastRGCNConv", x, edgeIndex, edgeType);
  const int64_t n = x.dim(0), E = edgeIndex.dim(1), R = relations_;
  const Tensor srcT = edgeRow(edgeIndex, 0), dstT = edgeRow(edgeIndex, 1);
  const int64_t *src = srcT.data<int64_t>(), *dst = dstT.data<int64_t>(), *t = type.data<int64_t>();
  // PyG's mean (FastRGCNConv.aggregate): each message divided by its target's count of incoming edges of its
  // type, then all summed at the target.
  std::vector<double> weight(static_cast<size_t>(E), 1.0);
  if (std::string(aggregation().name()) == "mean") {
    std::vector<int64_t> count(static_cast<size_t>(n * R), 0);
    for (int64_t e = 0; e < E; ++e) ++count[static_cast<size_t>(dst[e] * R + t[e])];
    for (int64_t e = 0; e < E; ++e)
      weight[static_cast<size_t>(e)] = 1.0 / static_cast<double>(count[static_cast<size_t>(dst[e] * R + t[e])]);
  }
  // Edge j -> i of type r reads row j R + r of the transformed rows: a sparse [N, N R] matrix, one product.
  std::vector<int64_t> rows(static_cast<size_t>(E)), cols(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) {
    rows[static_cast<size_t>(e)] = dst[e];
    cols[static_cast<size_t>(e)] = src[e] * R + t[e];
  }
  const SparseMatrix a = SparseMatrix::fromCoo(n, n * R, rows, cols, weight, x.dtype());
  return addRootAndBias(spmm(a, transformedRows(x)), x);
}

}  // namespace gnn
