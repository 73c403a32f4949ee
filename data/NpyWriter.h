// NpyWriter: one array as a NumPy .npy file (format 1.0, NEP 1), as numpy.load reads it: float32, float64,
// int64 or uint8, C order, little-endian. Written to a temporary file beside the target and renamed into place,
// so a failed write leaves no partial file and an existing one unchanged.
//
//   writeNpy("out.npy", logits.value());     // float32 [num_nodes, out_channels]
#pragma once
#include <string>

#include "gnn/tensor/Tensor.h"

namespace gnn {

/// Throws std::runtime_error naming the file on any I/O failure, std::invalid_argument for another dtype.
void writeNpy(const std::string& path, const Tensor& array);

}  // namespace gnn
