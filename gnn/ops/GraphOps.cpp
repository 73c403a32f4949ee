// Graph ops: row gather, segment and scatter reductions, segment softmax, sparse-dense product.
// All reductions run per output row in a fixed order (counting sort, no atomics): deterministic and
// parallel over output rows.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "gnn/ops/GatherMultiplySum.h"
#include "gnn/ops/IndexPlan.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using ops::indexValues;
using ops::IndexPlan;
using ops::planFor;

std::vector<int64_t> ptrValues(const char* op, const Tensor& ptr, int64_t rows) {
  GNN_CHECK_ARG(ptr.rank() == 1 && ptr.numel() >= 1, op, ": ptr must be rank 1 with at least one entry");
  std::vector<int64_t> v(static_cast<size_t>(ptr.numel()));
  dispatchIndex(ptr.dtype(), [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    const I* p = ptr.data<I>();
    for (int64_t i = 0; i < ptr.numel(); ++i) v[i] = p[i];
  });
  GNN_CHECK_ARG(v.front() == 0 && v.back() == rows, op, ": ptr must start at 0 and end at the row count ", rows,
                ", got ", v.front(), " .. ", v.back());
  for (size_t i = 1; i < v.size(); ++i)
    GNN_CHECK_ARG(v[i] >= v[i - 1], op, ": ptr decreases at segment ", i - 1);
  return v;
}

// Index vectors a backward needs travel as int64 tensors, so the tape counts them among the saved bytes.
Tensor indexTensor(const std::vector<int64_t>& v) { return Tensor::fromVector(v); }

void checkRank2Float(const char* op, const Tensor& x) {
  GNN_CHECK_ARG(x.rank() == 2 && x.isFloating(), op, ": expected a float [N, F] tensor, got ",
                dtypeName(x.dtype()), " ", shapeString(x.shape()));
}

enum class Reduce { Sum, Mean, Max };

// out[s] = reduce over rows rowsOf(s) of x, where bucket s lists its rows as ptr/perm (perm empty = identity).
template <class T>
void reduceRows(ConstMatrixMap<T> x, MatrixMap<T> out, const std::vector<int64_t>& ptr,
                const std::vector<int64_t>& perm, Reduce mode, int64_t* argmax) {
  const int64_t F = x.cols();
  const int64_t rowsPerSegment = (ptr.back() + out.rows() - 1) / std::max<int64_t>(out.rows(), 1);
  // Plain row loops, compiled per CPU level (Eigen's row expressions keep the vector width the library was
  // compiled with: SSE2 in a portable build, where NNConv's and GeneralConv's gatherRows backward took 2x).
  const T* xd = x.data();
  T* od = out.data();
  parallelFor(out.rows(), grainFor(rowsPerSegment * F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t s = b; s < e; ++s) {
      T* __restrict o = od + s * F;
      int64_t lo = ptr[s], hi = ptr[s + 1];
      if (lo == hi) {
        std::fill(o, o + F, T(0));
        if (argmax)
          for (int64_t f = 0; f < F; ++f) argmax[s * F + f] = -1;
        continue;
      }
      if (mode == Reduce::Max) {
        for (int64_t f = 0; f < F; ++f) {
          T best = -std::numeric_limits<T>::infinity();
          int64_t arg = -1;
          for (int64_t k = lo; k < hi; ++k) {
            int64_t r = perm.empty() ? k : perm[k];
            if (xd[r * F + f] > best || arg < 0) {
              best = xd[r * F + f];
              arg = r;
            }
          }
          o[f] = best;
          argmax[s * F + f] = arg;
        }
        continue;
      }
      std::fill(o, o + F, T(0));
      for (int64_t k = lo; k < hi; ++k) {
        const T* __restrict r = xd + (perm.empty() ? k : perm[k]) * F;
        for (int64_t f = 0; f < F; ++f) o[f] += r[f];
      }
      if (mode == Reduce::Mean) {
        const T n = static_cast<T>(hi - lo);
        for (int64_t f = 0; f < F; ++f) o[f] /= n;
      }
    }
  });
}

