// ClusterGCNConv: the graph convolution of Cluster-GCN (Chiang et al., KDD 2019) as PyG 2.3.1's ClusterGCNConv,
//   X' = (D^-1 A' + lambda diag(D^-1)) X W_out^T + b + X W_root^T,
// A' the edges with exactly one self-loop per node (add_self_loops: the graph's own removed, one added) or as
// they are, D its in-degree (duplicates count; at least 1), lambda = diag_lambda. State_dict: "lin_out.weight",
// "lin_out.bias" (bias), "lin_root.weight" ([out, in], [out]); Glorot weights as PyG's. The propagation matrix
// is cached per graph as GCNConv's. (Without add_self_loops, PyG adds lambda / deg over the self-loop edges only
// when there are as many as nodes; here each self-loop edge j -> j gets lambda / deg_j.)
//
//   auto conv = ClusterGCNConv::fromPyG({{"in_channels", 100}, {"out_channels", 64}, {"diag_lambda", 1e-4}}, gen);
//   Variable h = conv->forward(x, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class ClusterGCNConv : public MessagePassing {
 public:
  ClusterGCNConv(int64_t inChannels, int64_t outChannels, Generator& gen, double diagLambda = 0.0,
                 bool addSelfLoops = true, bool bias = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels, out_channels, diag_lambda, add_self_loops, bias).
  static std::unique_ptr<ClusterGCNConv> fromPyG(const nlohmann::json& args, Generator& gen,
                                                 DType dtype = DType::F32);

  Variable forward(const Variable& x, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;
  /// The propagation matrix (row = target): D^-1 A' plus lambda / deg on the self-loops' entries.
  SparseMatrix propagationMatrix(const Tensor& edgeIndex, int64_t numNodes, DType dtype) const;

 protected:
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  int64_t in_, out_;
  double diagLambda_;
  bool addSelfLoops_, bias_;
  DType dtype_;
  std::unique_ptr<Linear> linOut_, linRoot_;
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
