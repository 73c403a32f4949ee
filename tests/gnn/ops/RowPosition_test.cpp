// Row-wise ops give a row the same bits wherever it sits in the batch: a real graph's result must not depend
// on the padding around it (docs/core.md, "Threads and reproducibility"). Cases: layer norms and softmaxes,
// activations on Eigen's vectorised exp and log1p, and segment softmax and fused message sums (which sum and
// multiply-add over rows too). Each places a probe (one row, or a segment of rows for segment ops) after
// 0..17 filler rows and before 0..2 more, and compares the probe's output rows and the probe's input gradient
// rows with those of the probe alone, bit for bit. Widths cover one element, widths below, at and between
// whole vectors (16 floats, 8 doubles, 64 bytes), and GIN's 300.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

constexpr int64_t kProbeRows = 3;  // rows of a probe segment (segment ops)

struct RowCase {
  const char* name;
  int64_t probeRows;  // 1, or kProbeRows for ops over segments of rows
  // The op on x [before + probeRows + after, F] whose probe starts at row `before`. `params` are
  // [F]-shaped tensors fixed per width (gamma, beta, bias).
  std::function<Variable(const Variable& x, int64_t before, int64_t after, const std::vector<Tensor>& params)>
      f;
};

// Edges i -> i for every row (twice with `twice`): message sums whose node i reads only its own row.
Tensor selfEdges(int64_t rows, bool twice) {
  std::vector<int64_t> src, dst;
  for (int64_t i = 0; i < rows; ++i)
    for (int k = 0; k < (twice ? 2 : 1); ++k) {
      src.push_back(i);
      dst.push_back(i);
    }
  std::vector<int64_t> both(src);
  both.insert(both.end(), dst.begin(), dst.end());
  return Tensor::fromVector(both, {2, static_cast<int64_t>(src.size())});
}

std::vector<RowCase> cases() {
  std::vector<RowCase> c;
  c.push_back({"layerNorm", 1, [](const Variable& x, int64_t, int64_t, const std::vector<Tensor>& p) {
                 return layerNorm(x, Variable(p[0]), Variable(p[1]));
               }});
  c.push_back({"layerNormRelu", 1, [](const Variable& x, int64_t, int64_t, const std::vector<Tensor>& p) {
                 return layerNormRelu(x, Variable(p[0]), Variable(p[1]));
               }});
  c.push_back({"logSoftmax", 1, [](const Variable& x, int64_t, int64_t, const std::vector<Tensor>&) {
                 return logSoftmax(x);
               }});
  c.push_back({"softmax", 1,
               [](const Variable& x, int64_t, int64_t, const std::vector<Tensor>&) { return softmax(x); }});
  c.push_back({"softmax_bias_mask", 1, [](const Variable& x, int64_t, int64_t, const std::vector<Tensor>& p) {
                 // Every third column masked (all kept for one column), a bias broadcast over the rows.
                 const int64_t F = x.dim(1);
                 Tensor mask = Tensor::full({F}, 1, DType::U8);
                 for (int64_t j = 1; j < F; j += 3) mask.data<uint8_t>()[j] = 0;
                 return softmax(x, -1, Variable(p[2]), mask);
               }});
  c.push_back({"segmentSoftmax", kProbeRows,
               [](const Variable& x, int64_t before, int64_t after, const std::vector<Tensor>&) {
                 // Segments: the filler before (one), the probe, and one per row after.
                 std::vector<int64_t> ptr{0};
                 if (before) ptr.push_back(before);
                 ptr.push_back(before + kProbeRows);
                 for (int64_t k = 1; k <= after; ++k) ptr.push_back(before + kProbeRows + k);
                 return segmentSoftmax(x, Tensor::fromVector(ptr));
               }});
  c.push_back({"shiftedSoftplus", 1, [](const Variable& x, int64_t, int64_t, const std::vector<Tensor>&) {
                 return shiftedSoftplus(x);
               }});
  c.push_back(
      {"gelu", 1, [](const Variable& x, int64_t, int64_t, const std::vector<Tensor>&) { return gelu(x); }});
  c.push_back({"reluMessageSum", 1, [](const Variable& x, int64_t, int64_t, const std::vector<Tensor>&) {
                 return reluMessageSum(x, x, selfEdges(x.dim(0), false), x.dim(0), 1.3);
               }});
  c.push_back({"filterMessageSum", 1, [](const Variable& x, int64_t, int64_t, const std::vector<Tensor>&) {
                 // Two messages per node, x * x each: a product added to a product.
                 std::vector<int64_t> rowOfEdge;
                 for (int64_t i = 0; i < x.dim(0); ++i) rowOfEdge.insert(rowOfEdge.end(), {i, i});
                 return filterMessageSum(x, x, selfEdges(x.dim(0), true), x.dim(0),
                                         Tensor::fromVector(rowOfEdge));
               }});
  return c;
}

