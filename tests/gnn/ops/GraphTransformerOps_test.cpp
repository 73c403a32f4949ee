// The graph-transformer ops against what they replace: multiHeadAttention against the chain of plain ops
// (permutes, bmmNT, softmax with bias and mask, dropout, bmm), multiHopEdgeBias against Graphormer's own
// sequence (embedding with a zero padding row, mean over features, per-hop bmm, sum, divide), and the layouts
// of toDenseBatch and graphAttentionBias by hand. Values and gradients in float64.
#include <gtest/gtest.h>

#include <cmath>

#include "GradCheck.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {
namespace {
using testing::randomTensor;

void expectClose(const Tensor& a, const Tensor& b, double tol, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i)
    ASSERT_NEAR(a.at(i), b.at(i), tol * std::max(1.0, std::abs(b.at(i)))) << what << " element " << i;
}

// [B, T, E] -> [B, H, T, d] and back, with the library's shape ops.
Variable splitHeads(const Variable& x, int64_t H) {
  const int64_t B = x.dim(0), T = x.dim(1), d = x.dim(2) / H;
  return permute(reshape(x, {B, T, H, d}), {0, 2, 1, 3});
}
Variable mergeHeads(const Variable& x) {
  const int64_t B = x.dim(0), H = x.dim(1), T = x.dim(2), d = x.dim(3);
  return reshape(permute(x, {0, 2, 1, 3}), {B, T, H * d});
}

struct AttentionInputs {
  Variable q, k, v, bias;
  Tensor mask;
};

// multiHeadAttention's value and gradients (q, k, v, bias) equal the composed chain's.
void checkAttention(bool withBias, bool withMask, double p) {
  const int64_t B = 3, T = 7, H = 2, d = 3, E = H * d;
  auto inputs = [&] {
    AttentionInputs in{Variable(randomTensor({B, T, E}, 1), true), Variable(randomTensor({B, T, E}, 2), true),
                       Variable(randomTensor({B, T, E}, 3), true),
                       withBias ? Variable(randomTensor({B, H, T, T}, 4), true) : Variable(), Tensor()};
    if (withMask) {
      std::vector<uint8_t> m(static_cast<size_t>(B * T), 1);
      m[2] = m[5] = m[T + 6] = 0;
      for (int64_t j = 0; j < T; ++j) m[2 * T + j] = 0;  // a sequence with every key masked
      in.mask = Tensor::fromVector(m, {B, T});
    }
    return in;
  };
  // A random projection that ignores the rows of masked keys (zeros in the fused op, attending in the chain).
  Tensor r = randomTensor({B, T, E}, 9);
  if (withMask)
    for (int64_t row = 0; row < B * T; ++row)
      if (!inputs().mask.data<uint8_t>()[row])
        for (int64_t c = 0; c < E; ++c) r.data<double>()[row * E + c] = 0;
  auto projected = [&](const Variable& y) { return sum(mul(y, Variable(r))); };
  AttentionInputs a = inputs(), c = inputs();
  // Fused.
  ExecutionContext::current().setRandomKey({5, 1, 0});
  Variable qkv =
      reshape(concatCols({reshape(a.q, {B * T, E}), reshape(a.k, {B * T, E}), reshape(a.v, {B * T, E})}),
              {B, T, 3 * E});
  Variable fused = multiHeadAttention(qkv, H, a.bias, a.mask, p, p > 0);
  projected(fused).backward();
  // Composed.
  ExecutionContext::current().setRandomKey({5, 1, 0});
  Variable scores = bmmNT(scale(splitHeads(c.q, H), 1 / std::sqrt(double(d))), splitHeads(c.k, H));
  Variable probs = softmax(scores, -1, c.bias, c.mask.defined() ? c.mask.reshape({B, 1, 1, T}) : Tensor());
  Variable composed = mergeHeads(bmm(dropout(probs, p, p > 0), splitHeads(c.v, H)));
  projected(composed).backward();
  const std::string what = std::string("bias ") + (withBias ? "yes" : "no") + ", mask " +
                           (withMask ? "yes" : "no") + ", dropout " + std::to_string(p);
  // Rows whose key is masked (padding slots) are zero in the fused op; the chain lets them attend. Compare
  // the kept rows, and the gradients with the chain's masked rows weighted 0 (r below).
  Tensor kept = composed.value().clone();
  if (withMask)
    for (int64_t row = 0; row < B * T; ++row)
      if (!a.mask.data<uint8_t>()[row])
        for (int64_t c = 0; c < E; ++c) {
          EXPECT_EQ(fused.value().at(row * E + c), 0.0) << what << ": masked row " << row;
          kept.data<double>()[row * E + c] = 0;
        }
  expectClose(fused.value(), kept, 1e-12, what + ": value");
  expectClose(a.q.grad(), c.q.grad(), 1e-12, what + ": gradient of q");
  expectClose(a.k.grad(), c.k.grad(), 1e-12, what + ": gradient of k");
  expectClose(a.v.grad(), c.v.grad(), 1e-12, what + ": gradient of v");
  if (withBias) expectClose(a.bias.grad(), c.bias.grad(), 1e-12, what + ": gradient of the bias");
}

