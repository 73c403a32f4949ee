// The observer sees every op with its name, block and FLOPs; the profiler's table adds them up.
#include <gtest/gtest.h>

#include <sstream>

#include "gnn/autograd/Block.h"
#include "gnn/autograd/Profiler.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

struct Recorder : OpObserver {
  struct Seen {
    std::string op, block;
    Pass pass;
    int64_t flops;
    bool recorded;
  };
  std::vector<Seen> seen;
  void onOp(const OpEvent& e) override { seen.push_back({e.info->name, e.block, e.pass, e.flops, e.recorded}); }
};

TEST(OpObserver, SeesForwardOpsAndBackwardClosuresWithTheirBlocks) {
  Generator g(1);
  Variable x(init::uniform({10, 6}, -1, 1, g));
  Variable w(init::uniform({4, 6}, -1, 1, g), true), b(init::uniform({4}, -1, 1, g), true);
  Recorder rec;
  {
    ObserverScope watch(rec);
    Variable h;
    {
      BlockScope blk("layers/0");
      h = relu(linear(x, w, b));
    }
    Variable loss = sum(h);
    loss.backward();
  }
  ASSERT_EQ(rec.seen.size(), 6u);
  EXPECT_EQ(rec.seen[0].op, "linear");
  EXPECT_EQ(rec.seen[0].block, "layers/0");
  EXPECT_EQ(rec.seen[0].pass, Pass::Forward);
  EXPECT_EQ(rec.seen[0].flops, 2 * 10 * 6 * 4 + 10 * 4);
  EXPECT_EQ(rec.seen[1].op, "relu");
  EXPECT_EQ(rec.seen[2].op, "sum");
  EXPECT_EQ(rec.seen[2].block, "");
  // Backward in reverse order, each closure tagged with the block its op was recorded in.
  EXPECT_EQ(rec.seen[3].op, "sum");
  EXPECT_EQ(rec.seen[3].pass, Pass::Backward);
  EXPECT_EQ(rec.seen[4].op, "relu");
  EXPECT_EQ(rec.seen[5].op, "linear");
  EXPECT_EQ(rec.seen[5].block, "layers/0");
  // x needs no gradient: only the weight's product (and the bias sum) run.
  EXPECT_EQ(rec.seen[5].flops, 2 * 10 * 6 * 4 + 10 * 4);
}

TEST(OpObserver, SeesOpsThatAreNotRecorded) {
  Variable x(Tensor::full({3, 3}, 1.0));
  Recorder rec;
  {
    ObserverScope watch(rec);
    NoGradGuard ng;
    (void)relu(x);
  }
  ASSERT_EQ(rec.seen.size(), 1u);
  EXPECT_FALSE(rec.seen[0].recorded);
}

TEST(OpProfiler, TableSumsCallsAndFlopsPerOpAndPass) {
  Generator g(2);
  Variable x(init::uniform({32, 8}, -1, 1, g), true);
  Variable w(init::uniform({8, 8}, -1, 1, g), true);
  OpProfiler prof;
  {
    ObserverScope watch(prof);
    for (int i = 0; i < 3; ++i) {
      Variable loss = sum(tanh(matmul(x, w)));
      loss.backward();
    }
  }
  const int64_t mm = 2 * 32 * 8 * 8;
  // Forward 3 x mm, backward 3 x 2mm (both inputs need gradients).
  EXPECT_EQ(prof.flopsOf("matmul"), 3 * mm + 3 * 2 * mm);
  bool found = false;
  for (const auto& r : prof.rows())
    if (r.op == "tanh" && r.pass == Pass::Backward) {
      found = true;
      EXPECT_EQ(r.calls, 3);
    }
  EXPECT_TRUE(found);
  std::ostringstream os;
  prof.print(os);
  EXPECT_NE(os.str().find("matmul"), std::string::npos);
  EXPECT_NE(os.str().find("total"), std::string::npos);
  auto j = prof.json();
  ASSERT_TRUE(j.is_array());
  EXPECT_TRUE(j[0].contains("op") && j[0].contains("pass") && j[0].contains("calls") && j[0].contains("ms") &&
              j[0].contains("flops"));
}

}  // namespace
}  // namespace gnn
