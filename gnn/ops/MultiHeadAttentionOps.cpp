// Multi-head self-attention fused into one op per batch (multiHeadAttention, multiHeadAttentionPacked): per
// (sequence, head) item Q K^T, the biased and masked softmax and P V in scratch rows, with its backward.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gnn/kernels/MaskedRow.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {

// Scratch rows are padded to whole vectors (16 elements: one AVX-512 register of floats) so the inner loops
// below vectorise without remainders, and every (sequence, head) item runs the same instructions on the same
// aligned layout: an item's result depends only on its own inputs, never on where it sits in the batch.
constexpr int64_t kPad = 16;
int64_t padded(int64_t n) {
  return (n + kPad - 1) / kPad * kPad;
}

// One item's working set: T queries of head width d, keys and values, scores / probabilities [T, Tp].
template <class T>
struct AttentionScratch {
  using Buf = Eigen::Matrix<T, Eigen::Dynamic, 1>;  // 64-byte aligned (Eigen's allocator)
  int64_t t, d, tp, dp;
  Buf q, k, kt, v, vt, p, keep, off, drop, go, gp, gq, gk, gv;
  AttentionScratch(int64_t t_, int64_t d_) : t(t_), d(d_), tp(padded(t_)), dp(padded(d_)) {
    // Rows padded to tp too: the products run over blocks of 4 rows (padding rows stay zero or are ignored).
    for (Buf* b : {&q, &k, &v, &go, &gq, &gk, &gv}) b->setZero(tp * dp);
    for (Buf* b : {&kt, &vt}) b->setZero(d * tp);
    for (Buf* b : {&p, &drop, &gp}) b->setZero(tp * tp);
    keep.setZero(tp);
    off.setZero(tp);
  }
};

// (sequence, head) items per parallel chunk: each chunk sets up (allocates and zeroes) one scratch, so chunks
// hold up to 16 items while there are at least 16 chunks. Items are independent: the cut changes no result.
int64_t itemChunk(int64_t items, int64_t workPerItem) {
  return evenChunk(items, std::max(grainFor(workPerItem), std::min<int64_t>(16, items / 16)));
}

// What one item computes: keys after the last kept one are never read, so only the first n keys and queries
// (n4 rounded up to whole blocks of 4 rows, tp to whole vectors) are; keep / off in the scratch mark the kept
// keys (1 / 0 and 0 / -inf). A query whose own key is masked gets a zero row.
struct Extent {
  int64_t n, n4, tp;
};
template <class T>
Extent extentOf(const uint8_t* km, int64_t t, AttentionScratch<T>& s) {
  int64_t n = t;
  if (km) {
    n = 0;
    for (int64_t j = 0; j < t; ++j)
      if (km[j]) n = j + 1;
  }
  const Extent x{n, (n + 3) / 4 * 4, padded(n)};
  for (int64_t j = 0; j < x.tp; ++j) {
    const bool kept = j < n && (!km || km[j]);
    s.keep[j] = kept ? T(1) : T(0);
    s.off[j] = kept ? T(0) : -std::numeric_limits<T>::infinity();
  }
  return x;
}
// Zeroes rows [0, n4) of p [., tp] whose query is masked or past n.
template <class T>
void zeroMaskedRows(T* p, int64_t tp, int64_t n4, int64_t n, const uint8_t* km) {
  for (int64_t i = 0; i < n4; ++i)
    if (i >= n || (km && !km[i])) std::fill(p + i * tp, p + (i + 1) * tp, T(0));
}