// Shared forward/backward of segment and scatter reductions. `rowOf[r]` = output row of input row r.
Variable reduceOp(const char* op, const Variable& xv, std::vector<int64_t> ptr, std::vector<int64_t> perm,
                  Tensor rowOf, Reduce mode) {
  const Tensor& X = xv.value();
  int64_t S = static_cast<int64_t>(ptr.size()) - 1;
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t F = X.dim(1);
    Tensor Y = Tensor::empty({S, F}, X.dtype());
    Tensor Argmax = mode == Reduce::Max ? Tensor::empty({S * F}, DType::I64) : Tensor();
    reduceRows<T>(X.matrix<T>(), Y.matrix<T>(), ptr, perm, mode,
                  Argmax.defined() ? Argmax.data<int64_t>() : nullptr);
    Shape xs = X.shape();
    const int64_t bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{op, X.numel(), bytes + 8 * X.dim(0), static_cast<int64_t>(Y.nbytes()), X.numel()};
    // The backward needs, per input row, its output row (sum, mean: with the segment sizes) or the argmax.
    std::vector<Tensor> saved;
    if (mode == Reduce::Max)
      saved = {Argmax};
    else
      saved = {rowOf, indexTensor(ptr)};
    return Variable::record(info, Y, {xv}, std::move(saved), [xs, mode](const Tensor& gy, std::vector<GradInput>& in,
                                                                        const std::vector<Tensor>& saved) {
      const int64_t* argmax = mode == Reduce::Max ? saved[0].data<int64_t>() : nullptr;
      const int64_t* rowOf = mode == Reduce::Max ? nullptr : saved[0].data<int64_t>();
      const int64_t* ptr = mode == Reduce::Max ? nullptr : saved[1].data<int64_t>();
      // Max scatters into few rows (needs zeros); sum and mean write every row.
      Tensor G = mode == Reduce::Max ? Tensor(xs, gy.dtype()) : Tensor::empty(xs, gy.dtype());
      auto g = G.matrix<T>();
      auto go = gy.matrix<T>();
      const int64_t F = go.cols();
      if (mode == Reduce::Max) {
        // Each (segment, feature) routes to one input row: no two writes collide.
        for (int64_t s = 0; s < go.rows(); ++s)
          for (int64_t f = 0; f < F; ++f)
            if (argmax[s * F + f] >= 0) g(argmax[s * F + f], f) += go(s, f);
      } else {
        parallelFor(g.rows(), grainFor(F), [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            int64_t s = rowOf[r];
            if (mode == Reduce::Mean)
              g.row(r) = go.row(s) / static_cast<T>(ptr[s + 1] - ptr[s]);
            else
              g.row(r) = go.row(s);
          }
        });
      }
      in[0].addGrad(G);
    });
  });
}

Tensor rowsOfSegments(const std::vector<int64_t>& ptr) {
  Tensor out = Tensor::empty({ptr.back()}, DType::I64);
  int64_t* rowOf = out.data<int64_t>();
  for (size_t s = 0; s + 1 < ptr.size(); ++s)
    for (int64_t r = ptr[s]; r < ptr[s + 1]; ++r) rowOf[r] = static_cast<int64_t>(s);
  return out;
}

Variable segmentReduce(const char* op, const Variable& x, const Tensor& ptr, Reduce mode) {
  checkRank2Float(op, x.value());
  std::vector<int64_t> p = ptrValues(op, ptr, x.dim(0));
  Tensor rowOf = rowsOfSegments(p);
  return reduceOp(op, x, std::move(p), {}, std::move(rowOf), mode);
}

Variable scatterReduce(const char* op, const Variable& x, const Tensor& index, int64_t numOut, Reduce mode) {
  checkRank2Float(op, x.value());
  GNN_CHECK_ARG(index.numel() == x.dim(0), op, ": index has ", index.numel(), " entries for ", x.dim(0), " rows");
  Tensor idx = indexValues(op, index, numOut);
  IndexPlan plan = planFor(idx, numOut);
  return reduceOp(op, x, std::move(plan.ptr), std::move(plan.perm), std::move(idx), mode);
}
}  // namespace

Variable gatherRows(const Variable& x, const Tensor& index) {
  const Tensor& X = x.value();
  checkRank2Float("gatherRows", X);
  Tensor index64 = indexValues("gatherRows", index, X.dim(0));
  const int64_t* idx = std::as_const(index64).data<int64_t>();
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t E = index64.numel(), F = X.dim(1);
    Tensor Y = Tensor::empty({E, F}, X.dtype());
    const T* xp = X.data<T>();
    T* yp = Y.data<T>();
    parallelFor(E, grainFor(F), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) std::copy(xp + idx[i] * F, xp + (idx[i] + 1) * F, yp + i * F);
    });
    Shape xs = X.shape();
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"gatherRows", 0, E * (8 + F * elem), E * F * elem, E * F};
    return Variable::record(info, Y, {x}, {index64}, [xs](const Tensor& gy, std::vector<GradInput>& in,
                                                                   const std::vector<Tensor>& saved) {
      // Scatter-add back, grouped by source row so each row sums its contributions in a fixed order.
      IndexPlan plan = planFor(saved[0], xs[0]);
      Tensor G = Tensor::empty(xs, gy.dtype());  // reduceRows writes every row
      reduceRows<T>(gy.matrix<T>(), G.matrix<T>(), plan.ptr, plan.perm, Reduce::Sum, nullptr);
      in[0].addGrad(G);
    });
  });
}

namespace {
// reluMessageSum's row loops, with restrict-qualified parameters (GCC vectorises a loop over several pointers
// only when it knows they do not overlap; block-scope restrict pointers it does not always honour).
// o += relu(xs + ae), and where the pre-activation is positive into pe (when given).
template <class T>
inline void reluAccumulate(T* __restrict o, const T* __restrict xs, const T* __restrict ae, uint8_t* __restrict pe,
                           int64_t F) {
  if (pe) {
    for (int64_t j = 0; j < F; ++j) {
      const T pre = xs[j] + ae[j];
      o[j] += pre > T(0) ? pre : T(0);  // relu(x) = x > 0 ? x : 0
      pe[j] = pre > T(0);
    }
  } else {
    for (int64_t j = 0; j < F; ++j) {
      const T pre = xs[j] + ae[j];
      o[j] += pre > T(0) ? pre : T(0);
    }
  }
}
// m = g where p is set, else 0.
template <class T>
inline void maskedCopy(T* __restrict m, const T* __restrict g, const uint8_t* __restrict p, int64_t F) {
  for (int64_t j = 0; j < F; ++j) m[j] = p[j] != 0 ? g[j] : T(0);
}
}  // namespace