TEST(MultiHeadAttention, MatchesTheComposedChain) {
  for (bool bias : {false, true})
    for (bool mask : {false, true})
      for (double p : {0.0, 0.3}) checkAttention(bias, mask, p);
}

TEST(MultiHeadAttention, MaskedKeysAndOtherSequencesDoNotChangeASequence) {
  // Sequence 0 alone, and beside another sequence in the batch with extra (masked) keys changed: same bits.
  const int64_t T = 6, H = 2, E = 8;
  Tensor x = randomTensor({2, T, 3 * E}, 11).to(DType::F32),
         bias = randomTensor({2, H, T, T}, 12).to(DType::F32);
  Tensor mask = Tensor::fromVector<uint8_t>({1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1}, {2, T});
  Tensor y = multiHeadAttention(Variable(x), H, Variable(bias), mask).value();
  Tensor x2 = x.clone(), bias2 = bias.clone();
  for (int64_t i = 0; i < T; ++i)  // keys 4 and 5 of sequence 0 are masked: change them
    for (int64_t c = 0; c < 3 * E; ++c)
      if (i >= 4) x2.data<float>()[i * 3 * E + c] = 1e3f;
  for (int64_t n = T * 3 * E; n < x2.numel(); ++n) x2.data<float>()[n] = -7.0f;  // sequence 1
  Tensor y2 = multiHeadAttention(Variable(x2), H, Variable(bias2), mask).value();
  for (int64_t i = 0; i < 4 * E; ++i) EXPECT_EQ(y.data<float>()[i], y2.data<float>()[i]) << i;
}

// Packed sequences (rows of real positions only) give the same bits as the dense blocks with a key mask:
// values, gradients of qkv and bias, with attention dropout, in float32 and float64; a sequence of no rows is
// allowed; shapes that do not fit are refused.
TEST(MultiHeadAttention, PackedRowsAreTheDenseBlocksRowsBitForBit) {
  const int64_t T = 7, H = 2, d = 3, E = H * d;
  const std::vector<int64_t> lengths{5, 7, 0, 1, 3};
  const int64_t G = static_cast<int64_t>(lengths.size());
  std::vector<int64_t> ptr{0};
  for (int64_t n : lengths) ptr.push_back(ptr.back() + n);
  const int64_t R = ptr.back();
  for (DType dt : {DType::F32, DType::F64})
    for (double p : {0.0, 0.3}) {
      Tensor dense = randomTensor({G, T, 3 * E}, 21), bias = randomTensor({G, H, T, T}, 22).to(dt);
      Tensor r = randomTensor({G * T, E}, 23);
      Tensor packed = Tensor::zeros({R, 3 * E}, DType::F64), rPacked = Tensor::zeros({R, E}, DType::F64);
      std::vector<uint8_t> m(static_cast<size_t>(G * T), 0);
      for (int64_t g = 0; g < G; ++g)
        for (int64_t i = 0; i < lengths[static_cast<size_t>(g)]; ++i) {
          m[static_cast<size_t>(g * T + i)] = 1;
          for (int64_t c = 0; c < 3 * E; ++c)
            packed.data<double>()[(ptr[g] + i) * 3 * E + c] = dense.at((g * T + i) * 3 * E + c);
          for (int64_t c = 0; c < E; ++c)
            rPacked.data<double>()[(ptr[g] + i) * E + c] = r.at((g * T + i) * E + c);
        }
      const Tensor mask = Tensor::fromVector(m, {G, T});
      Variable xd(dense.to(dt), true), bd(bias, true), xp(packed.to(dt), true), bp(bias.clone(), true);
      ExecutionContext::current().setRandomKey({4, 2, 0});
      Variable yd = multiHeadAttention(xd, H, bd, mask, p, p > 0);
      sum(mul(reshape(yd, {G * T, E}), Variable(r.to(dt)))).backward();
      ExecutionContext::current().setRandomKey({4, 2, 0});
      Variable yp = multiHeadAttentionPacked(xp, H, Tensor::fromVector(ptr, {G + 1}), T, bp, p, p > 0);
      sum(mul(yp, Variable(rPacked.to(dt)))).backward();
      ASSERT_EQ(yp.shape(), Shape({R, E}));
      const std::string what = std::string(dtypeName(dt)) + " dropout " + std::to_string(p);
      for (int64_t g = 0; g < G; ++g)
        for (int64_t i = 0; i < lengths[static_cast<size_t>(g)]; ++i) {
          for (int64_t c = 0; c < E; ++c)
            ASSERT_EQ(yp.value().at((ptr[g] + i) * E + c), yd.value().at((g * T + i) * E + c))
                << what << " value";
          for (int64_t c = 0; c < 3 * E; ++c)
            ASSERT_EQ(xp.grad().at((ptr[g] + i) * 3 * E + c), xd.grad().at((g * T + i) * 3 * E + c))
                << what << " dqkv";
        }
      for (int64_t k = 0; k < bias.numel(); ++k)
        ASSERT_EQ(bp.grad().at(k), bd.grad().at(k)) << what << " dbias " << k;
    }
  const Tensor bad = Tensor::fromVector<int64_t>({0, 3, 9}, {3});
  Tensor x = randomTensor({9, 3 * E}, 1);
  EXPECT_THROW(multiHeadAttentionPacked(Variable(x), H, bad, 5), std::invalid_argument);  // 6 rows > 5
  EXPECT_THROW(multiHeadAttentionPacked(Variable(randomTensor({8, 3 * E}, 1)), H,
                                        Tensor::fromVector<int64_t>({0, 3, 9}, {3}), 8),
               std::invalid_argument);  // rowPtr ends past the rows
  EXPECT_THROW(multiHeadAttentionPacked(Variable(x), H, bad, 8, Variable(randomTensor({2, H, 7, 7}, 2))),
               std::invalid_argument);  // bias blocks of the wrong side
}