// The first `rows` rows of a [rows, cols] block with row stride `stride` (a head's columns of a [T, 3E] or
// [T, E] row set), times scale, into rows of dstStride elements (columns cols .. dstStride - 1 get zeros).
template <class T>
void loadRows(const T* src, int64_t stride, int64_t rows, int64_t cols, T* dst, int64_t dstStride,
              T scale = T(1)) {
  for (int64_t i = 0; i < rows; ++i)
    kernels::copyRowMasked(src + i * stride, cols, dst + i * dstStride, dstStride, scale);
}
template <class T>
void loadTransposed(const T* src, int64_t stride, int64_t rows, int64_t cols, T* dst, int64_t dstStride) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < cols; ++c) dst[c * dstStride + i] = src[i * stride + c];
}
// rows x cols of src (row stride srcStride) into dst (row stride `stride`), times scale, for the first
// `valid` rows; rows valid .. rows - 1 of dst get zeros.
template <class T>
void storeRows(const T* src, int64_t srcStride, int64_t valid, int64_t rows, int64_t cols, T* dst,
               int64_t stride, T scale = T(1)) {
  for (int64_t i = 0; i < rows; ++i)
    kernels::copyRowMasked(src + i * srcStride, i < valid ? cols : 0, dst + i * stride, cols, scale);
}
// An item's [n, n] block of src (row stride tp) as the [t, t] block at dst, zero outside.
template <class T>
void storeBlock(const T* src, int64_t tp, int64_t n, int64_t t, T* dst) {
  for (int64_t i = 0; i < t; ++i) kernels::copyRowMasked(src + i * tp, i < n ? n : 0, dst + i * t, t);
}
// The [n, n] corner of a [t, t] block into rows [0, n4) of dst (row stride tp), zero elsewhere.
template <class T>
void loadBlock(const T* src, int64_t t, int64_t n, int64_t n4, int64_t tp, T* dst) {
  for (int64_t i = 0; i < n4; ++i)
    kernels::copyRowMasked(i < n ? src + i * t : src, i < n ? n : 0, dst + i * tp, tp);
}
// Zeroes rows [from, to) of a buffer of row stride `stride` (rows past an item's n keep no stale values).
template <class T>
void zeroRows(T* p, int64_t stride, int64_t from, int64_t to) {
  std::fill(p + from * stride, p + to * stride, T(0));
}
// Zeroes columns [from, stride) of the first `rows` rows.
template <class T>
void zeroColumns(T* p, int64_t stride, int64_t rows, int64_t from) {
  for (int64_t i = 0; i < rows; ++i) std::fill(p + i * stride + from, p + (i + 1) * stride, T(0));
}
template <class T>
void multiplyInto(T* __restrict a, const T* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] *= b[i];
}