Variable reluMessageSum(const Variable& x, const Variable& edgeAttr, const Tensor& edgeIndex, int64_t numNodes,
                        double selfWeight) {
  const Tensor &X = x.value(), &A = edgeAttr.value();
  checkRank2Float("reluMessageSum", X);
  ops::checkEdgeIndex("reluMessageSum", edgeIndex);
  const int64_t E = edgeIndex.dim(1);
  GNN_CHECK_ARG(A.rank() == 2 && A.dim(0) == E && A.dim(1) == X.dim(1) && A.dtype() == X.dtype(),
                "reluMessageSum: edge features ", dtypeName(A.dtype()), " ", shapeString(A.shape()), " for ", E,
                " edges of ", X.dim(1), " ", dtypeName(X.dtype()), " features");
  GNN_CHECK_ARG(selfWeight == 0 || numNodes == X.dim(0), "reluMessageSum: a self term needs numNodes (", numNodes,
                ") == the rows of x (", X.dim(0), ")");
  Tensor srcs = indexValues("reluMessageSum (source)", edgeIndex.slice(0, 1).reshape({E}), X.dim(0));
  Tensor dsts = indexValues("reluMessageSum (target)", edgeIndex.slice(1, 2).reshape({E}), numNodes);
  const int64_t* src = std::as_const(srcs).data<int64_t>();
  IndexPlan byDst = planFor(dsts, numNodes);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t F = X.dim(1);
    Tensor Y = Tensor::empty({numNodes, F}, X.dtype());
    auto xm = X.matrix<T>();
    auto ym = Y.matrix<T>();
    // The backward needs only where each message's pre-activation is positive: one byte per element instead of
    // keeping x and the [E, F] edge features alive (a quarter of the edge features' bytes, and x is freed).
    const bool keep = gradEnabled() && (x.requiresGrad() || edgeAttr.requiresGrad());
    Tensor Positive = keep ? Tensor::empty({E, F}, DType::U8) : Tensor();
    uint8_t* pos = keep ? Positive.data<uint8_t>() : nullptr;
    // Per target node, its messages in edge order starting from 0: the rounding of scatterSum of the messages.
    parallelFor(numNodes, grainFor(std::max<int64_t>(1, E / std::max<int64_t>(numNodes, 1)) * F),
                [&](int64_t b, int64_t e) GNN_CPU_CLONES {
                  // Plain loops (not Eigen's row expressions, whose vector width is fixed when the library is
                  // compiled), so that the clones of a portable build run them with the CPU's widest vectors.
                  const T* xp = X.data<T>();
                  const T* ap = A.data<T>();
                  for (int64_t i = b; i < e; ++i) {
                    T* o = ym.row(i).data();
                    for (int64_t j = 0; j < F; ++j) o[j] = T(0);
                    for (int64_t k = byDst.ptr[i]; k < byDst.ptr[i + 1]; ++k) {
                      const int64_t edge = byDst.perm[k];
                      reluAccumulate(o, xp + src[edge] * F, ap + edge * F, pos ? pos + edge * F : nullptr, F);
                    }
                    // After the sum, as add() would.
                    if (selfWeight != 0) ym.row(i) += static_cast<T>(selfWeight) * xm.row(i);
                  }
                });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"reluMessageSum", 3 * E * F + (selfWeight != 0 ? 2 * numNodes * F : 0),
                E * (16 + 2 * F * elem) + (selfWeight != 0 ? static_cast<int64_t>(X.nbytes()) : 0),
                static_cast<int64_t>(Y.nbytes()) + (keep ? E * F : 0), 2 * E * F};
    const int64_t numX = X.dim(0);
    return Variable::record(
        info, Y, {x, edgeAttr}, {Positive, srcs, dsts},
        [selfWeight, numX](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const uint8_t* positive = saved[0].data<uint8_t>();
          const int64_t* dst = saved[2].data<int64_t>();
          const int64_t E = saved[1].numel(), F = gy.dim(1);
          // Gradient of each message: gy at its target where the pre-activation is positive. It is both the
          // edge features' gradient and what the sources collect.
          Tensor GM = Tensor::empty({E, F}, gy.dtype());
          auto gm = GM.matrix<T>();
          auto go = gy.matrix<T>();
          parallelFor(E, grainFor(F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
            for (int64_t edge = b; edge < e; ++edge)
              maskedCopy(gm.row(edge).data(), go.row(dst[edge]).data(), positive + edge * F, F);
          });
          if (in[0].requiresGrad()) {
            IndexPlan bySrc = planFor(saved[1], numX);
            Tensor G = Tensor::empty({numX, F}, gy.dtype());
            reduceRows<T>(std::as_const(GM).matrix<T>(), G.matrix<T>(), bySrc.ptr, bySrc.perm, Reduce::Sum, nullptr);
            if (selfWeight != 0) {
              auto g = G.flat<T>();
              auto gs = gy.flat<T>();
              const T w = static_cast<T>(selfWeight);
              parallelElements(G.numel(), [&](int64_t b, int64_t e) {
                g.segment(b, e - b) += w * gs.segment(b, e - b);
              });
            }
            in[0].addGrad(G);
          }
          if (in[1].requiresGrad()) in[1].addGrad(GM);
        });
  });
}

