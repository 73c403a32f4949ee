// The op table (ggml's test-backend-ops): one case per op of gnn/ops/Ops.h, or per variant of an op (broadcasts,
// ranks, options). A case gives its inputs' shapes, how to make its index tensors, masks and targets for those
// shapes, and how to build the op from inputs; OpTable_test.cpp runs every case through the same checks
// (finite differences in float64, float32 against float64, 1 against 2 threads, the OpInfo recorded). A device
// test can run the same cases on its device and compare with the CPU results within each case's tolerance.
//
//   for (const OpCase& c : opTable()) {
//     OpInputs in = makeInputs(c, /*large=*/true, DType::F32);
//     Variable y = c.build(variables(in.floats, true), in.aux);
//   }
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "gnn/ops/Ops.h"

namespace gnn::testing {

/// A case's inputs at one size: the float inputs (every one is differentiated) and the rest (index tensors,
/// masks, targets, which are not).
struct OpInputs {
  std::vector<Tensor> floats;
  std::vector<Tensor> aux;
};

struct OpCase {
  /// Test name: unique, letters, digits and '_'.
  std::string name;
  /// OpInfo names of the ops the case records, in order (most cases: one).
  std::vector<std::string> ops;
  /// Float inputs for the gradient check: small, since it runs two forwards per element.
  std::vector<Shape> shapes;
  /// The same inputs large enough for several parallel chunks (threads and float32 checks); empty = shapes.
  std::vector<Shape> largeShapes;
  /// Index tensors, masks, targets for given float input shapes (may be empty).
  std::function<std::vector<Tensor>(const std::vector<Shape>& shapes)> aux;
  /// The op applied to the float inputs (any float dtype, all alike) and the aux tensors.
  std::function<Variable(const std::vector<Variable>& x, const std::vector<Tensor>& aux)> build;
  /// float32 against float64, forward and gradients: |y32 - y64| <= tolerance * max(1, |y64|).
  double tolerance = 1e-4;
  /// Central-difference step and tolerance of the float64 gradient check.
  double gradEps = 1e-6;
  double gradTol = 1e-6;
  /// Range of the random float inputs (uniform).
  double lo = -1, hi = 1;
  /// Whether the float32 gradients are compared too (not for max-type ops, whose argmax may flip between
  /// float32 and float64 at near ties).
  bool compareGradients = true;
  /// Whether the op runs parallel loops at the large shapes (false for the few that are serial by design,
  /// e.g. the losses' sums), checked by the thread test.
  bool parallel = true;
};

/// gtest prints a case by its name.
inline void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

/// Every case.
const std::vector<OpCase>& opTable();

/// A case's inputs: floats uniform in [lo, hi) of the given dtype (the float64 values rounded), from a seed
/// fixed per input; aux from the case for those shapes.
OpInputs makeInputs(const OpCase& c, bool large, DType dtype);

/// Variables over the tensors (copies, so ops may not alias the case's inputs).
std::vector<Variable> variables(const std::vector<Tensor>& tensors, bool requiresGrad);

}  // namespace gnn::testing