// R rows x C vectors of kPad columns of out = a b (rowStep / colStep apart in a, kPad columns per vector in b
// and out), summed over j < m: the block's accumulators stay in registers while j runs, R x C independent
// chains of fused multiply-adds (so they are not waiting on each other), each output summing in increasing j.
template <int R, int C, class T>
GNN_CPU_CLONES void productBlock(const T* __restrict a, int64_t rowStep, int64_t colStep,
                                 const T* __restrict b, int64_t ldb, int64_t m, T* __restrict out,
                                 int64_t ldo) {
  T acc[R][C * kPad] = {};
  for (int64_t j = 0; j < m; ++j) {
    const T* __restrict br = b + j * ldb;
    for (int r = 0; r < R; ++r) {
      const T s = a[r * rowStep + j * colStep];
#pragma omp simd
      for (int64_t c = 0; c < C * kPad; ++c) acc[r][c] = ops::mulAdd(s, br[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) std::copy(acc[r], acc[r] + C * kPad, out + r * ldo);
}
// out[i, :n] = sum over j < m of a(i, j) * b[j, :n] for i < rows, where a(i, j) is a[i * rowStep + j *
// colStep] (a, or a transposed); rows a multiple of 4 and n of kPad. Blocks of 4 rows x 2 vectors, or 8 rows
// x 1 vector where the columns are one vector wide: 8 chains either way. Every output is the same sum in the
// same order whichever block computes it.
template <class T>
void productOf(const T* a, int64_t rowStep, int64_t colStep, const T* b, int64_t ldb, int64_t rows, int64_t m,
               int64_t n, T* out, int64_t ldo) {
  int64_t c0 = 0;
  for (; c0 + 2 * kPad <= n; c0 += 2 * kPad)
    for (int64_t i = 0; i < rows; i += 4)
      productBlock<4, 2>(a + i * rowStep, rowStep, colStep, b + c0, ldb, m, out + i * ldo + c0, ldo);
  if (c0 == n) return;
  int64_t i = 0;
  for (; i + 8 <= rows; i += 8)
    productBlock<8, 1>(a + i * rowStep, rowStep, colStep, b + c0, ldb, m, out + i * ldo + c0, ldo);
  if (i < rows)
    productBlock<4, 1>(a + i * rowStep, rowStep, colStep, b + c0, ldb, m, out + i * ldo + c0, ldo);
}
// out[i, :n] = sum over j < m of a[i, j] * b[j, :n] for i < rows (a [rows, lda], b [m, ldb], out [rows,
// ldo]); rows a multiple of 4 and n of kPad.
template <class T>
void productRows(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t rows, int64_t m, int64_t n, T* out,
                 int64_t ldo) {
  productOf(a, lda, 1, b, ldb, rows, m, n, out, ldo);
}
// out[j, :n] = sum over i < rows of a[i, j] * b[i, :n] for j < m (a multiple of 4): a^T b, the same way.
template <class T>
void productTransposed(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t rows, int64_t m, int64_t n,
                       T* out, int64_t ldo) {
  productOf(a, 1, lda, b, ldb, m, rows, n, out, ldo);
}

// Softmax of each of the `rows` rows of z [rows, tp] over the kept columns (keep 1 / 0, off 0 / -inf), in
// place: masked and padding columns get exactly 0, and with nothing kept every row is 0 (as softmax). Plain
// arithmetic over whole padded rows, and one exp over the block, so all of it vectorises.
template <class T>
GNN_CPU_CLONES void softmaxRows(T* __restrict z, int64_t rows, int64_t tp, const T* __restrict keep,
                                const T* __restrict off) {
  bool any = false;
  for (int64_t j = 0; j < tp; ++j) any = any || keep[j] != T(0);
  if (!any) {
    std::fill(z, z + rows * tp, T(0));
    return;
  }
  for (int64_t i = 0; i < rows; ++i) {
    T* __restrict r = z + i * tp;
    T mx = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : mx)
    for (int64_t j = 0; j < tp; ++j) mx = std::max(mx, r[j] + off[j]);
#pragma omp simd
    for (int64_t j = 0; j < tp; ++j) r[j] = (r[j] - mx) * keep[j];  // masked: exp(0), then times 0
  }
  ops::vectorBlocks(rows * tp, [](auto v) { return v.exp(); }, z, static_cast<const T*>(z));
  for (int64_t i = 0; i < rows; ++i) {
    T* __restrict r = z + i * tp;
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < tp; ++j) sum += (r[j] *= keep[j]);
#pragma omp simd
    for (int64_t j = 0; j < tp; ++j) r[j] /= sum;
  }
}

// The kept-and-scaled dropout factors of one item's [T, T] probabilities, for its first n rows (row stride
// tp): element (i, j) is element first + ((item * T + i) * T + j) of the draw, exactly as dropoutMask lays
// out a [B, H, T, T] mask (four 16-bit draws per 64-bit counter). Columns n .. tp - 1 get factors too, from
// draws past the row's (0 or the scale, never read: the probabilities there are 0). words and draws are
// scratch.
template <class T>
GNN_CPU_CLONES void dropoutFactors(const Generator& gen, uint64_t first, int64_t item, int64_t t, int64_t n,
                                   int64_t tp, uint32_t threshold, T keep, T* out,
                                   std::vector<uint64_t>& words, std::vector<uint16_t>& draws) {
  const uint64_t n0 = static_cast<uint64_t>(item * t * t), n1 = n0 + static_cast<uint64_t>((n - 1) * t + n);
  const uint64_t c0 = n0 / 4, c1 = (n1 + 3) / 4;
  const Generator g = gen;  // a local copy: the stores below cannot alias its key
  words.resize(static_cast<size_t>(c1 - c0));
  uint64_t* w = words.data();
  for (uint64_t c = c0; c < c1; ++c) w[c - c0] = g.bits(first + c);  // independent counters: vectorises
  // The 16-bit draws in element order (element e uses bits 16 * (e % 4) of its counter: little-endian order),
  // and tp past the last row's start, so that every row is read as whole vectors.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "dropout draws assume a little-endian machine");
  const size_t used = 4 * words.size(), start = static_cast<size_t>(n0 - 4 * c0);
  draws.resize(std::max(used, start + static_cast<size_t>((n - 1) * t + tp)));
  std::memcpy(draws.data(), w, 8 * words.size());
  std::fill(draws.begin() + static_cast<std::ptrdiff_t>(used), draws.end(), uint16_t(0));
  const uint16_t* __restrict un = draws.data() + start;
  for (int64_t i = 0; i < n; ++i) {
    T* __restrict o = out + i * tp;
    const uint16_t* __restrict ur = un + i * t;
#pragma omp simd
    for (int64_t j = 0; j < tp; ++j) o[j] = static_cast<uint32_t>(ur[j]) >= threshold ? keep : T(0);
  }
}

// Where each sequence's rows are in the op's [R, 3E] input and [R, E] output: dense blocks of T rows (row
// g·T + i, keys kept by an optional [G, T] mask; all T rows written) or packed rows (from ptr[g] up to
// ptr[g + 1], all kept, at most T of them).
struct SequenceRows {
  int64_t t = 0;
  const int64_t* ptr = nullptr;   // packed: [G + 1] row offsets
  const uint8_t* mask = nullptr;  // dense: [G, T] key mask, or none
  int64_t start(int64_t g) const { return ptr ? ptr[g] : g * t; }
  int64_t span(int64_t g) const { return ptr ? ptr[g + 1] - ptr[g] : t; }
  const uint8_t* keys(int64_t g) const { return mask ? mask + g * t : nullptr; }
};

// What the forward and the backward of one attention call share: B sequences of up to T rows, H heads of
// width d (E = H d, E3 = 3E), q's scale 1 / sqrt(d), and the dropout (its stream, first counter, threshold
// and the kept probabilities' factor 1 / (1 - p)).
template <class T_>
struct AttentionSetup {
  int64_t B, T, H, d, E, E3;
  T_ scale;
  bool drop;
  Generator gen;
  uint64_t first;
  uint32_t threshold;
  T_ keepScale;
};

// The forward over every (sequence, head) item: X [R, 3E] (xp) and the optional [B, H, T, T] bias (bp) into
// the output [R, E] (yp) and, when pp is not null, the probabilities [B, H, T, T] the backward reads.
template <class T_>
void attentionForward(const AttentionSetup<T_>& a, const SequenceRows& seq, const T_* xp, const T_* bp, T_* yp,
                      T_* pp) {
  const int64_t B = a.B, T = a.T, H = a.H, d = a.d, E = a.E, E3 = a.E3;
  const T_ scale = a.scale, keepScale = a.keepScale;
  const bool drop = a.drop;
  const Generator& gen = a.gen;
  const uint64_t first = a.first;
  const uint32_t threshold = a.threshold;
  parallelFor(B * H, itemChunk(B * H, 4 * T * T * d + 20 * T * T), [&](int64_t lo, int64_t hi) GNN_CPU_CLONES {
    AttentionScratch<T_> s(T, d);
    std::vector<uint64_t> words;
    std::vector<uint16_t> draws;
    const int64_t dp = s.dp;
    for (int64_t item = lo; item < hi; ++item) {
      const int64_t b = item / H, h = item % H, row = seq.start(b), span = seq.span(b);
      const uint8_t* km = seq.keys(b);
      const Extent x = extentOf(km, span, s);
      T_* out = yp + row * E + h * d;
      if (x.n == 0) {  // nothing to attend to: zeros
        storeRows(s.go.data(), dp, 0, span, d, out, E);
        if (pp) std::fill(pp + item * T * T, pp + (item + 1) * T * T, T_(0));
        continue;
      }
      const int64_t n = x.n, n4 = x.n4, tp = x.tp;
      const T_* rows = xp + row * E3 + h * d;
      loadRows(rows, E3, n, d, s.q.data(), dp, scale);  // q / sqrt(d), as Graphormer scales q first
      zeroRows(s.q.data(), dp, n, n4);
      loadTransposed(rows + E, E3, n, d, s.kt.data(), tp);
      zeroColumns(s.kt.data(), tp, d, n);
      loadRows(rows + 2 * E, E3, n, d, s.v.data(), dp);
      // Scores q k^T (+ bias), their softmax over the kept keys, zero rows for masked queries.
      productRows(s.q.data(), dp, s.kt.data(), tp, n4, d, tp, s.p.data(), tp);
      if (bp) {
        const T_* br = bp + item * T * T;
        for (int64_t i = 0; i < n; ++i) kernels::addRowPrefix(br + i * T, n, s.p.data() + i * tp);
      }
      softmaxRows(s.p.data(), n4, tp, s.keep.data(), s.off.data());
      zeroMaskedRows(s.p.data(), tp, n4, n, km);
      if (pp) storeBlock(s.p.data(), tp, n, T, pp + item * T * T);
      const T_* probs = s.p.data();
      if (drop) {
        dropoutFactors(gen, first, item, T, n, tp, threshold, keepScale, s.drop.data(), words, draws);
        multiplyInto(s.drop.data(), s.p.data(), n4 * tp);
        probs = s.drop.data();
      }
      productRows(probs, tp, s.v.data(), dp, n4, n, dp, s.go.data(), dp);
      storeRows(s.go.data(), dp, n, span, d, out, E);
    }
  });
}

// The backward over every item: from X (xp), the saved probabilities (pp) and the output's gradient (gyp),
// X's gradient [R, 3E] (gxp) and the bias's [B, H, T, T] (gbp), each only when not null.
template <class T_>
void attentionBackward(const AttentionSetup<T_>& a, const SequenceRows& seq, const T_* xp, const T_* pp,
                       const T_* gyp, T_* gxp, T_* gbp) {
  const int64_t B = a.B, T = a.T, H = a.H, d = a.d, E = a.E, E3 = a.E3;
  const T_ scale = a.scale, keepScale = a.keepScale;
  const bool drop = a.drop;
  const Generator& gen = a.gen;
  const uint64_t first = a.first;
  const uint32_t threshold = a.threshold;
  parallelFor(B * H, itemChunk(B * H, 8 * T * T * d + 10 * T * T), [&](int64_t lo, int64_t hi) GNN_CPU_CLONES {
    AttentionScratch<T_> s(T, d);
    std::vector<uint64_t> words;
    std::vector<uint16_t> draws;
    const int64_t dp = s.dp;
    typename AttentionScratch<T_>::Buf dropped;
    if (drop) dropped.setZero(s.tp * s.tp);
    using Row = Eigen::Map<Eigen::Array<T_, Eigen::Dynamic, 1>, Eigen::Aligned64>;
    for (int64_t item = lo; item < hi; ++item) {
      const int64_t b = item / H, h = item % H, row = seq.start(b), span = seq.span(b);
      const Extent x = extentOf(seq.keys(b), span, s);
      T_* gout = gxp ? gxp + row * E3 + h * d : nullptr;
      if (x.n == 0) {
        if (gbp) std::fill(gbp + item * T * T, gbp + (item + 1) * T * T, T_(0));
        if (gout)
          for (int64_t part = 0; part < 3; ++part)
            storeRows(s.gq.data(), dp, 0, span, d, gout + part * E, E3);
        continue;
      }
      const int64_t n = x.n, n4 = x.n4, tp = x.tp;
      const T_* rows = xp + row * E3 + h * d;
      loadRows(rows, E3, n, d, s.q.data(), dp, scale);
      zeroRows(s.q.data(), dp, n, n4);
      loadRows(rows + E, E3, n, d, s.k.data(), dp);
      loadTransposed(rows + 2 * E, E3, n, d, s.vt.data(), tp);
      zeroColumns(s.vt.data(), tp, d, n);
      loadRows(gyp + row * E + h * d, E, n, d, s.go.data(), dp);
      zeroRows(s.go.data(), dp, n, n4);
      loadBlock(pp + item * T * T, T, n, n4, tp, s.p.data());
      // The probabilities that multiplied v: p, or p times the dropout factors.
      const T_* probs = s.p.data();
      if (drop) {
        dropoutFactors(gen, first, item, T, n, tp, threshold, keepScale, s.drop.data(), words, draws);
        Row(dropped.data(), n4 * tp) = Row(s.p.data(), n4 * tp) * Row(s.drop.data(), n4 * tp);
        probs = dropped.data();
      }
      // dv = probs^T dy; d probs = dy v^T, back through the dropout factors to dp.
      productTransposed(probs, tp, s.go.data(), dp, n4, n4, dp, s.gv.data(), dp);
      productRows(s.go.data(), dp, s.vt.data(), tp, n4, d, tp, s.gp.data(), tp);
      if (drop) multiplyInto(s.gp.data(), s.drop.data(), n4 * tp);
      // Softmax: d scores = p * (dp - sum(p * dp)) per row; 0 where p is 0 (masked, padding).
      for (int64_t i = 0; i < n4; ++i) {
        Row pr(s.p.data() + i * tp, tp), gr(s.gp.data() + i * tp, tp);
        const T_ dot = (pr * gr).sum();
        gr = pr * (gr - dot);
      }
      if (gbp) storeBlock(s.gp.data(), tp, n, T, gbp + item * T * T);
      if (!gout) continue;
      // scores = (q / sqrt(d)) k^T: dq = d scores k / sqrt(d), dk = d scores^T (q / sqrt(d)).
      productRows(s.gp.data(), tp, s.k.data(), dp, n4, n, dp, s.gq.data(), dp);
      productTransposed(s.gp.data(), tp, s.q.data(), dp, n4, n4, dp, s.gk.data(), dp);
      storeRows(s.gq.data(), dp, n, span, d, gout, E3, scale);
      storeRows(s.gk.data(), dp, n, span, d, gout + E, E3);
      storeRows(s.gv.data(), dp, n, span, d, gout + 2 * E, E3);
    }
  });
}

// The fused attention over G sequences (dense or packed, `rows`); X [R, 3E] viewed flat, the output shaped
// `outShape`; `keep` is what the backward needs of `rows` (the mask or ptr tensor).
Variable attention(const Variable& qkv, int64_t G, int64_t T, int64_t heads, const Variable& bias,
                   const SequenceRows& seq, const Tensor& keep, const Shape& outShape, double dropoutP,
                   bool training) {
  const Tensor& X = qkv.value();
  const int64_t B = G, E3 = X.dim(X.rank() - 1), E = E3 / 3, H = heads, d = E / H;
  const bool hasBias = bias.defined();
  const bool drop = training && dropoutP > 0;
  // The same stream and layout as dropout(softmax(...)) on a [B, H, T, T] tensor (ElementwiseOps.cpp).
  Generator gen;
  uint64_t first = 0;
  if (drop) {
    gen = ExecutionContext::current().nextRandomStream();
    first = gen.reserve(Generator::dropoutCounters(static_cast<uint64_t>(B * H * T * T)));
  }
  const uint32_t threshold = Generator::dropoutThreshold(dropoutP);
  const double scaleD = 1.0 / std::sqrt(static_cast<double>(d));
  const bool keepP = gradEnabled() && (qkv.requiresGrad() || (hasBias && bias.requiresGrad()));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T_ = std::remove_pointer_t<decltype(tag)>;
    const T_ scale = static_cast<T_>(scaleD), keepScale = static_cast<T_>(1 / (1 - dropoutP));
    Tensor Y = Tensor::empty(outShape, X.dtype());
    Tensor P = keepP ? Tensor::empty({B, H, T, T}, X.dtype()) : Tensor();
    const T_* xp = X.data<T_>();
    const T_* bp = hasBias ? bias.value().data<T_>() : nullptr;
    T_* yp = Y.data<T_>();
    T_* pp = keepP ? P.data<T_>() : nullptr;
    const AttentionSetup<T_> a{B, T, H, d, E, E3, scale, drop, gen, first, threshold, keepScale};
    attentionForward(a, seq, xp, bp, yp, pp);
    std::vector<Variable> inputs{qkv};
    if (hasBias) inputs.push_back(bias);
    const int64_t items = B * H, tt = T * T;
    const int64_t elem = static_cast<int64_t>(sizeof(T_));
    // Costs of the whole [T, T] blocks (what a device computing them all would do), though keys after the
    // last kept one are skipped here.
    OpInfo info{"multiHeadAttention", items * (4 * tt * d + 8 * tt + (drop ? tt : 0)),
                static_cast<int64_t>(X.nbytes()) + (hasBias ? items * tt * elem : 0) +
                    static_cast<int64_t>(keep.nbytes()),
                static_cast<int64_t>(Y.nbytes()) + (keepP ? items * tt * elem : 0),
                items * (8 * tt * d + 6 * tt + (drop ? 2 * tt : 0))};
    return Variable::record(
        info, Y, std::move(inputs), {X, P, keep},
        [a, packed = seq.ptr != nullptr](const Tensor& gy, std::vector<GradInput>& in,
                                         const std::vector<Tensor>& saved) {
          const Tensor &X = saved[0], &P = saved[1], &K = saved[2];
          SequenceRows seq;
          seq.t = a.T;
          if (packed)
            seq.ptr = K.data<int64_t>();
          else if (K.defined())
            seq.mask = K.data<uint8_t>();
          const bool needX = in[0].requiresGrad(), needBias = in.size() > 1 && in[1].requiresGrad();
          Tensor GX = needX ? Tensor::empty(X.shape(), X.dtype()) : Tensor();
          Tensor GB = needBias ? Tensor::empty(in[1].shape(), X.dtype()) : Tensor();
          attentionBackward(a, seq, X.data<T_>(), P.data<T_>(), gy.data<T_>(), needX ? GX.data<T_>() : nullptr,
                            needBias ? GB.data<T_>() : nullptr);
          if (needX) in[0].addGrad(GX);
          if (needBias) in[1].addGrad(GB);
        });
  });
}

