// knnGraph: SchNet's radius graph built per micro-batch with static shapes, as published IPU runs of SchNet
// build it on the device (graphcore-research/hydronet-gnn, hydronet/model.py, KNNInteractionGraph: an [N, N]
// distance matrix over the micro-batch's padded atoms, masked, then topk of k per row, giving N*k edges). The
// neighbours are radiusGraph's (data/RadiusGraph.h) to the index: distances in double, nearest first, ties by
// index.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gnn/ops/Ops.h"
#include "gnn/system/Check.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {

struct KnnCandidate {
  double d2;
  int64_t j;
  bool operator<(const KnnCandidate& o) const { return d2 < o.d2 || (d2 == o.d2 && j < o.j); }
};

void checkKnnInputs(const Tensor& pos, const Tensor& batch, const Tensor& mask, int64_t k, double cutoff) {
  GNN_CHECK_ARG(pos.defined() && pos.rank() == 2 && pos.dim(1) == 3 && pos.isFloating(),
                "knnGraph: pos must be float [N, 3], got ", pos.defined() ? dtypeName(pos.dtype()) : "none",
                " ", pos.defined() ? shapeString(pos.shape()) : "");
  const int64_t n = pos.dim(0);
  GNN_CHECK_ARG(batch.defined() && batch.rank() == 1 && batch.dtype() == DType::I64 && batch.dim(0) == n,
                "knnGraph: batch must be int64 [N] with N = ", n, " (pos ", shapeString(pos.shape()),
                "), got ", batch.defined() ? dtypeName(batch.dtype()) : "none", " ",
                batch.defined() ? shapeString(batch.shape()) : "");
  GNN_CHECK_ARG(!mask.defined() || (mask.rank() == 1 && mask.dtype() == DType::U8 && mask.dim(0) == n),
                "knnGraph: nodeMask must be uint8 [N] with N = ", n, " (pos ", shapeString(pos.shape()),
                "), got ", mask.defined() ? dtypeName(mask.dtype()) : "", " ",
                mask.defined() ? shapeString(mask.shape()) : "");
  GNN_CHECK_ARG(k >= 1, "knnGraph: k (neighbours per atom) must be >= 1, got ", k);
  GNN_CHECK_ARG(cutoff > 0 && std::isfinite(cutoff), "knnGraph: cutoff must be finite and > 0, got ", cutoff);
}

// nearestSources: the nearest k sources of real atom i (same graph, real, within the cutoff) in order, into
// `out`.
void nearestSources(int64_t i, int64_t n, int64_t k, double c2, const double* p, const int64_t* g,
                    const uint8_t* real, std::vector<KnnCandidate>& out) {
  out.clear();
  for (int64_t j = 0; j < n; ++j) {
    if (j == i || g[j] != g[i] || !real[j]) continue;
    // radiusGraph's dist2(i, j): the same operations in the same order, so the same double.
    const double dx = p[3 * i] - p[3 * j], dy = p[3 * i + 1] - p[3 * j + 1], dz = p[3 * i + 2] - p[3 * j + 2];
    const double d2 = dx * dx + dy * dy + dz * dz;
    if (d2 < c2) out.push_back({d2, j});
  }
  const size_t keep = std::min(out.size(), static_cast<size_t>(k));
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end());
  out.resize(keep);
}

// What an IPU spends on it, per micro-batch of N atoms. FLOPs: 8 per pair for the squared distance (3
// differences, 3 products, 2 sums; the masks fold into the selection's comparisons), then topk, assumed a
// tournament that compares each entry of a row with ceil(log2(k + 1)) entries of its running top k. Bytes:
// pos, batch and the mask read; the float32 [N, N] matrix written once and read once by topk; the int32 [2,
// N*k] edges written (an IPU's indices are 32-bit).
OpInfo knnGraphCost(int64_t n, int64_t k) {
  const int64_t pairs = n * n;
  const int64_t compares = static_cast<int64_t>(std::ceil(std::log2(static_cast<double>(k) + 1.0)));
  return OpInfo{"knnGraph", pairs * (8 + compares), n * (3 * 4 + 4 + 1) + pairs * 4,
                pairs * 4 + 2 * n * k * 4, 0};
}

}  // namespace

Tensor knnGraph(const Tensor& pos, const Tensor& batch, const Tensor& nodeMask, int64_t k, double cutoff) {
  checkKnnInputs(pos, batch, nodeMask, k, cutoff);
  const int64_t n = pos.dim(0);
  const Tensor p64 = pos.to(DType::F64);
  const double* p = p64.data<double>();
  const int64_t* g = batch.data<int64_t>();
  std::vector<uint8_t> real(static_cast<size_t>(n), 1);
  if (nodeMask.defined())
    for (int64_t i = 0; i < n; ++i) real[i] = nodeMask.data<uint8_t>()[i] != 0;
  int64_t pad = -1;  // the first padding atom: where a real atom's empty slots point
  for (int64_t i = 0; i < n; ++i) {
    if (!real[i]) {
      if (pad < 0) pad = i;
      continue;
    }
    GNN_CHECK_ARG(std::isfinite(p[3 * i]) && std::isfinite(p[3 * i + 1]) && std::isfinite(p[3 * i + 2]),
                  "knnGraph: atom ", i, " has a non-finite coordinate");
  }
  Tensor out({2, n * k}, DType::I64);
  int64_t* src = out.data<int64_t>();
  int64_t* dst = src + n * k;
  // Per row: a real atom's neighbours when it has empty slots and no padding atom can fill them (-1: none).
  std::vector<int64_t> shortRow(static_cast<size_t>(n), -1);
  const double c2 = cutoff * cutoff;
  parallelFor(n, grainFor(8 * n), [&](int64_t b, int64_t e) {
    std::vector<KnnCandidate> near;
    for (int64_t i = b; i < e; ++i) {
      int64_t* si = src + i * k;
      int64_t* di = dst + i * k;
      if (!real[i]) {  // a padding atom's slots: its own self-loops, as the loaders pad edges
        std::fill(si, si + k, i);
        std::fill(di, di + k, i);
        continue;
      }
      nearestSources(i, n, k, c2, p, g, real.data(), near);
      const int64_t m = static_cast<int64_t>(near.size());
      for (int64_t s = 0; s < m; ++s) {
        si[s] = near[s].j;
        di[s] = i;
      }
      if (m < k && pad < 0) shortRow[i] = m;
      std::fill(si + m, si + k, pad);
      std::fill(di + m, di + k, pad);
    }
  });
  for (int64_t i = 0; i < n; ++i)
    GNN_CHECK_ARG(shortRow[i] < 0, "knnGraph: atom ", i, " has ", shortRow[i],
                  " neighbours within the cutoff, fewer than k = ", k, ", and the batch of ", n,
                  " atoms has no padding atom to point its empty slots at: use fixed-size "
                  "batches, with numNodes (--num-nodes) above the real atoms");
  return Variable::record(knnGraphCost(n, k), out, {}, {}, nullptr).value();
}

}  // namespace gnn
