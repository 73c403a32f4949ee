// The cost model's fitted per-op terms (device/CostFit.h) against the data they were fitted to
// (device/costfit/kernels.csv): the fitting script reproduces the committed header, every plan's IpuSpec holds the
// fitted terms, and the cost model itself, evaluated on the measured kernels, lands where the fit says it does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "device/CostModel.h"
#include "device/IpuSpec.h"

namespace gnn {
namespace {

const std::string kSource = GNN_SOURCE_DIR;

// One row of kernels.csv, by column name.
struct Row {
  std::vector<std::string> cells;
  const std::vector<std::string>* names;
  std::string operator[](const std::string& name) const {
    for (size_t i = 0; i < names->size(); ++i)
      if ((*names)[i] == name) return i < cells.size() ? cells[i] : "";
    ADD_FAILURE() << "no column " << name;
    return "";
  }
  double num(const std::string& name) const { return std::stod((*this)[name]); }
};

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

class CostFitData : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ifstream in(kSource + "/device/costfit/kernels.csv");
    ASSERT_TRUE(in) << "device/costfit/kernels.csv";
    std::string line;
    std::getline(in, line);
    names_ = splitCsv(line);
    while (std::getline(in, line)) rows_.push_back({splitCsv(line), &names_});
  }
  std::vector<Row> select(const std::string& op) const {
    std::vector<Row> out;
    for (const Row& r : rows_)
      if (r["op"] == op && r["amp"] == "default") out.push_back(r);
    return out;
  }
  std::vector<std::string> names_;
  std::vector<Row> rows_;
};

// rms of (fitted / measured - 1) and the range of fitted / measured.
struct Residuals {
  double rms = 0, lo = 1e9, hi = 0;
  void add(double ratio) {
    rms += (ratio - 1) * (ratio - 1);
    lo = std::min(lo, ratio);
    hi = std::max(hi, ratio);
  }
};