void checkAttentionInputs(const char* op, const Tensor& X, int64_t G, int64_t T, int64_t heads,
                          const Variable& bias, double dropoutP) {
  const int64_t E3 = X.dim(X.rank() - 1);
  GNN_CHECK_ARG(heads >= 1 && E3 % (3 * heads) == 0, op, ": qkv's last dimension ", E3, " is not 3 x heads (",
                heads, ") x head size");
  if (bias.defined())
    GNN_CHECK_ARG(bias.value().shape() == Shape({G, heads, T, T}) && bias.dtype() == X.dtype(), op,
                  ": bias must be ", dtypeName(X.dtype()), " ", shapeString({G, heads, T, T}), ", got ",
                  dtypeName(bias.dtype()), " ", shapeString(bias.shape()));
  GNN_CHECK_ARG(dropoutP >= 0 && dropoutP < 1, op, ": dropout must be in [0, 1), got ", dropoutP);
}

}  // namespace

Variable multiHeadAttention(const Variable& qkv, int64_t heads, const Variable& bias, const Tensor& keyMask,
                            double dropoutP, bool training) {
  const Tensor& X = qkv.value();
  GNN_CHECK_ARG(X.rank() == 3 && X.isFloating(), "multiHeadAttention: qkv must be a float [B, T, 3E], got ",
                dtypeName(X.dtype()), " ", shapeString(X.shape()));
  const int64_t B = X.dim(0), T = X.dim(1);
  checkAttentionInputs("multiHeadAttention", X, B, T, heads, bias, dropoutP);
  if (keyMask.defined())
    GNN_CHECK_ARG(keyMask.shape() == Shape({B, T}) && keyMask.dtype() == DType::U8,
                  "multiHeadAttention: keyMask must be uint8 ", shapeString({B, T}), ", got ",
                  dtypeName(keyMask.dtype()), " ", shapeString(keyMask.shape()));
  SequenceRows seq;
  seq.t = T;
  seq.mask = keyMask.defined() ? keyMask.data<uint8_t>() : nullptr;
  return attention(qkv, B, T, heads, bias, seq, keyMask, {B, T, X.dim(2) / 3}, dropoutP, training);
}

