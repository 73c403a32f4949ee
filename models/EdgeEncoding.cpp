#include "models/EdgeEncoding.h"

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {

EdgeEncoding::EdgeEncoding(int64_t heads, int64_t multiHopMaxDist, Generator& gen, DType dtype,
                           int64_t edgeRows)
    : heads_(heads), maxDist_(multiHopMaxDist), edgeRows_(edgeRows), dtype_(dtype) {
  GNN_CHECK_ARG(heads >= 1 && multiHopMaxDist >= 1 && edgeRows >= 1,
                "EdgeEncoding: heads, multiHopMaxDist and edgeRows must be >= 1");
  table_ = &registerParameter("edge_encoder", init::normal({edgeRows, heads}, 0.02, gen, dtype));
  hopWeights_ =
      &registerParameter("edge_dis_encoder", init::normal({maxDist_, heads, heads}, 0.02, gen, dtype));
}

std::unique_ptr<Module> EdgeEncoding::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<EdgeEncoding>(heads_, maxDist_, unused, dtype_, edgeRows_));
}

Variable EdgeEncoding::forward(const Tensor& edgeInput, const Tensor& spatialPos) const {
  GNN_CHECK_ARG(
      edgeInput.defined() && edgeInput.rank() == 4 && spatialPos.defined() && spatialPos.rank() == 2 &&
          edgeInput.dim(0) == spatialPos.dim(0) && edgeInput.dim(1) == spatialPos.dim(1),
      "EdgeEncoding: expected edgeInput [G·M, M, K, Fe] and spatialPos [G·M, M] (build the dataset with "
      "Graphormer encodings), got ",
      edgeInput.defined() ? shapeString(edgeInput.shape()) : "none", " and ",
      spatialPos.defined() ? shapeString(spatialPos.shape()) : "none");
  const int64_t m = spatialPos.dim(1), g = m ? spatialPos.dim(0) / m : 0;
  return reshape(multiHopEdgeBias(*table_, *hopWeights_, edgeInput, spatialPos), {g, m, m, heads_});
}

}  // namespace gnn