TEST(CostFit, ScriptReproducesTheCommittedHeader) {
  if (std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no /usr/bin/python3 with numpy (scripts/install-deps.sh installs python3-numpy)";
  const std::string cmd = "/usr/bin/python3 " + kSource + "/device/costfit/fit.py --check";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "device/CostFit.h is not what device/costfit/fit.py gives: run " << cmd
                                         << " without --check and commit the header";
}

TEST(CostFit, EveryIpuSpecHoldsTheFittedTerms) {
  for (const IpuSpec& s : {IpuSpec::mk2(), IpuSpec::bow()}) {
    EXPECT_EQ(s.opCycles, costfit::kOpCycles);
    EXPECT_EQ(s.elementwiseBytesPerCycle, costfit::kElementwiseBytesPerCycle);
    EXPECT_EQ(s.matmulPeakShare, costfit::kMatmulPeakShare);
    EXPECT_EQ(s.matmulHalfDim, costfit::kMatmulHalfDim);
    EXPECT_EQ(s.gatherCycles, costfit::kGatherCycles);
    EXPECT_EQ(s.gatherCyclesPerIndex, costfit::kGatherCyclesPerIndex);
    EXPECT_EQ(s.gatherCyclesPerTableRow, costfit::kGatherCyclesPerTableRow);
    EXPECT_EQ(s.gatherBytesPerCycle, costfit::kGatherBytesPerCycle);
    EXPECT_EQ(s.scatterCycles, costfit::kScatterCycles);
    EXPECT_EQ(s.scatterCyclesPerIndex, costfit::kScatterCyclesPerIndex);
    EXPECT_EQ(s.scatterBytesPerCycle, costfit::kScatterBytesPerCycle);
    // The fit's assumptions about the chip are the spec's.
    EXPECT_EQ(s.tiles, 1472);
    EXPECT_EQ(s.flopsPerCycleFp32, 32);
    EXPECT_EQ(s.flopsPerCycleFp16, 128);
  }
  // Physical ranges: no term that would make an op free or faster than the hardware's peak.
  EXPECT_GT(costfit::kOpCycles, 0);
  EXPECT_GT(costfit::kMatmulPeakShare, 0);
  EXPECT_LE(costfit::kMatmulPeakShare, 1);
  EXPECT_GE(costfit::kMatmulHalfDim, 0);
  EXPECT_GT(costfit::kGatherBytesPerCycle, 0);
  EXPECT_GT(costfit::kScatterBytesPerCycle, 0);
  EXPECT_GT(costfit::kElementwiseBytesPerCycle, 0);
}

// The measured gathers and scatter-adds (Bow, fp32, cycles) through the cost model as a plan sees them: ops with the
// bytes gnn/ops record (gatherRows: 8 B per index plus the rows read and written; scatterSum: the rows reduced, 8 B
// per index, the target rows), their indices and table rows. The model's cycles are the fit's: within the spread
// the header reports for these sets (rms 0.27 and 0.32), never more than 2x off.
TEST_F(CostFitData, GathersAndScattersThroughTheCostModel) {
  const IpuSpec bow = IpuSpec::bow();
  for (const std::string op : {"gather", "scatter_add"}) {
    const std::vector<Row> rows = select(op);
    ASSERT_EQ(rows.size(), 594u) << op;
    Residuals res;
    for (const Row& r : rows) {
      const auto in = static_cast<int64_t>(r.num("num_inputs")), f = static_cast<int64_t>(r.num("num_features"));
      const auto out = static_cast<int64_t>(r.num("num_outputs"));
      OpCost c;
      c.cls = OpClass::Exchange;
      if (op == "gather") {
        c.name = "gatherRows";
        c.bytes = out * (8 + 4 * f) + out * 4 * f;
        c.indices = out;
        c.tableRows = in;
      } else {
        c.name = "scatterSum";
        c.flops = in * f;
        c.bytes = in * (4 * f + 8) + out * 4 * f;
        c.indices = in;
        c.tableRows = out;
      }
      res.add(opSeconds(c, Precision::FP32, bow, 1e12) * 1.85e9 / r.num("value"));
    }
    const double rms = std::sqrt(res.rms / static_cast<double>(rows.size()));
    EXPECT_LT(rms, 0.33) << op;
    EXPECT_GT(res.lo, 0.29) << op;
    EXPECT_LT(res.hi, 2.0) << op;
  }
}

// The dense matmuls (Bow, 4096 x 4096 by 512..2048, fp32 and fp16): the cost model's matmul, from the FLOPs and
// bytes a `matmul` op records, within 5% of the measured time; and a Mk2 IPU runs the same cycles at 1.33 GHz.
TEST_F(CostFitData, DenseMatmulsThroughTheCostModel) {
  const std::vector<Row> rows = select("matmul");
  ASSERT_EQ(rows.size(), 3u);
  for (const Row& r : rows) {
    const double m = r.num("m"), k = r.num("k"), n = r.num("n");
    const double flops = 2 * m * k * n;
    const double measured = flops * r.num("density") / (r.num("value") * 1e12);  // seconds on the Bow
    const OpCost c{"matmul", OpClass::Matmul, static_cast<int64_t>(flops), static_cast<int64_t>(4 * (m * k + k * n + m * n)),
                   0, true};
    const Precision p = r["dtype"] == "fp16" ? Precision::FP16 : Precision::FP32;
    const double bow = opSeconds(c, p, IpuSpec::bow(), 0.6 * 940572672.0);
    EXPECT_NEAR(bow / measured, 1.0, 0.05) << m << "x" << k << "x" << n << " " << r["dtype"];
    EXPECT_NEAR(opSeconds(c, p, IpuSpec::mk2(), 0.6 * 940572672.0) * 1.33, bow * 1.85, 1e-9);
  }
}

// A gather's gradient is a scatter-add and a scatter's a gather: the backward pass is charged the other terms.
TEST(CostFit, BackwardOfAGatherIsChargedAsAScatter) {
  const IpuSpec s = IpuSpec::mk2();
  OpCost g{"gatherRows", OpClass::Exchange, 0, 1000000, 0, true};
  g.indices = 4000;
  g.tableRows = 2000;
  const double forward = s.gatherCycles + s.gatherCyclesPerIndex * 4000 + s.gatherCyclesPerTableRow * 2000 +
                         1e6 / s.gatherBytesPerCycle;
  EXPECT_NEAR(opSeconds(g, Precision::FP32, s, 1e12) * 1.33e9, forward, 1e-6);
  g.backward = true;
  const double backward = s.scatterCycles + s.scatterCyclesPerIndex * 4000 + 1e6 / s.scatterBytesPerCycle;
  EXPECT_NEAR(opSeconds(g, Precision::FP32, s, 1e12) * 1.33e9, backward, 1e-6);
  // fp16 halves a floating op's bytes; indices and table rows stay.
  g.backward = false;
  const double half = forward - 1e6 / s.gatherBytesPerCycle / 2;
  EXPECT_NEAR(opSeconds(g, Precision::FP16, s, 1e12) * 1.33e9, half, 1e-6);
}

}  // namespace
}  // namespace gnn
