// CentralityEncoding: Graphormer's node input (Ying et al. 2021, eq. 5; graphormer_layers.py
// GraphNodeFeature): the sum of one embedding per OGB atom feature (the 9 columns of smiles2graph, as OGB's
// AtomEncoder) plus a degree embedding. Graphormer has an in-degree and an out-degree table, but molecular
// graphs are symmetric and its preprocessing (graphormer/data/wrapper.py) sets out_degree = in_degree, so
// both would read the same row: one table stands for their sum. Tables are N(0, 0.02)
// (init_graphormer_params).
//
// All tables are one weight [173 + degrees, dim] with row offsets (atom features, then degrees), so a node's
// 10 rows are summed in one embeddingBag. Graphormer's own atom table has a row per feature value too, at
// 512·feature + value + 2 in one table of 512·9 + 1 rows; the unused rows are left out here.
//
//   CentralityEncoding enc(80, gen);
//   Variable h = enc.forward(batch.x, batch.inDegree, batch.nodesMask);   // [numNodes, 80]
#pragma once
#include <vector>

#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

class CentralityEncoding : public Module {
 public:
  /// Graphormer's num_in_degree = 512: degrees 0 .. 511.
  static constexpr int64_t kDegrees = 512;
  CentralityEncoding(int64_t dim, Generator& gen, DType dtype = DType::F32, int64_t degrees = kDegrees);
  /// x int64 [N, 9] OGB atom features, degree int64 [N] -> [N, dim]. Rows with nodesMask 0 (padding nodes,
  /// whose values are pad values) read category 0 everywhere; a real row out of range is an error naming it.
  Variable forward(const Tensor& x, const Tensor& degree, const Tensor& nodesMask = Tensor()) const;
  std::unique_ptr<Module> clone() const override;
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_, degrees_;
  DType dtype_;
  std::vector<int64_t> dims_, offsets_;  // per index column: categories and first row
  Variable* weight_;
};

}  // namespace gnn