Variable multiHeadAttentionPacked(const Variable& qkv, int64_t heads, const Tensor& rowPtr, int64_t maxRows,
                                  const Variable& bias, double dropoutP, bool training) {
  const Tensor& X = qkv.value();
  GNN_CHECK_ARG(X.rank() == 2 && X.isFloating(),
                "multiHeadAttentionPacked: qkv must be a float [R, 3E], got ", dtypeName(X.dtype()), " ",
                shapeString(X.shape()));
  GNN_CHECK_ARG(rowPtr.rank() == 1 && rowPtr.dim(0) >= 2 && rowPtr.dtype() == DType::I64,
                "multiHeadAttentionPacked: rowPtr must be int64 [G + 1] with G >= 1, got ",
                dtypeName(rowPtr.dtype()), " ", shapeString(rowPtr.shape()));
  GNN_CHECK_ARG(maxRows >= 1, "multiHeadAttentionPacked: maxRows must be at least 1, got ", maxRows);
  const int64_t G = rowPtr.dim(0) - 1, T = maxRows;
  const int64_t* ptr = rowPtr.data<int64_t>();
  GNN_CHECK_ARG(ptr[0] == 0 && ptr[G] == X.dim(0), "multiHeadAttentionPacked: rowPtr runs from ", ptr[0],
                " to ", ptr[G], ", not from 0 to qkv's ", X.dim(0), " rows");
  for (int64_t g = 0; g < G; ++g)
    GNN_CHECK_ARG(ptr[g + 1] >= ptr[g] && ptr[g + 1] - ptr[g] <= T, "multiHeadAttentionPacked: sequence ", g,
                  " has ", ptr[g + 1] - ptr[g], " rows (rowPtr ", ptr[g], " .. ", ptr[g + 1],
                  "), not 0 .. maxRows ", T);
  checkAttentionInputs("multiHeadAttentionPacked", X, G, T, heads, bias, dropoutP);
  SequenceRows seq;
  seq.t = T;
  seq.ptr = ptr;
  return attention(qkv, G, T, heads, bias, seq, rowPtr, {X.dim(0), X.dim(1) / 3}, dropoutP, training);
}
}  // namespace gnn
