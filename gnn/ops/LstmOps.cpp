// lstmRecurrence: one direction of torch.nn.LSTM's recurrence, the whole time loop in one op with a hand-written
// backward (backpropagation through time). PyG's JumpingKnowledge('lstm') runs an LSTM per node over its few
// layer outputs: op by op, that would be a dozen tape entries and [N, 4H] temporaries per step. Sequences (rows)
// are independent, and a row's arithmetic is fixed by H alone (products accumulated in a fixed order through
// ops::mulAdd, activations through ops::vectorBlocks), so a row's bits never depend on the thread count, on the
// chunk or micro-block it falls in, or on the other rows (padding).
#include <algorithm>
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

// Rows run in micro-blocks: each row of W^T (forward) or W (backward) is read into L1 once for all of them.
constexpr int64_t kBlockRows = 8;

template <class T>
void sigmoidInto(int64_t n, T* out, const T* in) {
  ops::vectorBlocks<T>(n, [](auto z) { return (T(1) + (-z).exp()).inverse(); }, out, in);
}

template <class T>
void tanhInto(int64_t n, T* out, const T* in) {
  ops::vectorBlocks<T>(n, [](auto z) { return z.tanh(); }, out, in);
}

// The op's tensors as raw pointers: rows B, steps S, hidden H (G = 4 H gates, torch's order i, f, g, o).
template <class T>
struct LstmData {
  int64_t B, S, H;
  bool reverse;
  const T* gates;      // [B, S, G]: x_t W_ih^T + b_ih
  const T* weight;     // W_hh [G, H]
  const T* weightT;    // W_hh^T [H, G] (forward only)
  const T* bias;       // b_hh [G] or null
  T* out;              // h [B, S, H]
  T* acts;             // [B, S, G]: i, f, g, o after their activations (null: not kept)
  T* cells;            // c [B, S, H] (null: not kept)
  int64_t step(int64_t s) const { return reverse ? S - 1 - s : s; }
};

// acc[r] += h[r] W^T for the R rows of a block: k outer, so each row sums its H products in increasing k.
template <class T>
void addHiddenProduct(T* acc, const T* h, const T* wT, int64_t R, int64_t H) {
  const int64_t G = 4 * H;
  for (int64_t k = 0; k < H; ++k) {
    const T* __restrict w = wT + k * G;
    for (int64_t r = 0; r < R; ++r) {
      const T hk = h[r * H + k];
      T* __restrict a = acc + r * G;
      for (int64_t j = 0; j < G; ++j) a[j] = ops::mulAdd(hk, w[j], a[j]);
    }
  }
}

// One cell step of one row from its gate pre-activations a [G]: act [G] (activated gates), c [H] updated in place,
// h [H] and the output row y [H] written. tc: scratch [H].
template <class T>
void cellForward(const T* a, T* act, T* c, T* h, T* y, T* tc, int64_t H) {
  sigmoidInto<T>(2 * H, act, a);
  tanhInto<T>(H, act + 2 * H, a + 2 * H);
  sigmoidInto<T>(H, act + 3 * H, a + 3 * H);
  const T *i = act, *f = act + H, *g = act + 2 * H, *o = act + 3 * H;
  for (int64_t k = 0; k < H; ++k) c[k] = ops::mulAdd(f[k], c[k], i[k] * g[k]);
  tanhInto<T>(H, tc, c);
  for (int64_t k = 0; k < H; ++k) h[k] = y[k] = o[k] * tc[k];
}

