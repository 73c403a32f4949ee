// NpyArray: one array in numpy's .npy format (NEP 1, versions 1-3), parsed from bytes in memory with every
// header field checked against the data that follows. C order, little-endian float16/32/64, int8/16/32/64,
// uint8 and bool; int8 and int16 widen to int32, bool reads as uint8 (isBool set).
//
//   NpyArray a = parseNpy(bytes, "weights.npz (conv1.weight.npy)");
#pragma once
#include <string>
#include <string_view>

#include "gnn/tensor/Tensor.h"

namespace gnn {

struct NpyArray {
  Tensor tensor;
  bool isBool = false;
};

/// Throws std::runtime_error naming `where` for a damaged header, an unsupported dtype or order, a rank above
/// 4, or data of the wrong size.
NpyArray parseNpy(std::string_view bytes, const std::string& where);

}  // namespace gnn
