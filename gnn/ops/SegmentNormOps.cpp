// Normalisation within segments of rows (the graphs of a batch): PyG's GraphNorm and InstanceNorm (statistics per
// graph and column) and LayerNorm(mode="graph") (one mean and variance per graph over all its rows and columns).
//
// For a segment's statistic with n real rows (n F in whole-segment mode), a the mean scale (1 but for GraphNorm):
//   m = sum(x) / n,  o = x - a m,  v = sum(o^2) / n,  r = 1 / sqrt(v + eps)  (or 1 / (sqrt(v) + eps)),
//   y = o r gamma + beta,
// sums over real rows only; padding rows are normalised with their segment's statistics but never enter them.
// Backward with dh = gamma dy, S1 = sum(dh), S2 = sum(dh h) over every row of the segment, k = dv-scale
// (1, or (sqrt(v) + eps) / sqrt(v) with eps on the standard deviation), D = r S1 - r^2 k S2 m (1 - a):
//   dx = r dh - r k S2 h / n - a D / n  (real rows),  dx = r dh (padding rows),  d a = -m D.
//
// Determinism: sums run over fixed pieces of rows and add the pieces in order (segmentColumnFold), so the bits depend
// on neither the thread count nor padding rows and segments after the real ones.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

// out[s, j] = the fold step(acc, i, j, s) over the rows i of segment s (those with keep[i] != 0 when keep is
// given), from 0. A segment is cut at fixed row boundaries (multiples of a chunk that depends on F only), each piece
// folds its rows in order into its own partial row, and a segment's pieces are added in order: one large graph
// (PyG's norms called without a batch vector) still runs on every thread, and the bits depend neither on the
// thread count nor on padding rows after the real ones (their pieces add zeros).
template <class T, class Step>
void segmentColumnFold(const int64_t* ptr, int64_t S, int64_t F, const uint8_t* keep, T* out, Step&& step) {
  struct Piece {
    int64_t s, begin, end;
  };
  const int64_t chunk = grainFor(F, 16);
  std::vector<Piece> pieces;
  std::vector<int64_t> first(static_cast<size_t>(S) + 1);
  for (int64_t s = 0; s < S; ++s) {
    first[s] = static_cast<int64_t>(pieces.size());
    for (int64_t b = ptr[s]; b < ptr[s + 1]; b = (b / chunk + 1) * chunk)
      pieces.push_back({s, b, std::min(ptr[s + 1], (b / chunk + 1) * chunk)});
  }
  first[S] = static_cast<int64_t>(pieces.size());
  const int64_t P = first[S], rows = S > 0 ? ptr[S] : 0;
  std::vector<T> partial(static_cast<size_t>(P * F));
  parallelFor(P, grainFor(std::max<int64_t>(1, rows / std::max<int64_t>(P, 1)) * F),
              [&](int64_t b, int64_t e) GNN_CPU_CLONES {
                for (int64_t k = b; k < e; ++k) {
                  const Piece& pc = pieces[static_cast<size_t>(k)];
                  T* __restrict o = partial.data() + k * F;
                  for (int64_t i = pc.begin; i < pc.end; ++i) {
                    if (keep && !keep[i]) continue;
                    for (int64_t j = 0; j < F; ++j) step(o[j], i, j, pc.s);
                  }
                }
              });
  parallelFor(S, grainFor(F * std::max<int64_t>(1, P / std::max<int64_t>(S, 1))),
              [&](int64_t b, int64_t e) GNN_CPU_CLONES {
                for (int64_t s = b; s < e; ++s) {
                  T* __restrict o = out + s * F;
                  std::fill(o, o + F, T(0));
                  for (int64_t k = first[s]; k < first[s + 1]; ++k) {
                    const T* __restrict pk = partial.data() + k * F;
                    for (int64_t j = 0; j < F; ++j) o[j] += pk[j];
                  }
                }
              });
}

// Whole-segment mode: every v[s, j] becomes the sum over the columns of row s of v [S, F].
template <class T>
void sumAcrossColumns(T* v, int64_t S, int64_t F) {
  for (int64_t s = 0; s < S; ++s) {
    T t(0);
    for (int64_t j = 0; j < F; ++j) t += v[s * F + j];
    std::fill(v + s * F, v + (s + 1) * F, t);
  }
}

// The segment of each row.
std::vector<int64_t> rowSegments(const int64_t* ptr, int64_t S) {
  std::vector<int64_t> seg(static_cast<size_t>(S > 0 ? ptr[S] : 0));
  for (int64_t s = 0; s < S; ++s) std::fill(seg.begin() + ptr[s], seg.begin() + ptr[s + 1], s);
  return seg;
}