template <class T>
void forwardRows(const LstmData<T>& d, int64_t b, int64_t e) {
  const int64_t S = d.S, H = d.H, G = 4 * H;
  std::vector<T> acc(kBlockRows * G), h(kBlockRows * H), c(kBlockRows * H), tc(H), actScratch(G);
  for (int64_t r0 = b; r0 < e; r0 += kBlockRows) {
    const int64_t R = std::min(kBlockRows, e - r0);
    std::fill(h.begin(), h.end(), T(0));  // torch's default initial state: zeros
    std::fill(c.begin(), c.end(), T(0));
    for (int64_t s = 0; s < S; ++s) {
      const int64_t t = d.step(s);
      for (int64_t r = 0; r < R; ++r) {
        const T* __restrict x = d.gates + ((r0 + r) * S + t) * G;
        T* __restrict a = acc.data() + r * G;
        if (d.bias)
          for (int64_t j = 0; j < G; ++j) a[j] = x[j] + d.bias[j];
        else
          std::copy(x, x + G, a);
      }
      if (s > 0) addHiddenProduct(acc.data(), h.data(), d.weightT, R, H);
      for (int64_t r = 0; r < R; ++r) {
        const int64_t at = (r0 + r) * S + t;
        T* act = d.acts ? d.acts + at * G : actScratch.data();
        cellForward(acc.data() + r * G, act, c.data() + r * H, h.data() + r * H, d.out + at * H, tc.data(), H);
        if (d.cells) std::copy(c.data() + r * H, c.data() + (r + 1) * H, d.cells + at * H);
      }
    }
  }
}

// One row's step backward: from the output gradient gy [H] plus the recurrent dh [H] and dc [H] (updated in
// place to the previous step's dc), the gate pre-activations' gradient da [G]. cPrev: null at the first step.
template <class T>
void cellBackward(const T* act, const T* c, const T* cPrev, const T* gy, const T* dh, T* dc, T* da, T* tc,
                  int64_t H) {
  const T *i = act, *f = act + H, *g = act + 2 * H, *o = act + 3 * H;
  tanhInto<T>(H, tc, c);  // the forward's bits: the same function on the same values
  for (int64_t k = 0; k < H; ++k) {
    const T dhk = gy[k] + dh[k];
    const T dck = ops::mulAdd(dhk * o[k], ops::mulAdd(-tc[k], tc[k], T(1)), dc[k]);
    const T cp = cPrev ? cPrev[k] : T(0);
    da[k] = dck * g[k] * (i[k] * (T(1) - i[k]));
    da[H + k] = dck * cp * (f[k] * (T(1) - f[k]));
    da[2 * H + k] = dck * i[k] * ops::mulAdd(-g[k], g[k], T(1));
    da[3 * H + k] = dhk * tc[k] * (o[k] * (T(1) - o[k]));
    dc[k] = dck * f[k];
  }
}

// dh[r] = da[r] W for the R rows of a block (the previous step's recurrent gradient): j outer, in increasing j.
template <class T>
void hiddenGradient(T* dh, const T* const* da, const T* w, int64_t R, int64_t H) {
  std::fill(dh, dh + R * H, T(0));
  for (int64_t j = 0; j < 4 * H; ++j) {
    const T* __restrict wj = w + j * H;
    for (int64_t r = 0; r < R; ++r) {
      const T dj = da[r][j];
      T* __restrict out = dh + r * H;
      for (int64_t k = 0; k < H; ++k) out[k] = ops::mulAdd(dj, wj[k], out[k]);
    }
  }
}

// Backpropagation through time over rows [b, e): the gates' gradient dGates [B, S, G].
template <class T>
void backwardRows(const LstmData<T>& d, const T* gy, T* dGates, int64_t b, int64_t e) {
  const int64_t S = d.S, H = d.H, G = 4 * H;
  std::vector<T> dh(kBlockRows * H), dc(kBlockRows * H), tc(H);
  const T* da[kBlockRows];
  for (int64_t r0 = b; r0 < e; r0 += kBlockRows) {
    const int64_t R = std::min(kBlockRows, e - r0);
    std::fill(dh.begin(), dh.end(), T(0));
    std::fill(dc.begin(), dc.end(), T(0));
    for (int64_t s = S - 1; s >= 0; --s) {
      const int64_t t = d.step(s);
      for (int64_t r = 0; r < R; ++r) {
        const int64_t at = (r0 + r) * S + t;
        const T* cPrev = s > 0 ? d.cells + ((r0 + r) * S + d.step(s - 1)) * H : nullptr;
        cellBackward(d.acts + at * G, d.cells + at * H, cPrev, gy + at * H, dh.data() + r * H, dc.data() + r * H,
                     dGates + at * G, tc.data(), H);
        da[r] = dGates + at * G;
      }
      if (s > 0) hiddenGradient(dh.data(), da, d.weight, R, H);
    }
  }
}