namespace {
// messagePlan's layout: a header, the checked indices, then each grouping as ptr (rows + 1) and perm (E).
constexpr int64_t kPlanMagic = 0x6d73677061;  // "msgpa"
constexpr int64_t kPlanHeader = 6;            // magic, E, numNodes, numX, numW, indexed

// Pointers into a plan tensor (checked: its header against its length).
struct PlanView {
  int64_t E = 0, numNodes = 0, numX = 0, numW = 0;
  bool indexed = false;
  const int64_t *src = nullptr, *dst = nullptr, *row = nullptr;
  const int64_t *dstPtr = nullptr, *dstPerm = nullptr, *srcPtr = nullptr, *srcPerm = nullptr;
  const int64_t *rowPtr = nullptr, *rowPerm = nullptr;
};

int64_t planLength(int64_t E, int64_t numNodes, int64_t numX, int64_t numW, bool indexed) {
  return kPlanHeader + 2 * E + (numNodes + 1) + E + (numX + 1) + E + (indexed ? E + (numW + 1) + E : 0);
}

PlanView viewOf(const Tensor& plan) {
  GNN_CHECK_ARG(plan.defined() && plan.rank() == 1 && plan.dtype() == DType::I64 && plan.numel() >= kPlanHeader &&
                    plan.data<int64_t>()[0] == kPlanMagic,
                "filterMessageSum: the plan is not one messagePlan built");
  const int64_t* h = plan.data<int64_t>();
  PlanView v;
  v.E = h[1];
  v.numNodes = h[2];
  v.numX = h[3];
  v.numW = h[4];
  v.indexed = h[5] != 0;
  GNN_CHECK_ARG(v.E >= 0 && v.numNodes >= 0 && v.numX >= 0 && v.numW >= 0 &&
                    plan.numel() == planLength(v.E, v.numNodes, v.numX, v.numW, v.indexed),
                "filterMessageSum: the plan's header does not match its length");
  const int64_t* p = h + kPlanHeader;
  auto take = [&p](int64_t n) {
    const int64_t* at = p;
    p += n;
    return at;
  };
  v.src = take(v.E);
  v.dst = take(v.E);
  v.dstPtr = take(v.numNodes + 1);
  v.dstPerm = take(v.E);
  v.srcPtr = take(v.numX + 1);
  v.srcPerm = take(v.E);
  if (v.indexed) {
    v.row = take(v.E);
    v.rowPtr = take(v.numW + 1);
    v.rowPerm = take(v.E);
  }
  return v;
}

// The plan of indices already checked (srcs < numX, dsts < numNodes, rows < numW; rows undefined: per edge).
Tensor packPlan(const Tensor& srcs, const Tensor& dsts, const Tensor& rows, int64_t numNodes, int64_t numX,
                int64_t numW) {
  const int64_t E = srcs.numel();
  const bool indexed = rows.defined();
  Tensor plan({planLength(E, numNodes, numX, numW, indexed)}, DType::I64);
  int64_t* p = plan.data<int64_t>();
  const int64_t header[kPlanHeader] = {kPlanMagic, E, numNodes, numX, numW, indexed ? 1 : 0};
  p = std::copy(header, header + kPlanHeader, p);
  auto put = [&p](const int64_t* from, size_t n) { p = std::copy(from, from + n, p); };
  auto putPlan = [&](const IndexPlan& ip) {
    put(ip.ptr.data(), ip.ptr.size());
    put(ip.perm.data(), ip.perm.size());
  };
  put(srcs.data<int64_t>(), static_cast<size_t>(E));
  put(dsts.data<int64_t>(), static_cast<size_t>(E));
  putPlan(planFor(dsts, numNodes));
  putPlan(planFor(srcs, numX));
  if (indexed) {
    put(rows.data<int64_t>(), static_cast<size_t>(E));
    putPlan(planFor(rows, numW));
  }
  return plan;
}

struct CheckedIndices {
  Tensor srcs, dsts, rows;
  int64_t numW = 0;
};
CheckedIndices checkedIndices(const Tensor& edgeIndex, int64_t numNodes, int64_t numX, const Tensor& filterIndex,
                              int64_t numFilterRows) {
  ops::checkEdgeIndex("filterMessageSum", edgeIndex);
  GNN_CHECK_ARG(numNodes >= 0, "filterMessageSum: numNodes must be >= 0, got ", numNodes);
  const int64_t E = edgeIndex.dim(1);
  const bool indexed = filterIndex.defined();
  GNN_CHECK_ARG(!indexed || filterIndex.numel() == E, "filterMessageSum: filter index has ", filterIndex.numel(),
                " entries for ", E, " edges");
  CheckedIndices c;
  c.numW = indexed ? numFilterRows : E;
  c.srcs = indexValues("filterMessageSum (source)", edgeIndex.slice(0, 1).reshape({E}), numX);
  c.dsts = indexValues("filterMessageSum (target)", edgeIndex.slice(1, 2).reshape({E}), numNodes);
  if (indexed) c.rows = indexValues("filterMessageSum (filter row)", filterIndex.reshape({E}), c.numW);
  return c;
}

Variable filterMessageSumOver(const Variable& x, const Variable& filter, const Tensor& plan,
                              const Variable& filterScale, const CheckedIndices* own);
}  // namespace