// The count each statistic of segment s divides by: its real rows (times F in whole-segment mode), at least 1
// (PyG's clamp(min=1): a segment without real rows gets mean 0 and variance 0).
std::vector<int64_t> divisors(const int64_t* ptr, int64_t S, const uint8_t* keep, int64_t per) {
  std::vector<int64_t> n(static_cast<size_t>(S));
  for (int64_t s = 0; s < S; ++s) {
    int64_t c = ptr[s + 1] - ptr[s];
    if (keep) c = static_cast<int64_t>(std::count_if(keep + ptr[s], keep + ptr[s + 1], [](uint8_t v) { return v; }));
    n[s] = std::max<int64_t>(c, 1) * per;
  }
  return n;
}

// x - a m, rounded once (a fused multiply-add) wherever the row sits: a product left to the compiler could be fused
// in the vector body and not in the remainder (see ops::mulAdd).
template <class T>
inline T centred(T x, const T* a, int64_t j, T m) {
  return a ? ops::mulAdd(-a[j], m, x) : x - m;
}

struct Dims {
  int64_t N, F, S;
};

// Statistics [3, S, F]: the mean m, r (1 / the scale), the biased variance v of x - a m.
template <class T>
void segmentStatistics(const T* xp, const Dims& d, const int64_t* ptr, const uint8_t* keep, const T* a,
                       const SegmentNormOptions& o, T* stats) {
  const int64_t F = d.F, SF = d.S * F;
  T* m = stats;
  T* r = stats + SF;
  T* v = stats + 2 * SF;
  const std::vector<int64_t> n = divisors(ptr, d.S, keep, o.wholeSegment ? F : 1);
  segmentColumnFold<T>(ptr, d.S, F, keep, m, [xp, F](T& acc, int64_t i, int64_t j, int64_t) { acc += xp[i * F + j]; });
  if (o.wholeSegment) sumAcrossColumns(m, d.S, F);
  for (int64_t s = 0; s < d.S; ++s)
    for (int64_t j = 0; j < F; ++j) m[s * F + j] /= static_cast<T>(n[s]);
  segmentColumnFold<T>(ptr, d.S, F, keep, v, [xp, F, m, a](T& acc, int64_t i, int64_t j, int64_t s) {
    const T dv = centred(xp[i * F + j], a, j, m[s * F + j]);
    acc = ops::mulAdd(dv, dv, acc);
  });
  if (o.wholeSegment) sumAcrossColumns(v, d.S, F);
  for (int64_t s = 0; s < d.S; ++s)
    for (int64_t j = 0; j < F; ++j) {
      T& vj = v[s * F + j];
      vj /= static_cast<T>(n[s]);
      r[s * F + j] = o.epsOnStd ? T(1) / (std::sqrt(vj) + static_cast<T>(o.eps))
                                : T(1) / std::sqrt(vj + static_cast<T>(o.eps));
    }
}

// y = (x - a m) r g + b for every row (g, b, a null: 1, 0, 1).
template <class T>
void normalizeSegmentRows(const T* xp, const Dims& d, const std::vector<int64_t>& seg, const T* stats, const T* a,
                          const T* g, const T* bb, T* yp) {
  const int64_t F = d.F, SF = d.S * F;
  parallelFor(d.N, grainFor(F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i) {
      const T* __restrict m = stats + seg[i] * F;
      const T* __restrict r = stats + SF + seg[i] * F;
      const T* __restrict xr = xp + i * F;
      T* __restrict yr = yp + i * F;
      for (int64_t j = 0; j < F; ++j) {
        const T h = centred(xr[j], a, j, m[j]) * r[j];
        yr[j] = g ? ops::mulAdd(h, g[j], bb ? bb[j] : T(0)) : h;
      }
    }
  });
}

// Which of the op's inputs are there, and their position among the recorded inputs (-1: absent).
struct Slots {
  int scale = -1, gamma = -1, beta = -1;
};

