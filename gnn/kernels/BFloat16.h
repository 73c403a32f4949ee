// bfloat16: the upper 16 bits of a float32 (8 exponent bits, 7 mantissa bits), the input type of
// gnn/kernels/Gemm.h's gemmBf16. Conversion rounds to nearest, ties to even, as PyTorch and oneDNN do; NaN
// stays NaN.
#pragma once
#include <cstdint>
#include <cstring>

namespace gnn::kernels {

inline uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float fromBf16(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// out[i] = toBf16(in[i]) for a strided matrix: rows x cols values, row r at in + r * ld, written densely.
void toBf16Rows(const float* in, int64_t rows, int64_t cols, int64_t ld, uint16_t* out);

}  // namespace gnn::kernels