Tensor messagePlan(const Tensor& edgeIndex, int64_t numNodes, int64_t numX, const Tensor& filterIndex,
                   int64_t numFilterRows) {
  const CheckedIndices c = checkedIndices(edgeIndex, numNodes, numX, filterIndex, numFilterRows);
  return packPlan(c.srcs, c.dsts, c.rows, numNodes, numX, c.numW);
}

// Its own indices (no shared plan): the backward saves the three checked index copies, as a compiled graph
// keeps them (the simulated IPU's memory plans count them), and builds its groupings again from them.
Variable filterMessageSum(const Variable& x, const Variable& filter, const Tensor& edgeIndex, int64_t numNodes,
                          const Tensor& filterIndex, const Variable& filterScale) {
  checkRank2Float("filterMessageSum", x.value());
  const CheckedIndices c = checkedIndices(edgeIndex, numNodes, x.value().dim(0), filterIndex,
                                          filter.value().rank() == 2 ? filter.value().dim(0) : 0);
  return filterMessageSumOver(x, filter, packPlan(c.srcs, c.dsts, c.rows, numNodes, x.value().dim(0), c.numW),
                              filterScale, &c);
}

Variable filterMessageSum(const Variable& x, const Variable& filter, const Tensor& plan, const Variable& filterScale) {
  return filterMessageSumOver(x, filter, plan, filterScale, nullptr);
}

namespace {
Variable filterMessageSumOver(const Variable& x, const Variable& filter, const Tensor& plan,
                              const Variable& filterScale, const CheckedIndices* own) {
  const Tensor &X = x.value(), &W = filter.value();
  checkRank2Float("filterMessageSum", X);
  const PlanView v = viewOf(plan);
  const int64_t E = v.E, F = X.dim(1), numNodes = v.numNodes;
  const bool indexed = v.indexed, scaled = filterScale.defined();
  GNN_CHECK_ARG(X.dim(0) == v.numX, "filterMessageSum: x has ", X.dim(0), " rows, the plan's sources ", v.numX);
  GNN_CHECK_ARG(W.rank() == 2 && W.dim(0) == v.numW && W.dim(1) == F && W.dtype() == X.dtype(),
                "filterMessageSum: filters ", dtypeName(W.dtype()), " ", shapeString(W.shape()), " for ", E,
                " edges of ", F, " ", dtypeName(X.dtype()), " features", indexed ? " (indexed)" : "");
  GNN_CHECK_ARG(!scaled || (filterScale.value().numel() == W.dim(0) && filterScale.dtype() == X.dtype()),
                "filterMessageSum: filter scale ", dtypeName(filterScale.dtype()), " ", shapeString(filterScale.shape()),
                " for ", W.dim(0), " ", dtypeName(X.dtype()), " filter rows");
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({numNodes, F}, X.dtype());
    auto xm = X.matrix<T>();
    auto wm = W.matrix<T>();
    auto ym = Y.matrix<T>();
    const Tensor C = scaled ? filterScale.value() : Tensor();
    const T* c = scaled ? C.data<T>() : nullptr;
    const int64_t *src = v.src, *row = v.row;
    // Per target node, its messages in edge order starting from 0: the rounding of
    // scatterSum(mul(gatherRows(x), mul(w, scale))), the scaled filter rounded before its product with x.
    ops::gatherMultiplySum<T>(
        xm, [src](int64_t edge) { return src[edge]; }, wm, [row](int64_t edge) { return row ? row[edge] : edge; },
        v.dstPtr, v.dstPerm, E, ym, c);
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    const bool scaleGrad = scaled && filterScale.requiresGrad();
    OpInfo info{"filterMessageSum", (scaled ? 3 : 2) * E * F, E * (16 + 2 * F * elem) + (scaled ? E * elem : 0),
                static_cast<int64_t>(Y.nbytes()),
                (x.requiresGrad() ? (scaled ? 3 : 2) * E * F : 0) + (filter.requiresGrad() ? 2 * E * F : 0) +
                    (scaleGrad ? 2 * W.dim(0) * F : 0)};
    const bool needX = filter.requiresGrad() || scaleGrad, needW = x.requiresGrad() || scaleGrad;
    std::vector<Variable> inputs{x, filter};
    if (scaled) inputs.push_back(filterScale);
    // A shared plan is saved whole (read-only, one for every op over the same edges); the op's own indices as
    // they were (their groupings are built again in the backward).
    std::vector<Tensor> saved{needX ? X : Tensor(), needW ? W : Tensor(), C};
    if (own) {
      for (const Tensor& t : {own->srcs, own->dsts, own->rows}) saved.push_back(t);
    } else {
      saved.push_back(plan);
    }
    const int64_t numX = v.numX, numW = v.numW;
    return Variable::record(
        info, Y, std::move(inputs), std::move(saved),
        [numNodes, numX, numW](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const Tensor plan = saved.size() == 4 ? saved[3] : packPlan(saved[3], saved[4], saved[5], numNodes, numX, numW);
          const PlanView v = viewOf(plan);
          const int64_t *src = v.src, *dst = v.dst, *row = v.row;
          const T* c = saved[2].defined() ? saved[2].data<T>() : nullptr;
          const bool scaleGrad = in.size() > 2 && in[2].requiresGrad();
          const int64_t E = v.E, F = gy.dim(1);
          auto go = gy.matrix<T>();
          if (in[1].requiresGrad() || scaleGrad) {
            // gw[r] = sum over the edges e reading filter row r of gy[dst[e]] * x[src[e]], in edge order, times
            // scale[r] (the gradient of the scaled filter times the scale, rounded as mul's backward is). The
            // scale's gradient is the row's unscaled sum dotted with the filter row, as mul's.
            auto xm = saved[0].matrix<T>();
            Tensor GWS = Tensor::empty({numW, F}, gy.dtype());  // unscaled sums when the scale needs them
            auto gws = GWS.matrix<T>();
            const T* outScale = scaleGrad ? nullptr : c;
            if (!row) {
              parallelFor(E, grainFor(F), [&](int64_t b, int64_t e) {
                for (int64_t edge = b; edge < e; ++edge) {
                  gws.row(edge).array() = go.row(dst[edge]).array() * xm.row(src[edge]).array();
                  if (outScale) gws.row(edge) *= outScale[edge];
                }
              });
            } else {
              ops::gatherMultiplySum<T>(
                  go, [dst](int64_t edge) { return dst[edge]; }, xm, [src](int64_t edge) { return src[edge]; },
                  v.rowPtr, v.rowPerm, E, gws, nullptr, outScale);
            }
            if (scaleGrad) {
              auto wm = saved[1].matrix<T>();
              Tensor GC = Tensor::empty(in[2].shape(), gy.dtype());
              T* gc = GC.data<T>();
              parallelFor(numW, grainFor(F), [&](int64_t b, int64_t e) {
                for (int64_t r = b; r < e; ++r) gc[r] = gws.row(r).dot(wm.row(r));
              });
              in[2].addGrad(GC);
              if (in[1].requiresGrad()) {
                Tensor GW = Tensor::empty({numW, F}, gy.dtype());
                auto gw = GW.matrix<T>();
                parallelFor(numW, grainFor(F), [&](int64_t b, int64_t e) {
                  for (int64_t r = b; r < e; ++r) gw.row(r) = gws.row(r) * c[r];
                });
                in[1].addGrad(GW);
              }
            } else {
              in[1].addGrad(GWS);
            }
          }
          if (in[0].requiresGrad()) {  // gx[j] = sum over edges from j of gy[dst[e]] * w[e] (scaled), in edge order
            auto wm = saved[1].matrix<T>();
            Tensor G = Tensor::empty({v.numX, F}, gy.dtype());
            ops::gatherMultiplySum<T>(
                go, [dst](int64_t edge) { return dst[edge]; }, wm,
                [row](int64_t edge) { return row ? row[edge] : edge; }, v.srcPtr, v.srcPerm, E, G.matrix<T>(), c);
            in[0].addGrad(G);
          }
        });
  });
}

}  // namespace