// W_hh's gradient sum over rows and steps s > 0 of da_t^T h_{t-1}, and b_hh's the column sums of dGates: fixed
// chunks of rows (from the shape alone), partial sums added in chunk order, the same bits on any thread count.
template <class T>
void parameterGradients(const LstmData<T>& d, const T* dGates, T* dW, T* dBias) {
  const int64_t B = d.B, S = d.S, H = d.H, G = 4 * H;
  const int64_t chunk = std::max<int64_t>(64, (B + 7) / 8), chunks = (B + chunk - 1) / chunk;
  const int64_t width = (dW ? G * H : 0) + (dBias ? G : 0);
  if (chunks == 0) {  // no rows: zero gradients
    if (dW) std::fill(dW, dW + G * H, T(0));
    if (dBias) std::fill(dBias, dBias + G, T(0));
    return;
  }
  std::vector<T> partial(static_cast<size_t>(chunks * width), T(0));
  using Strided = Eigen::Map<const RowMatrix<T>, 0, Eigen::OuterStride<>>;
  parallelFor(chunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t ch = cb; ch < ce; ++ch) {
      const int64_t lo = ch * chunk, n = std::min(B, lo + chunk) - lo;
      T* p = partial.data() + ch * width;
      if (dW) {
        MatrixMap<T> pw(p, G, H);
        for (int64_t s = 1; s < S; ++s) {
          const Strided da(dGates + (lo * S + d.step(s)) * G, n, G, Eigen::OuterStride<>(S * G));
          const Strided hp(d.out + (lo * S + d.step(s - 1)) * H, n, H, Eigen::OuterStride<>(S * H));
          pw.noalias() += da.transpose() * hp;
        }
        p += G * H;
      }
      if (dBias)
        for (int64_t row = lo * S; row < (lo + n) * S; ++row) {
          const T* __restrict g = dGates + row * G;
          for (int64_t j = 0; j < G; ++j) p[j] += g[j];
        }
    }
  });
  std::vector<T> total(static_cast<size_t>(width));
  ops::sumChunkPartials(partial.data(), chunks, width, total.data());
  if (dW) std::copy(total.begin(), total.begin() + G * H, dW);
  if (dBias) std::copy(total.end() - G, total.end(), dBias);
}

void checkLstmInputs(const Tensor& X, const Tensor& W, const Variable& bias) {
  GNN_CHECK_ARG(X.rank() == 3 && X.isFloating() && X.dtype() != DType::F16 && X.dim(2) % 4 == 0,
                "lstmRecurrence: gates must be float32 or float64 [B, T, 4 H], got ", dtypeName(X.dtype()), " ",
                shapeString(X.shape()));
  const int64_t H = X.dim(2) / 4;
  GNN_CHECK_ARG(W.rank() == 2 && W.dim(0) == 4 * H && W.dim(1) == H && W.dtype() == X.dtype(),
                "lstmRecurrence: weight_hh must be [4 H, H] = [", 4 * H, ", ", H, "] of the gates' dtype, got ",
                dtypeName(W.dtype()), " ", shapeString(W.shape()), " for gates ", shapeString(X.shape()));
  GNN_CHECK_ARG(!bias.defined() || (bias.value().rank() == 1 && bias.dim(0) == 4 * H && bias.dtype() == X.dtype()),
                "lstmRecurrence: bias_hh must be [", 4 * H, "] of the gates' dtype, got ",
                bias.defined() ? shapeString(bias.shape()) : std::string("?"));
}

}  // namespace

