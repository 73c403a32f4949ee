// A tensor's bytes parked in a temporary file and its memory freed until the spill ends: for the phases of a
// large job that need memory more than they need the tensor (METIS on a graph of millions of nodes needs about
// 40 bytes per edge of its own while the graph's features and edge list wait).
#pragma once
#include <cstddef>

#include "gnn/tensor/Tensor.h"

namespace gnn {

class TensorSpill {
 public:
  /// Spills `t` when it alone owns its whole storage and holds at least `minBytes`; otherwise, or when the file
  /// cannot be written (a full disk), `t` stays in memory and spilled() is false. The file is unlinked from the
  /// start ($TMPDIR, O_TMPFILE): nothing is left behind whatever happens to the process.
  explicit TensorSpill(Tensor& t, size_t minBytes = size_t{64} << 20);
  /// Restores a tensor not yet restored (errors then end the process: a destructor cannot report them).
  ~TensorSpill();
  TensorSpill(const TensorSpill&) = delete;
  TensorSpill& operator=(const TensorSpill&) = delete;

  /// Reads the bytes back into a new tensor of the same shape and dtype; throws naming the cause on failure.
  void restore();
  bool spilled() const { return fd_ >= 0; }
  size_t bytes() const { return bytes_; }

 private:
  Tensor* t_;
  Shape shape_;
  DType dtype_ = DType::F32;
  size_t bytes_ = 0;
  int fd_ = -1;
};

}  // namespace gnn
