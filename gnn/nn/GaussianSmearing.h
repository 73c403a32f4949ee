// GaussianSmearing: SchNet's radial basis (Schuett et al. 2017; PyTorch Geometric's GaussianSmearing): a
// distance d becomes exp(coeff (d - mu_k)^2) on `count` centres mu_k evenly spaced on [start, stop], with
// coeff = -0.5 / spacing^2. No parameters.
//
//   GaussianSmearing rbf(0.0, 10.0, 50);
//   Variable e = rbf.forward(dist);                 // [E] -> [E, 50]
#pragma once
#include <vector>

#include "gnn/autograd/Variable.h"

namespace gnn {

class GaussianSmearing {
 public:
  GaussianSmearing(double start = 0.0, double stop = 10.0, int64_t count = 50);
  Variable forward(const Variable& dist) const;
  const std::vector<double>& offsets() const { return offsets_; }
  double coeff() const { return coeff_; }
  int64_t count() const { return static_cast<int64_t>(offsets_.size()); }

 private:
  std::vector<double> offsets_;
  double coeff_;
};

}  // namespace gnn
