#include "gnn/kernels/BFloat16.h"

namespace gnn::kernels {

void toBf16Rows(const float* in, int64_t rows, int64_t cols, int64_t ld, uint16_t* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict src = in + r * ld;
    uint16_t* __restrict dst = out + r * cols;
    // toBf16 written without branches, so the loop vectorises.
    for (int64_t c = 0; c < cols; ++c) {
      uint32_t u;
      std::memcpy(&u, &src[c], sizeof u);
      const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
      dst[c] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : rounded);
    }
  }
}

}  // namespace gnn::kernels
