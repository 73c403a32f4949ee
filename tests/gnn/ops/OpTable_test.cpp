// Every case of the op table (OpTable.h) through the same four checks, each a test of its own per case:
//   GradientMatchesFiniteDifferences  float64 backward against central differences (small shapes)
//   Float32MatchesFloat64             output and gradients in float32 against float64 (large shapes)
//   OneAndTwoThreadsGiveTheSameBits   output and gradients bit for bit with 1 and 2 threads (large shapes)
//   RecordsItsNameAndCosts            the OpInfo names the case expects, non-negative costs, forward and backward
// and one test that every op declared in gnn/ops/Ops.h has a case.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "GradCheck.h"
#include "OpTable.h"
#include "gnn/autograd/OpInfo.h"
#include "gnn/system/Parallel.h"

namespace gnn::testing {
namespace {
using V = std::vector<Variable>;

// Output and input gradients of one run: forward, then backward from a fixed random output gradient.
struct RunResult {
  Tensor y;
  std::vector<Tensor> grads;
};

Tensor seedFor(const Variable& y) {
  Tensor r = randomTensor(y.shape(), 99);
  return y.dtype() == DType::F64 ? r : r.to(y.dtype());
}

RunResult runCase(const OpCase& c, const OpInputs& in) {
  V x = variables(in.floats, true);
  Variable y = c.build(x, in.aux);
  RunResult r{y.value(), {}};
  y.backward(seedFor(y));
  for (const Variable& v : x) r.grads.push_back(v.hasGrad() ? v.grad() : Tensor());
  return r;
}

// |got - want| <= tol * max(1, |want|) for every element (NaN only where want is NaN too).
void expectClose(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.defined(), want.defined()) << what;
  if (!want.defined()) return;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int64_t bad = 0;
  double worst = 0;
  int64_t worstAt = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.at(i), w = want.at(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    const double err = std::abs(g - w) / std::max(1.0, std::abs(w));
    if (!(err <= tol)) {
      ++bad;
      if (!(err <= worst)) {
        worst = err;
        worstAt = i;
      }
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << want.numel() << " elements differ by more than " << tol
                    << "; worst at " << worstAt << ": " << (worstAt >= 0 ? got.at(worstAt) : 0) << " vs "
                    << (worstAt >= 0 ? want.at(worstAt) : 0);
}

class OpTable : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpTable, GradientMatchesFiniteDifferences) {
  const OpCase& c = GetParam();
  OpInputs in = makeInputs(c, false, DType::F64);
  expectGradientsMatch([&](const V& x) { return c.build(x, in.aux); }, in.floats, c.gradEps, c.gradTol);
}

TEST_P(OpTable, Float32MatchesFloat64) {
  const OpCase& c = GetParam();
  RunResult r64 = runCase(c, makeInputs(c, true, DType::F64));
  RunResult r32 = runCase(c, makeInputs(c, true, DType::F32));
  expectClose(r32.y, r64.y, c.tolerance, "output");
  if (!c.compareGradients) return;
  ASSERT_EQ(r32.grads.size(), r64.grads.size());
  for (size_t k = 0; k < r64.grads.size(); ++k)
    expectClose(r32.grads[k], r64.grads[k], c.tolerance, "gradient of input " + std::to_string(k));
}

// Restores the default thread budget however the test ends.
struct ThreadsGuard {
  ~ThreadsGuard() { setNumThreads(0); }
};

TEST_P(OpTable, OneAndTwoThreadsGiveTheSameBits) {
  const OpCase& c = GetParam();
  ThreadsGuard guard;
  for (DType dtype : {DType::F32, DType::F64}) {
    SCOPED_TRACE(dtypeName(dtype));
    OpInputs in = makeInputs(c, true, dtype);
    setNumThreads(1);
    RunResult one = runCase(c, in);
    setNumThreads(2);
    resetPeakCoreSlotsInUse();
    RunResult two = runCase(c, in);
    // Otherwise the comparison shows nothing: the large shapes must give some loop two chunks or more.
    if (c.parallel && coreSlots() >= 2) {
      EXPECT_GE(peakCoreSlotsInUse(), 2) << "no loop ran on two threads: make the large shapes larger";
    }
    EXPECT_TRUE(one.y.bitEqual(two.y)) << "output";
    ASSERT_EQ(one.grads.size(), two.grads.size());
    for (size_t k = 0; k < one.grads.size(); ++k) EXPECT_TRUE(one.grads[k].bitEqual(two.grads[k])) << "gradient " << k;
  }
}

struct Recorder : OpObserver {
  struct Event {
    std::string name;
    Pass pass;
    int64_t flops, bytes, savedBytes;
    bool recorded;
    Shape output;
  };
  std::vector<Event> events;
  void onOp(const OpEvent& e) override {
    events.push_back({e.info->name, e.pass, e.flops, e.bytes, e.savedBytes, e.recorded,
                      e.output ? e.output->shape() : Shape()});
  }
};

TEST_P(OpTable, RecordsItsNameAndCosts) {
  const OpCase& c = GetParam();
  OpInputs in = makeInputs(c, false, DType::F64);
  V x = variables(in.floats, true);
  Recorder rec;
  Shape yShape;
  {
    ObserverScope watch(rec);
    Variable y = c.build(x, in.aux);
    yShape = y.shape();
    y.backward(seedFor(y));
  }
  std::vector<std::string> forward, backward;
  for (const auto& e : rec.events) {
    EXPECT_GE(e.flops, 0) << e.name << " " << passName(e.pass);
    EXPECT_GE(e.bytes, 0) << e.name << " " << passName(e.pass);
    EXPECT_GE(e.savedBytes, 0) << e.name;
    (e.pass == Pass::Forward ? forward : backward).push_back(e.name);
    if (e.pass == Pass::Forward) {
      EXPECT_TRUE(e.recorded) << e.name << " was not put on the tape";
    }
  }
  EXPECT_EQ(forward, c.ops);
  EXPECT_EQ(backward, std::vector<std::string>(c.ops.rbegin(), c.ops.rend()));
  ASSERT_FALSE(rec.events.empty());
  // The last forward event is the case's result.
  for (auto it = rec.events.rbegin(); it != rec.events.rend(); ++it)
    if (it->pass == Pass::Forward) {
      EXPECT_EQ(it->output, yShape);
      break;
    }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpTable, ::testing::ValuesIn(opTable()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

TEST(OpTableCoverage, EveryOpInOpsHHasACase) {
  // Ops.h's ops are the functions returning a Variable; a case named f or f_<variant> covers f.
  std::ifstream file(std::string(GNN_SOURCE_DIR) + "/gnn/ops/Ops.h");
  ASSERT_TRUE(file) << "cannot read gnn/ops/Ops.h";
  std::stringstream text;
  text << file.rdbuf();
  const std::string source = text.str();
  std::set<std::string> declared;
  const std::regex decl(R"(\nVariable (\w+)\()");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), decl); it != std::sregex_iterator(); ++it)
    declared.insert((*it)[1]);
  EXPECT_GT(declared.size(), 50u);
  std::set<std::string> names;
  for (const OpCase& c : opTable()) {
    EXPECT_TRUE(names.insert(c.name).second) << "two cases named " << c.name;
    EXPECT_FALSE(c.ops.empty()) << c.name;
  }
  for (const std::string& f : declared) {
    bool covered = false;
    for (const std::string& n : names) covered = covered || n == f || n.rfind(f + "_", 0) == 0;
    EXPECT_TRUE(covered) << f << " (gnn/ops/Ops.h) has no case in tests/gnn/OpTable.cpp";
  }
}

TEST(OpTableCoverage, EveryCaseBuildsInFloat32) {
  // OpTable.h's usage example.
  for (const OpCase& c : opTable()) {
    OpInputs in = makeInputs(c, /*large=*/true, DType::F32);
    Variable y = c.build(variables(in.floats, true), in.aux);
    EXPECT_TRUE(y.requiresGrad()) << c.name;
  }
}

}  // namespace
}  // namespace gnn::testing
