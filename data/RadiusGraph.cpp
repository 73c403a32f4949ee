#include "data/RadiusGraph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "gnn/system/Check.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {

struct Neighbor {
  double d2;
  int64_t j;
  bool operator<(const Neighbor& o) const { return d2 < o.d2 || (d2 == o.d2 && j < o.j); }
};

// Keeps the nearest `limit` of `cand` (all when limit <= 0) in order of distance, then index, and appends
// them as edges j -> i.
void emit(int64_t i, std::vector<Neighbor>& cand, int64_t limit, std::vector<int64_t>& src,
          std::vector<int64_t>& dst) {
  const size_t keep = limit > 0 ? std::min(cand.size(), static_cast<size_t>(limit)) : cand.size();
  std::partial_sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(keep), cand.end());
  for (size_t k = 0; k < keep; ++k) {
    src.push_back(cand[k].j);
    dst.push_back(i);
  }
}

}  // namespace

Tensor radiusGraph(const Tensor& pos, double cutoff, int64_t maxNeighbors, int64_t cellListFrom) {
  GNN_CHECK_ARG(pos.defined() && pos.rank() == 2 && pos.dim(1) == 3 && pos.isFloating(),
                "radiusGraph: positions must be float [N, 3], got ",
                pos.defined() ? dtypeName(pos.dtype()) : "none", " ", pos.defined() ? shapeString(pos.shape()) : "");
  GNN_CHECK_ARG(cutoff > 0 && std::isfinite(cutoff), "radiusGraph: cutoff must be finite and > 0, got ", cutoff);
  const int64_t n = pos.dim(0);
  Tensor p64 = pos.to(DType::F64);
  const double* p = p64.data<double>();
  for (int64_t i = 0; i < 3 * n; ++i)
    GNN_CHECK_ARG(std::isfinite(p[i]), "radiusGraph: atom ", i / 3, " has a non-finite coordinate");
  const double c2 = cutoff * cutoff;
  auto dist2 = [&](int64_t a, int64_t b) {
    const double dx = p[3 * a] - p[3 * b], dy = p[3 * a + 1] - p[3 * b + 1], dz = p[3 * a + 2] - p[3 * b + 2];
    return dx * dx + dy * dy + dz * dz;
  };
  std::vector<int64_t> src, dst;
  std::vector<Neighbor> cand;
  if (n < cellListFrom) {
    for (int64_t i = 0; i < n; ++i) {
      cand.clear();
      for (int64_t j = 0; j < n; ++j)
        if (j != i) {
          const double d2 = dist2(i, j);
          if (d2 < c2) cand.push_back({d2, j});
        }
      emit(i, cand, maxNeighbors, src, dst);
    }
  } else {
    // Cubes of side `cutoff`: every neighbour of an atom lies in its cube or one of the 26 around it.
    double lo[3] = {p[0], p[1], p[2]};
    for (int64_t i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d) lo[d] = std::min(lo[d], p[3 * i + d]);
    auto cellOf = [&](int64_t i) {
      std::array<int64_t, 3> c;
      for (int d = 0; d < 3; ++d) c[d] = static_cast<int64_t>(std::floor((p[3 * i + d] - lo[d]) / cutoff));
      return c;
    };
    auto key = [](int64_t x, int64_t y, int64_t z) {
      return (static_cast<uint64_t>(x) * 73856093u) ^ (static_cast<uint64_t>(y) * 19349663u) ^
             (static_cast<uint64_t>(z) * 83492791u);
    };
    std::unordered_map<uint64_t, std::vector<int64_t>> cells;
    std::vector<std::array<int64_t, 3>> cellIdx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      cellIdx[i] = cellOf(i);
      cells[key(cellIdx[i][0], cellIdx[i][1], cellIdx[i][2])].push_back(i);
    }
    for (int64_t i = 0; i < n; ++i) {
      cand.clear();
      const auto& ci = cellIdx[i];
      for (int64_t dx = -1; dx <= 1; ++dx)
        for (int64_t dy = -1; dy <= 1; ++dy)
          for (int64_t dz = -1; dz <= 1; ++dz) {
            if (ci[0] + dx < 0 || ci[1] + dy < 0 || ci[2] + dz < 0) continue;
            auto it = cells.find(key(ci[0] + dx, ci[1] + dy, ci[2] + dz));
            if (it == cells.end()) continue;
            for (int64_t j : it->second) {
              // A hash collision can put a far cube's atoms here: the cube test keeps only true neighbours.
              const auto& cj = cellIdx[j];
              if (j == i || cj[0] != ci[0] + dx || cj[1] != ci[1] + dy || cj[2] != ci[2] + dz) continue;
              const double d2 = dist2(i, j);
              if (d2 < c2) cand.push_back({d2, j});
            }
          }
      emit(i, cand, maxNeighbors, src, dst);
    }
  }
  const int64_t e = static_cast<int64_t>(src.size());
  Tensor out({2, e}, DType::I64);
  std::copy(src.begin(), src.end(), out.data<int64_t>());
  std::copy(dst.begin(), dst.end(), out.data<int64_t>() + e);
  return out;
}

RadiusGraphDataset::RadiusGraphDataset(std::shared_ptr<const Dataset> base, double cutoff, int64_t maxNeighbors)
    : base_(std::move(base)), cutoff_(cutoff), maxNeighbors_(maxNeighbors), edges_(base_->size()) {
  const int64_t n = static_cast<int64_t>(base_->size());
  std::vector<std::string> errors(edges_.size());
  parallelFor(n, 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      try {
        Graph g = base_->get(static_cast<size_t>(i));
        if (!g.pos.defined())
          throw std::invalid_argument("no atom positions (build the dataset from SDF or XYZ, or with conformers)");
        edges_[i] = radiusGraph(g.pos, cutoff_, maxNeighbors_);
      } catch (const std::exception& ex) {
        errors[i] = ex.what();
      }
    }
  });
  for (size_t i = 0; i < errors.size(); ++i)
    if (!errors[i].empty()) throw std::invalid_argument("graph " + std::to_string(i) + ": " + errors[i]);
}

Graph RadiusGraphDataset::get(size_t i) const {
  Graph g = base_->get(i);
  g.edgeIndex = edges_.at(i);
  g.edgeAttr = Tensor();
  return g;
}

}  // namespace gnn
