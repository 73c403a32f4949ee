// gruCell: torch.nn.GRUCell's gate arithmetic as one op over the two products (ops/Ops.h). The gates' columns are
// read where they are and the [N, 3H] gradients written at once: slicing the products into six [N, H] parts and
// back made each step's slices cost more than its products (GatedGraphConv).
#include <Eigen/Core>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

Variable gruCell(const Variable& gi, const Variable& gh, const Variable& h) {
  const Tensor &GI = gi.value(), &GH = gh.value(), &Hv = h.value();
  GNN_CHECK_ARG(Hv.rank() == 2 && GI.rank() == 2 && GH.rank() == 2 && GI.dim(0) == Hv.dim(0) &&
                    GH.dim(0) == Hv.dim(0) && GI.dim(1) == 3 * Hv.dim(1) && GH.dim(1) == 3 * Hv.dim(1) &&
                    GI.dtype() == Hv.dtype() && GH.dtype() == Hv.dtype(),
                "gruCell: gates ", shapeString(GI.shape()), " and ", shapeString(GH.shape()), " for h ",
                shapeString(Hv.shape()), ": expected [N, 3H], [N, 3H], [N, H] of one float dtype");
  return dispatchFloat(Hv.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t N = Hv.dim(0), H = Hv.dim(1);
    Tensor Y = Tensor::empty({N, H}, Hv.dtype());
    // r, z and n per element, for the backward (3 values where the inputs hold 7).
    Tensor Saved = Tensor::empty({N, 3 * H}, Hv.dtype());
    const T* a = GI.data<T>();
    const T* b = GH.data<T>();
    const T* hp = Hv.data<T>();
    T* y = Y.data<T>();
    T* s = Saved.data<T>();
    // Each row's gates on vector exp and tanh (vectorBlocks: Lanes in float32, on the CPU's widest vectors in any
    // build; the C library's scalar ones took 40 ns an element here): every element takes the vector code, whatever
    // its position (OpLoops.h); products that feed a sum go through mulAdd for the same reason.
    using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
    parallelFor(N, grainFor(40 * H), [&](int64_t r0, int64_t r1) GNN_CPU_CLONES {
      Arr pre(H), r(H), z(H), n(H);
      for (int64_t i = r0; i < r1; ++i) {
        const T *ai = a + i * 3 * H, *bi = b + i * 3 * H, *hi = hp + i * H;
        auto sigmoidOfSum = [](auto x, auto y) { return (T(1) + (-(x + y)).exp()).inverse(); };
        ops::vectorBlocks<T>(H, sigmoidOfSum, r.data(), ai, bi);
        ops::vectorBlocks<T>(H, sigmoidOfSum, z.data(), ai + H, bi + H);
        for (int64_t c = 0; c < H; ++c) pre[c] = ops::mulAdd(r[c], bi[2 * H + c], ai[2 * H + c]);
        ops::vectorBlocks<T>(H, [](auto x) { return x.tanh(); }, n.data(), static_cast<const T*>(pre.data()));
        T* si = s + i * 3 * H;
        T* yi = y + i * H;
        for (int64_t c = 0; c < H; ++c) {
          si[c] = r[c];
          si[H + c] = z[c];
          si[2 * H + c] = n[c];
          yi[c] = ops::mulAdd(z[c], hi[c] - n[c], n[c]);  // (1 - z) n + z h = n + z (h - n)
        }
      }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"gruCell", 35 * N * H, 7 * N * H * elem, 4 * N * H * elem, 30 * N * H};
    return Variable::record(info, Y, {gi, gh, h}, {Saved, GH, Hv}, [N, H](const Tensor& gy, std::vector<GradInput>& in,
                                                                          const std::vector<Tensor>& saved) {
      Tensor DGI = Tensor::empty({N, 3 * H}, gy.dtype()), DGH = Tensor::empty({N, 3 * H}, gy.dtype());
      Tensor DH = Tensor::empty({N, H}, gy.dtype());
      const T* s = saved[0].data<T>();
      const T* b = saved[1].data<T>();
      const T* hp = saved[2].data<T>();
      const T* g = gy.data<T>();
      T *da = DGI.data<T>(), *db = DGH.data<T>(), *dh = DH.data<T>();
      parallelFor(N, grainFor(20 * H), [&](int64_t r0, int64_t r1) GNN_CPU_CLONES {
        for (int64_t i = r0; i < r1; ++i) {
          for (int64_t c = 0; c < H; ++c) {
            const int64_t k = i * 3 * H + c, j = i * H + c;
            const T r = s[k], z = s[k + H], n = s[k + 2 * H], gj = g[j];
            const T dn = gj * (T(1) - z) * (T(1) - n * n);  // through tanh (no product feeds a sum here)
            const T dr = dn * b[k + 2 * H] * r * (T(1) - r);
            const T dz = gj * (hp[j] - n) * z * (T(1) - z);
            da[k] = dr;
            da[k + H] = dz;
            da[k + 2 * H] = dn;
            db[k] = dr;
            db[k + H] = dz;
            db[k + 2 * H] = dn * r;
            dh[j] = gj * z;
          }
        }
      });
      in[0].addGrad(DGI);
      in[1].addGrad(DGH);
      in[2].addGrad(DH);
    });
  });
}

}  // namespace gnn