Variable segmentSum(const Variable& x, const Tensor& ptr) { return segmentReduce("segmentSum", x, ptr, Reduce::Sum); }
Variable segmentMean(const Variable& x, const Tensor& ptr) {
  return segmentReduce("segmentMean", x, ptr, Reduce::Mean);
}
Variable segmentMax(const Variable& x, const Tensor& ptr) { return segmentReduce("segmentMax", x, ptr, Reduce::Max); }

Variable scatterSum(const Variable& x, const Tensor& index, int64_t numOut) {
  return scatterReduce("scatterSum", x, index, numOut, Reduce::Sum);
}
Variable scatterMean(const Variable& x, const Tensor& index, int64_t numOut) {
  return scatterReduce("scatterMean", x, index, numOut, Reduce::Mean);
}
Variable scatterMax(const Variable& x, const Tensor& index, int64_t numOut) {
  return scatterReduce("scatterMax", x, index, numOut, Reduce::Max);
}

Variable segmentSoftmax(const Variable& x, const Tensor& ptr) {
  const Tensor& X = x.value();
  checkRank2Float("segmentSoftmax", X);
  std::vector<int64_t> p = ptrValues("segmentSoftmax", ptr, X.dim(0));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    auto xm = X.matrix<T>();
    auto ym = Y.matrix<T>();
    const int64_t S = static_cast<int64_t>(p.size()) - 1;
    const int64_t grain = grainFor((p.back() + S) / std::max<int64_t>(S, 1) * X.dim(1));
    parallelFor(S, grain, [&](int64_t b, int64_t e) {
      for (int64_t s = b; s < e; ++s) {
        int64_t lo = p[s], n = p[s + 1] - p[s];
        if (n == 0) continue;
        auto blk = xm.middleRows(lo, n).array();
        auto mx = blk.colwise().maxCoeff().eval();
        auto ex = (blk.rowwise() - mx).exp().eval();
        ym.middleRows(lo, n).array() = ex.rowwise() / ex.colwise().sum();
      }
    });
    const int64_t bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"segmentSoftmax", 12 * X.numel(), bytes, bytes, 4 * X.numel()};
    return Variable::record(info, Y, {x}, {Y, indexTensor(p)}, [](const Tensor& gy, std::vector<GradInput>& in,
                                                                  const std::vector<Tensor>& saved) {
      const Tensor& Y = saved[0];
      const int64_t* p = saved[1].data<int64_t>();
      const int64_t S = saved[1].numel() - 1;
      // gx = y * (gy - sum_segment(gy * y)), per column.
      Tensor G = Tensor::empty(Y.shape(), Y.dtype());
      auto ym = Y.matrix<T>();
      auto go = gy.matrix<T>();
      auto gm = G.matrix<T>();
      const int64_t grain = grainFor((p[S] + S) / std::max<int64_t>(S, 1) * ym.cols());
      parallelFor(S, grain, [&](int64_t b, int64_t e) {
        for (int64_t s = b; s < e; ++s) {
          int64_t lo = p[s], n = p[s + 1] - p[s];
          if (n == 0) continue;
          auto yb = ym.middleRows(lo, n).array();
          auto gb = go.middleRows(lo, n).array();
          auto dot = (yb * gb).colwise().sum().eval();
          gm.middleRows(lo, n).array() = yb * (gb.rowwise() - dot);
        }
      });
      in[0].addGrad(G);
    });
  });
}