// The backward. saved: x, ptr, mask (or undefined), stats [3, S, F], mean scale, gamma (or undefined).
template <class T>
void segmentNormBackward(const SegmentNormOptions& o, const Slots& sl, const Tensor& gy, std::vector<GradInput>& in,
                         const std::vector<Tensor>& saved) {
  const Tensor &X = saved[0], &Ptr = saved[1], &Mask = saved[2], &Stats = saved[3], &A = saved[4], &G = saved[5];
  const Dims d{X.dim(0), X.dim(1), Ptr.numel() - 1};
  const int64_t F = d.F, SF = d.S * F;
  const T* xp = X.data<T>();
  const T* gyp = gy.data<T>();
  const int64_t* ptr = Ptr.data<int64_t>();
  const uint8_t* keep = Mask.defined() ? Mask.data<uint8_t>() : nullptr;
  const T* m = Stats.data<T>();
  const T* r = m + SF;
  const T* v = m + 2 * SF;
  const T* a = A.defined() ? A.data<T>() : nullptr;
  const T* g = G.defined() ? G.data<T>() : nullptr;
  // Per (segment, column) over every row: G1 = sum(dy), G2 = sum(dy h).
  std::vector<T> g1(static_cast<size_t>(SF)), g2(static_cast<size_t>(SF));
  segmentColumnFold<T>(ptr, d.S, F, nullptr, g1.data(),
                       [gyp, F](T& acc, int64_t i, int64_t j, int64_t) { acc += gyp[i * F + j]; });
  segmentColumnFold<T>(ptr, d.S, F, nullptr, g2.data(), [=](T& acc, int64_t i, int64_t j, int64_t s) {
    const T h = centred(xp[i * F + j], a, j, m[s * F + j]) * r[s * F + j];
    acc = ops::mulAdd(gyp[i * F + j], h, acc);
  });
  auto columnTotal = [&](const std::vector<T>& per, int slot) {
    if (slot < 0 || !in[static_cast<size_t>(slot)].requiresGrad()) return;
    Tensor t = Tensor::zeros({F}, X.dtype());
    T* tp = t.data<T>();
    for (int64_t s = 0; s < d.S; ++s)
      for (int64_t j = 0; j < F; ++j) tp[j] += per[static_cast<size_t>(s * F + j)];
    in[static_cast<size_t>(slot)].addGrad(t);
  };
  columnTotal(g1, sl.beta);
  columnTotal(g2, sl.gamma);
  const bool needX = in[0].requiresGrad(), needA = sl.scale >= 0 && in[static_cast<size_t>(sl.scale)].requiresGrad();
  if (!needX && !needA) return;
  // S1 = sum(g dy), S2 = sum(g dy h) per statistic.
  for (int64_t k = 0; k < SF; ++k) {
    const T gj = g ? g[k % F] : T(1);
    g1[static_cast<size_t>(k)] *= gj;
    g2[static_cast<size_t>(k)] *= gj;
  }
  if (o.wholeSegment) {
    sumAcrossColumns(g1.data(), d.S, F);
    sumAcrossColumns(g2.data(), d.S, F);
  }
  const std::vector<int64_t> n = divisors(ptr, d.S, keep, o.wholeSegment ? F : 1);
  // dx = cr dh - ch h - c0 on real rows (cr dh on padding rows); the mean scale's gradient -m D.
  std::vector<T> ch(static_cast<size_t>(SF)), c0(static_cast<size_t>(SF));
  Tensor gA = needA ? Tensor::zeros({F}, X.dtype()) : Tensor();
  for (int64_t s = 0; s < d.S; ++s)
    for (int64_t j = 0; j < F; ++j) {
      const int64_t k = s * F + j;
      const T nn = static_cast<T>(n[s]), aj = a ? a[j] : T(1), sd = std::sqrt(v[k]);
      // d(1 / (sd + eps)) = k d(1 / sqrt(v + eps))-like term with k = (sd + eps) / sd; a constant segment (sd = 0,
      // where torch's std has no derivative) or one without real rows takes k = 1 and stays finite.
      const T kv = o.epsOnStd && sd > T(0) ? (sd + static_cast<T>(o.eps)) / sd : T(1);
      const T S1 = g1[static_cast<size_t>(k)], S2 = g2[static_cast<size_t>(k)];
      const T D = r[k] * S1 - r[k] * r[k] * kv * S2 * m[k] * (T(1) - aj);
      ch[static_cast<size_t>(k)] = r[k] * kv * S2 / nn;
      c0[static_cast<size_t>(k)] = aj * D / nn;
      if (needA) gA.data<T>()[j] -= m[k] * D;
    }
  if (needA) in[static_cast<size_t>(sl.scale)].addGrad(gA);
  if (!needX) return;
  const std::vector<int64_t> seg = rowSegments(ptr, d.S);
  Tensor GX = Tensor::empty(X.shape(), X.dtype());
  T* gx = GX.data<T>();
  parallelFor(d.N, grainFor(F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i) {
      const int64_t base = seg[i] * F;
      const bool real = !keep || keep[i];
      for (int64_t j = 0; j < F; ++j) {
        const int64_t k = base + j;
        const T dh = (g ? g[j] : T(1)) * gyp[i * F + j];
        if (!real) {
          gx[i * F + j] = r[k] * dh;
          continue;
        }
        const T h = centred(xp[i * F + j], a, j, m[k]) * r[k];
        gx[i * F + j] = ops::mulAdd(-ch[static_cast<size_t>(k)], h, ops::mulAdd(r[k], dh, -c0[static_cast<size_t>(k)]));
      }
    }
  });
  in[0].addGrad(GX);
}