Variable lstmRecurrence(const Variable& gates, const Variable& weightHh, const Variable& biasHh, bool reverse) {
  const Tensor &X = gates.value(), &W = weightHh.value();
  checkLstmInputs(X, W, biasHh);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t B = X.dim(0), S = X.dim(1), H = X.dim(2) / 4, G = 4 * H;
    const bool keep = gradEnabled() && (gates.requiresGrad() || weightHh.requiresGrad() ||
                                        (biasHh.defined() && biasHh.requiresGrad()));
    Tensor Y = Tensor::empty({B, S, H}, X.dtype());
    Tensor acts = keep ? Tensor::empty({B, S, G}, X.dtype()) : Tensor();
    Tensor cells = keep ? Tensor::empty({B, S, H}, X.dtype()) : Tensor();
    // W^T [H, G], so the forward's product reads rows (a plain copy: transposed() would show up as an op).
    Tensor WT = Tensor::empty({H, G}, X.dtype());
    for (int64_t j = 0; j < G; ++j)
      for (int64_t k = 0; k < H; ++k) WT.data<T>()[k * G + j] = W.data<T>()[j * H + k];
    LstmData<T> d{B, S, H, reverse, X.data<T>(), W.data<T>(), WT.data<T>(),
                  biasHh.defined() ? biasHh.value().data<T>() : nullptr, Y.data<T>(),
                  keep ? acts.data<T>() : nullptr, keep ? cells.data<T>() : nullptr};
    const int64_t perRow = S * (2 * H * G + 12 * G);
    parallelFor(B, rowChunk(B, perRow), [&](int64_t b, int64_t e) { forwardRows(d, b, e); });

    std::vector<Variable> inputs{gates, weightHh};
    if (biasHh.defined()) inputs.push_back(biasHh);
    const int64_t sz = static_cast<int64_t>(sizeof(T));
    OpInfo info{"lstmRecurrence", B * perRow,
                static_cast<int64_t>(X.nbytes() + W.nbytes()) + (biasHh.defined() ? G * sz : 0),
                static_cast<int64_t>(Y.nbytes() + acts.nbytes() + cells.nbytes()), keep ? 2 * B * perRow : 0};
    return Variable::record(
        info, Y, std::move(inputs), {acts, cells, Y, W},
        [B, S, H, reverse](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const int64_t G = 4 * H;
          const Tensor &A = saved[0], &C = saved[1], &Yv = saved[2], &Wv = saved[3];
          LstmData<T> d{B, S, H, reverse, nullptr, Wv.data<T>(), nullptr, nullptr,
                        const_cast<T*>(Yv.data<T>()), const_cast<T*>(A.data<T>()), const_cast<T*>(C.data<T>())};
          Tensor dGates = Tensor::empty({B, S, G}, gy.dtype());
          parallelFor(B, rowChunk(B, S * (2 * H * G + 16 * G)),
                      [&](int64_t b, int64_t e) { backwardRows(d, gy.data<T>(), dGates.data<T>(), b, e); });
          const bool wantW = in[1].requiresGrad(), wantB = in.size() > 2 && in[2].requiresGrad();
          Tensor dW = wantW ? Tensor::empty({G, H}, gy.dtype()) : Tensor();
          Tensor dB = wantB ? Tensor::empty({G}, gy.dtype()) : Tensor();
          if (wantW || wantB)
            parameterGradients(d, dGates.data<T>(), wantW ? dW.data<T>() : nullptr, wantB ? dB.data<T>() : nullptr);
          if (in[0].requiresGrad()) in[0].addGrad(dGates);
          if (wantW) in[1].addGrad(dW);
          if (wantB) in[2].addGrad(dB);
        });
  });
}

}  // namespace gnn
