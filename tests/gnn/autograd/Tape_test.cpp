// The tape keeps inputs as gradient handles, not values: intermediates die as the forward goes, and what a
// step keeps for its backward is exactly what its ops declared.
#include <gtest/gtest.h>

#include <cmath>

#include "gnn/autograd/GradientSink.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {
namespace {

// Tensor bytes alive under a fresh memory account while `f` runs and after it returns.
struct Held {
  int64_t after = 0, peak = 0;
};
template <class F>
Held measure(F&& f) {
  auto account = std::make_shared<MemoryAccount>("test");
  ExecutionContext ctx;
  ctx.setMemoryAccount(account);
  Held h;
  {
    ContextScope use(ctx);
    f();
    h.after = account->currentBytes();
    h.peak = account->peakBytes();
  }
  return h;
}

TEST(Tape, TenChainedScalesHoldAtMostTwiceTheirInput) {
  // 16 MB input, ten scale ops: each backward needs only its scalar, so the tape keeps no values.
  const int64_t n = 4 * 1024 * 1024;
  Variable x(Tensor::full({n}, 1.0), true);
  const int64_t input = static_cast<int64_t>(x.value().nbytes());
  Variable y;
  Held h = measure([&] {
    y = x;
    for (int i = 0; i < 10; ++i) y = scale(y, 1.5);
  });
  // Alive after the chain: the output only (the input was allocated outside the account).
  EXPECT_LE(h.after, 2 * input) << "the chain holds " << h.after << " bytes for a " << input << "-byte input";
  EXPECT_LE(h.after, input + 4096);
  EXPECT_EQ(tapeStats(y).ops, 10);
  EXPECT_EQ(tapeStats(y).savedBytes, 0);
  // And the gradient is still right: 1.5^10 everywhere.
  y.backward(Tensor::full({n}, 1.0));
  EXPECT_FLOAT_EQ(static_cast<float>(x.grad().at(0)), static_cast<float>(std::pow(1.5, 10)));
  EXPECT_FLOAT_EQ(static_cast<float>(x.grad().at(n - 1)), static_cast<float>(std::pow(1.5, 10)));
}

TEST(Tape, NoGradChainHoldsTheSameAsTheTape) {
  const int64_t n = 1 << 20;
  Variable x(Tensor::full({n}, 1.0), true);
  Variable y;
  Held withTape = measure([&] {
    y = x;
    for (int i = 0; i < 10; ++i) y = scale(y, 1.5);
  });
  Variable z;
  Held noGrad = measure([&] {
    NoGradGuard ng;
    z = x;
    for (int i = 0; i < 10; ++i) z = scale(z, 1.5);
  });
  EXPECT_EQ(withTape.after, noGrad.after);
  EXPECT_TRUE(y.value().bitEqual(z.value()));
}

TEST(Tape, SavedBytesAreWhatTheOpsDeclaredCountedOnce) {
  Generator g(3);
  Variable x(init::uniform({64, 32}, -1, 1, g), true);
  Variable w(init::uniform({32, 16}, -1, 1, g), true);
  // matmul saves x (for w's gradient) and w (for x's); relu saves its output; the sum saves nothing.
  Variable h = matmul(x, w);
  Variable r = relu(h);
  Variable loss = sum(r);
  TapeStats st = tapeStats(loss);
  EXPECT_EQ(st.ops, 3);
  EXPECT_EQ(st.savedTensors, 3);
  EXPECT_EQ(st.savedBytes, static_cast<int64_t>(x.value().storageBytes() + w.value().storageBytes() +
                                                 r.value().storageBytes()));
  // With a constant weight, matmul keeps nothing for it: only w (for x's gradient) and relu's output.
  Variable wc(w.value(), false);
  Variable loss2 = sum(relu(matmul(x, wc)));
  EXPECT_EQ(tapeStats(loss2).savedBytes,
            static_cast<int64_t>(w.value().storageBytes() + 64 * 16 * sizeof(float)));
  loss.backward();
  EXPECT_EQ(tapeStats(loss).ops, 0) << "backward releases the tape";
}

TEST(Tape, IntermediateValuesAreFreedWhenTheProgramDropsThem) {
  Generator g(4);
  Variable x(init::uniform({256, 256}, -1, 1, g), true);
  const int64_t bytes = static_cast<int64_t>(x.value().nbytes());
  Variable y;
  Held h = measure([&] {
    // tanh saves its output, scale saves nothing: of the five values only the last tanh's output and the
    // final result stay alive.
    Variable a = scale(x, 2.0);
    Variable b = tanh(a);
    Variable c = scale(b, 0.5);
    Variable d = tanh(c);
    y = scale(d, 3.0);
  });
  EXPECT_LE(h.after, 3 * bytes + 1024) << "b is kept (tanh saved it), d too, y is the result";
  EXPECT_GE(h.after, 3 * bytes);
}

TEST(Tape, GradInputHasShapeButNoValue) {
  Variable a(Tensor::full({3, 4}, 2.0), true);
  Shape seen;
  OpInfo info{"probe", 0, 0, 0, 0};
  Variable y = Variable::record(info, Tensor::full({3, 4}, 1.0), {a}, {},
                                [&seen](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>&) {
                                  seen = in[0].shape();
                                  in[0].addGrad(gy);
                                });
  y.backward(Tensor::full({3, 4}, 1.0));
  EXPECT_EQ(seen, (Shape{3, 4}));
  EXPECT_DOUBLE_EQ(a.grad().at(0), 1.0);
}

TEST(GradientSink, ReceivesParameterGradientsInsteadOfTheParameters) {
  Generator g(5);
  Variable x(init::uniform({20, 8}, -1, 1, g));
  Variable w(init::uniform({8, 4}, -1, 1, g), true);
  // Plain backward: the gradient lands in w.
  Variable loss = sum(tanh(matmul(x, w)));
  loss.backward();
  Tensor direct = w.grad().clone();
  w.zeroGrad();
  // Same backward under a context with a sink: w stays untouched, the sink holds the same bits.
  GradientSink sink;
  ExecutionContext ctx;
  ctx.setGradientSink(&sink);
  {
    ContextScope use(ctx);
    Variable l2 = sum(tanh(matmul(x, w)));
    l2.backward();
  }
  EXPECT_FALSE(w.hasGrad());
  ASSERT_TRUE(sink.grad(w).defined());
  EXPECT_TRUE(sink.grad(w).bitEqual(direct));
  EXPECT_EQ(sink.grads({w, Variable(Tensor::zeros({1}), true)}).size(), 2u);
  EXPECT_FALSE(sink.grads({w, Variable(Tensor::zeros({1}), true)})[1].defined());
}

TEST(Tensor, VersionChangesOnEveryWriteAccess) {
  Tensor t = Tensor::zeros({4}, DType::I64);
  const Tensor& c = t;
  const uint64_t v0 = t.version();
  (void)c.data<int64_t>();
  EXPECT_EQ(t.version(), v0) << "reading does not bump the version";
  t.data<int64_t>()[0] = 7;
  EXPECT_GT(t.version(), v0);
  Tensor view = t.reshape({2, 2});
  const uint64_t v1 = t.version();
  view.fill(1);
  EXPECT_GT(t.version(), v1) << "a write through a view is a write to the buffer";
  EXPECT_EQ(view.storageId(), t.storageId());
}

}  // namespace
}  // namespace gnn