TEST(MultiHopEdgeBias, MatchesGraphormersSequenceOfOps) {
  const int64_t V = 7, H = 3, K = 2, Kin = 3, Fe = 3, P = 9;
  // Pair p at distance dist[p]; hops beyond the distance are -1, and one feature of pair 4's hop 0 is too.
  const std::vector<int64_t> dist{-1, 0, 1, 2, 3, 510, 1, 2, 5};
  Generator g(3);
  Tensor ei({P, Kin, Fe}, DType::I64), sp = Tensor::fromVector(dist, {P});
  for (int64_t p = 0; p < P; ++p)
    for (int64_t k = 0; k < Kin; ++k)
      for (int64_t f = 0; f < Fe; ++f)
        ei.data<int64_t>()[(p * Kin + k) * Fe + f] =
            dist[p] >= 1 && dist[p] < 510 && k < dist[p] ? static_cast<int64_t>(g.nextBelow(V)) : -1;
  ei.data<int64_t>()[(4 * Kin + 0) * Fe + 1] = -1;
  Variable table(randomTensor({V, H}, 21), true), w(randomTensor({K, H, H}, 22), true);
  Variable table2(table.value().clone(), true), w2(w.value().clone(), true);
  Tensor r = randomTensor({P, H}, 23);
  Variable fused = multiHopEdgeBias(table, w, ei, sp);
  sum(mul(fused, Variable(r))).backward();
  // Graphormer: edge_encoder(edge_input + 1) with row 0 the zero padding row (here: a shift matrix times the
  // table), .mean(-2) over the features, per hop a [P, H] x [H, H] bmm, .sum over hops, / clamp(distance).
  Tensor shift({V + 1, V}, DType::F64), index({P * K * Fe}, DType::I64), div({P, 1}, DType::F64);
  for (int64_t v = 0; v < V; ++v) shift.data<double>()[(v + 1) * V + v] = 1;
  for (int64_t p = 0; p < P; ++p)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t f = 0; f < Fe; ++f)
        index.data<int64_t>()[(p * K + k) * Fe + f] = ei.data<int64_t>()[(p * Kin + k) * Fe + f] + 1;
  for (int64_t p = 0; p < P; ++p)
    div.data<double>()[p] = 1.0 / static_cast<double>(std::clamp<int64_t>(dist[p], 1, K));
  Variable padded = matmul(Variable(shift), table2);
  Variable hops = reshape(meanAxis(reshape(embedding(padded, index), {P * K, Fe, H}), 1), {P, K, H});
  Variable perHop = bmm(permute(hops, {1, 0, 2}), w2);  // [K, P, H]
  Variable composed = mul(sumAxis(perHop, 0), Variable(div));
  sum(mul(composed, Variable(r))).backward();
  expectClose(fused.value(), composed.value(), 1e-12, "value");
  expectClose(table.grad(), table2.grad(), 1e-12, "gradient of the table");
  expectClose(w.grad(), w2.grad(), 1e-12, "gradient of the hop weights");
  for (int64_t c = 0; c < H; ++c) {
    EXPECT_EQ(fused.value().at(0 * H + c), 0.0) << "padding pair";
    EXPECT_EQ(fused.value().at(5 * H + c), 0.0) << "unreachable pair";
  }
}