namespace {
// Rows per parallel chunk so that a chunk holds ~64k multiply-adds: small products stay on one thread.
// Depends only on the shapes, so results do not depend on the thread count.
int64_t spmmRowChunk(const SparseMatrix& a, int64_t f) {
  int64_t perRow = std::max<int64_t>(1, a.nnz() / std::max<int64_t>(1, a.rows())) * std::max<int64_t>(f, 1);
  return grainFor(perRow, 16);
}

// Entries ahead whose x row is prefetched: the rows of a sparse product are scattered through x, and the next
// entries' rows are known early (the column indices), so their loads can start a few entries in advance.
constexpr int kSpmmPrefetch = 8;

// One row block of out = A x with the feature width fixed at compile time (the compiler then keeps a row of out
// in registers, vectorised along the features). Plain arrays, not Eigen rows: Eigen fixes its vector width when
// the library is compiled (SSE2 in a portable build), the compiler's own vectorisation follows each clone's
// instruction set. Widths that are whole Lanes (16, 32, 64 floats) keep the row in Lanes: the compiler kept a
// 16-float row in four 128-bit registers even in the AVX-512 clone (Cora's portable epoch 3% slower).
template <class T, int W>
GNN_CPU_CLONES void spmmRows(const int64_t* __restrict rp, const int32_t* __restrict ci, const T* __restrict v,
                             const T* __restrict xp, T* __restrict op, int64_t b, int64_t e) {
  if constexpr (std::is_same_v<T, float> && W % ops::Lanes::kWidth == 0) {
    constexpr int64_t L = W / ops::Lanes::kWidth;
    for (int64_t i = b; i < e; ++i) {
      ops::Lanes acc[L];
      for (int64_t l = 0; l < L; ++l) acc[l] = ops::Lanes::splat(0.0f);
      for (int64_t k = rp[i]; k < rp[i + 1]; ++k) {
        if (k + kSpmmPrefetch < rp[i + 1]) __builtin_prefetch(xp + int64_t{ci[k + kSpmmPrefetch]} * W);
        const float w = v[k];
        const float* xr = xp + int64_t{ci[k]} * W;
        for (int64_t l = 0; l < L; ++l) acc[l] = acc[l] + w * ops::Lanes::load(xr + l * ops::Lanes::kWidth);
      }
      for (int64_t l = 0; l < L; ++l) acc[l].store(op + i * W + l * ops::Lanes::kWidth);
    }
    return;
  }
  for (int64_t i = b; i < e; ++i) {
    T acc[W];
    for (int j = 0; j < W; ++j) acc[j] = T(0);
    for (int64_t k = rp[i]; k < rp[i + 1]; ++k) {
      if (W >= 8 && k + kSpmmPrefetch < rp[i + 1]) __builtin_prefetch(xp + int64_t{ci[k + kSpmmPrefetch]} * W);
      const T w = v[k];
      const T* __restrict xr = xp + int64_t{ci[k]} * W;
      for (int j = 0; j < W; ++j) acc[j] = ops::mulAdd(w, xr[j], acc[j]);
    }
    for (int j = 0; j < W; ++j) op[i * W + j] = acc[j];
  }
}

// Any other width F: each row's product in strips of S columns (S = 16, or 8 below 16 columns), up to G strips
// at once in registers during one pass over the row's entries (a strip of S floats is one or two vector
// registers); the last strip ends at column F, overlapping the one before when S does not divide F (the
// overlapped columns are computed twice, by the same instructions over the same entries in the same order).
// x's row is read once per group of strips. The earlier scalar loop over F kept the row in memory (a load and a
// store per term).
template <class T, int S, int G>
GNN_CPU_CLONES void spmmStrips(const int64_t* __restrict rp, const int32_t* __restrict ci, const T* __restrict v,
                               const T* __restrict xp, T* __restrict op, int64_t F, int64_t b, int64_t e) {
  const int64_t strips = (F + S - 1) / S;
  for (int64_t i = b; i < e; ++i) {
    for (int64_t s0 = 0; s0 < strips; s0 += G) {
      const int64_t n = std::min<int64_t>(G, strips - s0);
      int64_t col[G];
      for (int g = 0; g < G; ++g) col[g] = std::min((s0 + std::min<int64_t>(g, n - 1)) * S, F - S);
      T acc[G][S];
      for (int g = 0; g < G; ++g)
        for (int j = 0; j < S; ++j) acc[g][j] = T(0);
      for (int64_t k = rp[i]; k < rp[i + 1]; ++k) {
        if (k + kSpmmPrefetch < rp[i + 1]) __builtin_prefetch(xp + int64_t{ci[k + kSpmmPrefetch]} * F + col[0]);
        const T w = v[k];
        const T* __restrict xr = xp + int64_t{ci[k]} * F;
        for (int g = 0; g < G; ++g)
          for (int j = 0; j < S; ++j) acc[g][j] = ops::mulAdd(w, xr[col[g] + j], acc[g][j]);
      }
      for (int g = 0; g < n; ++g)
        for (int j = 0; j < S; ++j) op[i * F + col[g] + j] = acc[g][j];
    }
  }
}

template <class T>
void spmmInto(const SparseMatrix& a, ConstMatrixMap<T> x, MatrixMap<T> out) {
  const int64_t* rp = a.rowPtr().data();
  const int32_t* ci = a.colIdx().data();
  const T* v = a.values().data<T>();
  const T* xp = x.data();
  T* op = out.data();
  const int64_t F = x.cols();
  if (F == 0) return;
  parallelFor(a.rows(), spmmRowChunk(a, F), [&](int64_t b, int64_t e) {
    switch (F) {
      case 1: return spmmRows<T, 1>(rp, ci, v, xp, op, b, e);
      case 2: return spmmRows<T, 2>(rp, ci, v, xp, op, b, e);
      case 3: return spmmRows<T, 3>(rp, ci, v, xp, op, b, e);
      case 4: return spmmRows<T, 4>(rp, ci, v, xp, op, b, e);
      case 5: return spmmRows<T, 5>(rp, ci, v, xp, op, b, e);
      case 6: return spmmRows<T, 6>(rp, ci, v, xp, op, b, e);
      case 7: return spmmRows<T, 7>(rp, ci, v, xp, op, b, e);
      case 8: return spmmRows<T, 8>(rp, ci, v, xp, op, b, e);
      case 16: return spmmRows<T, 16>(rp, ci, v, xp, op, b, e);
      case 32: return spmmRows<T, 32>(rp, ci, v, xp, op, b, e);
      case 64: return spmmRows<T, 64>(rp, ci, v, xp, op, b, e);
      default:
        if (F < 16) return spmmStrips<T, 8, 2>(rp, ci, v, xp, op, F, b, e);
        if (F <= 32) return spmmStrips<T, 16, 2>(rp, ci, v, xp, op, F, b, e);
        if (F <= 48) return spmmStrips<T, 16, 3>(rp, ci, v, xp, op, F, b, e);
        return spmmStrips<T, 16, 4>(rp, ci, v, xp, op, F, b, e);
    }
  });
}
}  // namespace

