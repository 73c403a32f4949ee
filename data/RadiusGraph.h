// RadiusGraph: the neighbour lists of geometric models (SchNet): for each atom, the atoms within a cutoff
// distance, at most maxNeighbors of them (the nearest; ties by index), as directed edges source -> target.
// Small molecules compare all pairs; above kCellListAtoms atoms a cell list (cubes of side cutoff) bounds the
// work by the atoms near each one. RadiusGraphDataset replaces a molecular dataset's bonds by these edges,
// computed once when it is opened, so batches carry them as ordinary fixed-size edges.
//
//   Tensor e = radiusGraph(g.pos, 10.0, 32);                    // [2, E], sorted by target, then distance
//   auto geo = std::make_shared<RadiusGraphDataset>(dataset, 10.0, 32, threads);
#pragma once
#include <memory>
#include <vector>

#include "data/Dataset.h"

namespace gnn {

/// Atoms from which radiusGraph switches from all pairs to a cell list. Measured with bench_core_ops
/// --benchmark_filter=RadiusGraph (10 A, 32 neighbours, organic density ~0.1 atoms/A^3, 2 cores): the two cost
/// the same up to 1,000 atoms (a 10 A sphere holds ~420 atoms, so a cell's 27 cubes cover most of such a
/// molecule and choosing the 32 nearest dominates); the cell list is 1.1x faster at 3,000 atoms and 1.4x at
/// 10,000. QM7 and PCQM4Mv2 molecules stay far below 150.
constexpr int64_t kCellListAtoms = 150;

/// pos float32/float64 [N, 3] -> int64 [2, E] (row 0 source, row 1 target): for each target i in order, the
/// sources j != i with |pos_j - pos_i| < cutoff, the nearest maxNeighbors (<= 0: all), by distance then index.
/// Throws std::invalid_argument for a bad shape or a non-finite coordinate (naming the atom).
/// cellListFrom: the atom count from which the cell list is used (benchmarks force either path).
Tensor radiusGraph(const Tensor& pos, double cutoff, int64_t maxNeighbors, int64_t cellListFrom = kCellListAtoms);

/// A dataset whose graphs' edges are radiusGraph(pos) (bond features dropped: edgeAttr undefined). Every
/// graph must carry positions; the constructor computes all neighbour lists (in parallel over graphs, the
/// same result for any thread count) and throws naming the first graph without positions.
class RadiusGraphDataset : public Dataset {
 public:
  RadiusGraphDataset(std::shared_ptr<const Dataset> base, double cutoff, int64_t maxNeighbors);
  size_t size() const override { return base_->size(); }
  Graph get(size_t i) const override;
  int64_t numNodes(size_t i) const override { return base_->numNodes(i); }
  int64_t numEdges(size_t i) const override { return edges_.at(i).dim(1); }
  double cutoff() const { return cutoff_; }
  int64_t maxNeighbors() const { return maxNeighbors_; }

 private:
  std::shared_ptr<const Dataset> base_;
  double cutoff_;
  int64_t maxNeighbors_;
  std::vector<Tensor> edges_;
};

}  // namespace gnn