TEST(MultiHopEdgeBias, ValuesOutsideTheTableAreReportedByPairHopAndFeature) {
  // V = 4 rows, K = 2 hop weights read from Kin = 3 hops: a bad value in a read hop, one below -1, and one in
  // the unread third hop are each reported with where it is; nothing is read through them.
  const int64_t V = 4, H = 2, K = 2, Kin = 3, Fe = 2, P = 3;
  Variable table(randomTensor({V, H}, 31)), w(randomTensor({K, H, H}, 32));
  Tensor sp = Tensor::fromVector<int64_t>({1, 2, 2}, {P});
  auto message = [&](int64_t at, int64_t value) {
    Tensor ei = Tensor::full({P, Kin, Fe}, -1.0, DType::I64);
    ei.data<int64_t>()[0] = 1;  // a valid value before the bad one
    ei.data<int64_t>()[at] = value;
    try {
      multiHopEdgeBias(table, w, ei, sp);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const int64_t pair2hop1f1 = (2 * Kin + 1) * Fe + 1, pair1hop2f0 = (1 * Kin + 2) * Fe + 0;
  EXPECT_NE(message(pair2hop1f1, V).find("edgeInput value 4 at pair 2 hop 1 feature 1 is outside [-1, 4)"),
            std::string::npos)
      << message(pair2hop1f1, V);
  EXPECT_NE(message(pair2hop1f1, -2).find("value -2 at pair 2 hop 1 feature 1"), std::string::npos);
  EXPECT_NE(message(pair1hop2f0, 99).find("value 99 at pair 1 hop 2 feature 0"), std::string::npos);
  EXPECT_EQ(message(pair2hop1f1, V - 1), "no error");
}

TEST(ToDenseBatch, LayoutByHand) {
  // Graphs of 2 and 1 nodes, then a padding graph of 2 nodes; blocks of 1 + 3 rows.
  Tensor x = Tensor::fromVector<double>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {5, 2});
  Tensor ptr = Tensor::fromVector<int64_t>({0, 2, 3, 5}), mask = Tensor::fromVector<uint8_t>({1, 1, 0});
  Tensor y = toDenseBatch(Variable(x), ptr, mask, 3, Variable(Tensor::fromVector<double>({-1, -2}))).value();
  ASSERT_EQ(y.shape(), Shape({3, 4, 2}));
  const std::vector<double> expect{-1, -2, 1, 2, 3, 4, 0, 0,  //
                                   -1, -2, 5, 6, 0, 0, 0, 0,  //
                                   -1, -2, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.at(i), expect[i]) << i;
  EXPECT_THROW(toDenseBatch(Variable(x), ptr, mask, 1), std::invalid_argument);  // graph 0 has 2 nodes
}

TEST(GraphAttentionBias, LayoutByHand) {
  // One graph of M = 2, H = 2: pair (i, j) head h = 10 i + j + 100 h; token distances 7 and 8.
  std::vector<double> pair;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int h = 0; h < 2; ++h) pair.push_back(10 * i + j + 100 * h);
  Tensor y = graphAttentionBias(Variable(Tensor::fromVector(pair, {1, 2, 2, 2})),
                                Variable(Tensor::fromVector<double>({7, 8})))
                 .value();
  const std::vector<double> expect{7, 7, 7, 7, 0,   1,   7, 10,  11,  //
                                   8, 8, 8, 8, 100, 101, 8, 110, 111};
  ASSERT_EQ(y.shape(), Shape({1, 2, 3, 3}));
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.at(i), expect[i]) << i;
}

}  // namespace
}  // namespace gnn