void checkSegmentNorm(const Tensor& X, const Tensor& ptr, const Tensor& mask, const Variable& a, const Variable& g,
                      const Variable& b, const SegmentNormOptions& o) {
  GNN_CHECK_ARG(X.rank() == 2, "segmentNorm: expected x [N, F], got ", shapeString(X.shape()));
  const int64_t N = X.dim(0), F = X.dim(1);
  GNN_CHECK_ARG(ptr.dtype() == DType::I64 && ptr.rank() == 1 && ptr.numel() >= 1, "segmentNorm: ptr must be int64 ",
                "[S + 1], got ", dtypeName(ptr.dtype()), " ", shapeString(ptr.shape()));
  const int64_t* p = ptr.data<int64_t>();
  const int64_t S = ptr.numel() - 1;
  GNN_CHECK_ARG(p[0] == 0 && p[S] == N, "segmentNorm: ptr must run from 0 to the ", N, " rows of x, got ", p[0],
                " to ", p[S]);
  for (int64_t s = 0; s < S; ++s)
    GNN_CHECK_ARG(p[s + 1] >= p[s], "segmentNorm: ptr decreases at segment ", s);
  GNN_CHECK_ARG(!mask.defined() || (mask.dtype() == DType::U8 && mask.numel() == N), "segmentNorm: rowMask must be ",
                "uint8 with one entry per row of x ", shapeString(X.shape()), ", got ", shapeString(mask.shape()));
  for (const Variable* v : {&a, &g, &b})
    GNN_CHECK_ARG(!v->defined() || (v->value().numel() == F && v->dtype() == X.dtype()), "segmentNorm: mean scale, ",
                  "gamma and beta must have ", F, " elements of x's dtype, got ", shapeString(v->shape()));
  GNN_CHECK_ARG(g.defined() || !b.defined(), "segmentNorm: beta without gamma");
  GNN_CHECK_ARG(!o.wholeSegment || !a.defined(), "segmentNorm: a mean scale is per column (not wholeSegment)");
  GNN_CHECK_ARG(o.eps >= 0, "segmentNorm: eps must be >= 0, got ", o.eps);
}

}  // namespace

Variable segmentNorm(const Variable& x, const Tensor& ptr, const Tensor& rowMask, const Variable& meanScale,
                     const Variable& gamma, const Variable& beta, const SegmentNormOptions& options,
                     Tensor* segmentMean, Tensor* segmentVar) {
  const Tensor& X = x.value();
  checkSegmentNorm(X, ptr, rowMask, meanScale, gamma, beta, options);
  const Dims d{X.dim(0), X.dim(1), ptr.numel() - 1};
  // Copies of the index tensors: the backward reads them, and a device may refill the batch's tensors before then.
  const Tensor P = ptr.clone();
  const Tensor mask = rowMask.defined() ? rowMask.clone() : Tensor();
  const uint8_t* keep = mask.defined() ? mask.data<uint8_t>() : nullptr;
  std::vector<Variable> inputs{x};
  Slots sl;
  if (meanScale.defined()) sl.scale = static_cast<int>(inputs.size()), inputs.push_back(meanScale);
  if (gamma.defined()) sl.gamma = static_cast<int>(inputs.size()), inputs.push_back(gamma);
  if (beta.defined()) sl.beta = static_cast<int>(inputs.size()), inputs.push_back(beta);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* a = meanScale.defined() ? meanScale.value().data<T>() : nullptr;
    Tensor Stats = Tensor::empty({3, d.S, d.F}, X.dtype());
    segmentStatistics<T>(X.data<T>(), d, P.data<int64_t>(), keep, a, options, Stats.data<T>());
    if (segmentMean) *segmentMean = Stats.slice(0, 1).reshape({d.S, d.F}).clone();
    if (segmentVar) *segmentVar = Stats.slice(2, 3).reshape({d.S, d.F}).clone();
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    normalizeSegmentRows<T>(X.data<T>(), d, rowSegments(P.data<int64_t>(), d.S), Stats.data<T>(), a,
                            gamma.defined() ? gamma.value().data<T>() : nullptr,
                            beta.defined() ? beta.value().data<T>() : nullptr, Y.data<T>());
    const int64_t NF = d.N * d.F, bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"segmentNorm", 9 * NF, bytes, bytes, 16 * NF};
    const Tensor A = meanScale.defined() ? meanScale.value() : Tensor();
    const Tensor G = gamma.defined() ? gamma.value() : Tensor();
    return Variable::record(info, Y, inputs, {X, P, mask, Stats, A, G},
                            [options, sl](const Tensor& gy, std::vector<GradInput>& in,
                                          const std::vector<Tensor>& saved) {
                              segmentNormBackward<T>(options, sl, gy, in, saved);
                            });
  });
}

}  // namespace gnn