Variable spmm(const SparseMatrix& a, const Variable& x) {
  const Tensor& X = x.value();
  checkRank2Float("spmm", X);
  GNN_CHECK_ARG(a.cols() == X.dim(0), "spmm: sparse [", a.rows(), ", ", a.cols(), "] times dense ",
                shapeString(X.shape()), " do not chain");
  GNN_CHECK_ARG(a.dtype() == X.dtype(), "spmm: sparse values are ", dtypeName(a.dtype()), " but x is ",
                dtypeName(X.dtype()));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({a.rows(), X.dim(1)}, X.dtype());
    spmmInto<T>(a, X.matrix<T>(), Y.matrix<T>());
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"spmm", 2 * a.nnz() * X.dim(1), a.nnz() * (12 + elem) + static_cast<int64_t>(X.nbytes()),
                static_cast<int64_t>(Y.nbytes()), 2 * a.nnz() * X.dim(1)};
    // The sparse matrix is a constant of the graph (held by its owner, e.g. GCNConv's cache), not an
    // activation: the closure keeps a handle to it, and its values are declared so they are counted.
    return Variable::record(info, Y, {x}, {a.values()}, [a](const Tensor& gy, std::vector<GradInput>& in,
                                                           const std::vector<Tensor>&) {
      const SparseMatrix& at = a.transposed();
      Tensor G = Tensor::empty({at.rows(), gy.dim(1)}, gy.dtype());
      spmmInto<T>(at, gy.matrix<T>(), G.matrix<T>());
      in[0].addGrad(G);
    });
  });
}

Tensor countsToPtr(const std::vector<int64_t>& counts) {
  Tensor p({static_cast<int64_t>(counts.size()) + 1}, DType::I64);
  int64_t* d = p.data<int64_t>();
  d[0] = 0;
  for (size_t i = 0; i < counts.size(); ++i) d[i + 1] = d[i] + counts[i];
  return p;
}

Tensor ptrToSortedIndex(const Tensor& ptr) {
  GNN_CHECK_ARG(ptr.rank() == 1 && ptr.numel() >= 1, "ptrToSortedIndex: ptr must be rank 1 with at least one entry");
  const int64_t rows = static_cast<int64_t>(ptr.at(ptr.numel() - 1));
  return rowsOfSegments(ptrValues("ptrToSortedIndex", ptr, rows));
}

Tensor sortedIndexToPtr(const Tensor& sortedIndex, int64_t numSegments) {
  Tensor index64 = indexValues("sortedIndexToPtr", sortedIndex, numSegments);
  const int64_t* idx = std::as_const(index64).data<int64_t>();
  std::vector<int64_t> counts(static_cast<size_t>(numSegments), 0);
  for (int64_t i = 0; i < index64.numel(); ++i) {
    GNN_CHECK_ARG(i == 0 || idx[i] >= idx[i - 1], "sortedIndexToPtr: index is not sorted at position ", i);
    ++counts[idx[i]];
  }
  return countsToPtr(counts);
}

}  // namespace gnn
