// HalfPrecision: emulated IEEE half (binary16) storage on the CPU, for a device running in fp16. Values are
// computed in float and stored rounded to half: round to nearest, ties to even (Eigen::half's conversion), or
// stochastically (up with probability (x - lo) / (hi - lo) between the two neighbouring halves, from a
// counter-based random stream, so a seed reproduces it). Overflow saturates to +-65504, the largest half, as
// the IPU does by default (PopTorch's alternative, NaN on overflow, is not emulated); NaN stays NaN.
//
// An ExecutionContext with a rounding mode (ExecutionContext::setRounding) rounds every floating value an op
// records in the forward (Variable::record) and every gradient a backward closure passes on (the tape's
// accumulation); gradient values that saturate or are not finite are counted on the context, which is how a
// device detects overflow for loss scaling.
//
//   float h = roundToHalf(1.0f + 1e-4f);                  // 1.0f
//   int64_t bad = roundTensorToHalf(t, Rounding::Half);   // t rounded in place; saturated or non-finite count
#pragma once
#include <cstdint>

#include "gnn/system/Random.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

enum class Rounding : uint8_t {
  None,            // float32: values kept as computed
  Half,            // round to the nearest half, ties to even
  StochasticHalf,  // round to a neighbouring half at random, unbiased
};

/// The largest finite half.
constexpr float kHalfMax = 65504.0f;

/// x rounded to the nearest half (ties to even), saturated to +-65504 (infinities too); NaN stays NaN.
float roundToHalf(float x);
/// x rounded down or up to one of the two halves around it, up with probability (x - lo) / (hi - lo), using
/// `u` uniform in [0, 1); saturated as roundToHalf. A value that is already a half is returned unchanged.
float roundToHalfStochastic(float x, double u);
/// Rounds a float32 or float64 tensor in place (other dtypes are left alone). `gen`: the stream for
/// Rounding::StochasticHalf (element i uses counter i). Returns how many elements saturated (|x| > 65504,
/// infinities included) or were NaN.
int64_t roundTensorToHalf(Tensor& t, Rounding mode, const Generator* gen = nullptr);

}  // namespace gnn