// The probe's rows [before, before + rows) of t equal rows [0, rows) of ref, bit for bit.
bool sameRows(const Tensor& t, int64_t before, const Tensor& ref, int64_t rows) {
  const size_t rowBytes = static_cast<size_t>(t.dim(1)) * dtypeSize(t.dtype());
  return std::memcmp(static_cast<const char*>(t.raw()) + before * rowBytes, ref.raw(), rows * rowBytes) == 0;
}

// [before + probe rows + after, F]: random filler around a copy of probe.
Tensor around(const Tensor& probe, int64_t before, int64_t after, Generator& g) {
  const int64_t rows = probe.dim(0), F = probe.dim(1);
  Tensor t = init::normal({before + rows + after, F}, 2.0, g, probe.dtype());
  const size_t rowBytes = static_cast<size_t>(F) * dtypeSize(probe.dtype());
  std::memcpy(static_cast<char*>(t.raw()) + before * rowBytes, probe.raw(), rows * rowBytes);
  return t;
}

struct Result {
  Tensor y, gx;
};
Result run(const RowCase& c, const Tensor& x, const Tensor& seed, int64_t before, int64_t after,
           const std::vector<Tensor>& params) {
  Variable xv(x, true);
  Variable y = c.f(xv, before, after, params);
  Result r{y.value(), Tensor()};
  y.backward(seed);
  r.gx = xv.grad();
  return r;
}

TEST(RowPosition, RowBitsDoNotDependOnTheRowsOffset) {
  std::vector<std::string> failures;
  int64_t checks = 0;
  for (DType dt : {DType::F32, DType::F64}) {
    for (int64_t F : {1, 3, 7, 16, 24, 33, 300, 301}) {
      Generator g(static_cast<uint64_t>(F) * 7 + (dt == DType::F64));
      const std::vector<Tensor> params{init::normal({F}, 0.5, g, dt), init::normal({F}, 0.5, g, dt),
                                       init::normal({F}, 1.0, g, dt)};
      for (const RowCase& c : cases()) {
        const Tensor probe = init::normal({c.probeRows, F}, 2.0, g, dt);
        const Tensor probeSeed = init::normal({c.probeRows, F}, 1.0, g, dt);
        const Result alone = run(c, probe.clone(), probeSeed.clone(), 0, 0, params);
        for (int64_t before = 0; before < 18; ++before) {
          const int64_t after = before % 3;
          const Tensor x = around(probe, before, after, g), seed = around(probeSeed, before, after, g);
          const Result r = run(c, x, seed, before, after, params);
          ++checks;
          for (auto [what, got, ref] :
               {std::tuple{"forward", &r.y, &alone.y}, {"backward", &r.gx, &alone.gx}})
            if (!sameRows(*got, before, *ref, c.probeRows)) {
              std::ostringstream s;
              s << c.name << " " << dtypeName(dt) << " F=" << F << " offset " << before << " (" << after
                << " rows after): " << what;
              failures.push_back(s.str());
            }
        }
      }
    }
  }
  // Per op and dtype, how many probes differ; then the first few.
  std::map<std::string, int> perOp;
  for (const std::string& f : failures) ++perOp[f.substr(0, f.find(" F="))];
  std::ostringstream list;
  for (const auto& [op, n] : perOp) list << "\n  " << op << ": " << n;
  for (size_t i = 0; i < failures.size() && i < 20; ++i) list << "\n  " << failures[i];
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << 2 * checks
                                << " probes differ from the probe alone:" << list.str();
}

}  // namespace
}  // namespace gnn
