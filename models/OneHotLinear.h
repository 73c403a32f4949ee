// OneHotLinear: a PyTorch Linear layer applied to [one-hot(categorical columns) || dense features], the way
// Chemprop's W_i and W_o read featurised atoms and bonds (Chemprop feeds one-hot vectors to nn.Linear; here
// the categories are OGB's, models/AtomEncoder.h and BondEncoder.h). The one-hot block of the weight is kept
// as a table [sum(dims), out] whose rows are summed (embeddingBag), so no one-hot matrix is built: the same
// function as W x on the one-hot vector, and the same parameters. Every weight and the bias are initialised as
// nn.Linear initialises one of in = sum(dims) + dense inputs: U(-1/sqrt(in), 1/sqrt(in)).
//
//   OneHotLinear wo(AtomEncoder::featureDims(), 300, 300, gen, /*bias=*/true);   // Chemprop's W_o
//   Variable h = wo.forward(batch.x, messages);      // x int64 [N, 9], messages [N, 300] -> [N, 300]
#pragma once
#include <vector>

#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

class OneHotLinear : public Module {
 public:
  /// dims: categories of each column; dense: width of the dense part (0: none); out: output width.
  OneHotLinear(std::vector<int64_t> dims, int64_t dense, int64_t out, Generator& gen, bool bias,
               DType dtype = DType::F32);
  /// categories int64 [M, C] with 0 <= categories[:, c] < dims[c] (an out-of-range value is an error naming it),
  /// dense [M, dense] (undefined when dense is 0) -> [M, out].
  Variable forward(const Tensor& categories, const Variable& dense = Variable()) const;
  std::unique_ptr<Module> clone() const override;
  const std::vector<int64_t>& dims() const { return dims_; }

 private:
  std::vector<int64_t> dims_, offsets_;
  int64_t dense_, out_;
  bool bias_;
  DType dtype_;
  Variable* table_;               // [sum(dims), out]: row offsets[c] + v is the weight column of category v of c
  Variable* weight_ = nullptr;    // [out, dense] (Linear's layout)
  Variable* biasParam_ = nullptr;  // [out]
};

}  // namespace gnn
