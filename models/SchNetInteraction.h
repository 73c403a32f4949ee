// SchNetInteraction: one interaction block of SchNet (PyTorch Geometric's InteractionBlock): CFConv, shifted
// softplus, Linear. The model adds it to the atom embeddings (h = h + interaction(h, ...)).
//
//   SchNetInteraction block(128, 50, 128, gen);
//   h = add(h, block.forward(h, edgeIndex, rbf, cut, pairOf));
#pragma once
#include "gnn/nn/Linear.h"
#include "gnn/nn/Module.h"
#include "gnn/nn/conv/CFConv.h"

namespace gnn {

class SchNetInteraction : public Module {
 public:
  SchNetInteraction(int64_t hidden, int64_t gaussians, int64_t filters, Generator& gen, DType dtype = DType::F32);
  /// The block's update of h [N, hidden] (without the residual); arguments as CFConv::forward.
  Variable forward(const Variable& h, const Tensor& edgeIndex, const Variable& rbf, const Variable& cut,
                   const Tensor& pairOf = Tensor(), bool fusedCutoff = true, const Tensor& plan = Tensor()) const;
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t hidden_, gaussians_, filters_;
  DType dtype_;
  CFConv conv_;
  Linear lin_;
};

}  // namespace gnn
