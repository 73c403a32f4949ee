// knnGraph: every real atom's neighbours are radiusGraph's on its molecule alone (sizes on both sides of k
// and of radiusGraph's cell list, ties in distance broken by index alike), padding slots and rows, what it
// records (FLOPs, bytes, nothing on the tape), 1 against 2 threads, and its refusals. (The op table covers
// ops with a gradient; this one has an integer output and none.)
#include <gtest/gtest.h>

#include <cmath>

#include "data/RadiusGraph.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

// Molecules of `sizes` atoms concatenated, then `padding` padding atoms (at the origin, as the loaders pad
// pos) in a graph of their own.
struct PaddedAtoms {
  Tensor pos, batch, mask;
  std::vector<Tensor> molecules;  // each molecule's positions alone
  std::vector<int64_t> offset;
};

// Coordinates on a grid of step 0.5 inside a box that grows with the molecule: many exactly equal distances,
// so ties are common, and a cutoff of 2.6 leaves some atoms fewer than k neighbours and others more.
PaddedAtoms paddedAtoms(const std::vector<int64_t>& sizes, int64_t padding, uint64_t seed) {
  Generator gen(seed);
  PaddedAtoms a;
  std::vector<float> pos;
  std::vector<int64_t> batch;
  std::vector<uint8_t> mask;
  for (size_t m = 0; m < sizes.size(); ++m) {
    const int64_t n = sizes[m];
    const double side = 1.0 + std::cbrt(static_cast<double>(n)) * 1.5;
    Tensor u = init::uniform({n, 3}, 0, side, gen, DType::F64);
    std::vector<float> mol;
    for (int64_t i = 0; i < 3 * n; ++i) mol.push_back(static_cast<float>(std::round(u.at(i) * 2) / 2));
    a.offset.push_back(static_cast<int64_t>(batch.size()));
    a.molecules.push_back(Tensor::fromVector(mol, {n, 3}));
    pos.insert(pos.end(), mol.begin(), mol.end());
    batch.insert(batch.end(), static_cast<size_t>(n), static_cast<int64_t>(m));
    mask.insert(mask.end(), static_cast<size_t>(n), uint8_t{1});
  }
  pos.insert(pos.end(), static_cast<size_t>(3 * padding), 0.0f);
  batch.insert(batch.end(), static_cast<size_t>(padding), static_cast<int64_t>(sizes.size()));
  mask.insert(mask.end(), static_cast<size_t>(padding), uint8_t{0});
  const int64_t total = static_cast<int64_t>(batch.size());
  a.pos = Tensor::fromVector(pos, {total, 3});
  a.batch = Tensor::fromVector(batch, {total});
  a.mask = Tensor::fromVector(mask, {total});
  return a;
}

constexpr double kCutoff = 2.6;
constexpr int64_t kNeighbours = 7;

TEST(KnnGraph, EveryRealAtomHasRadiusGraphsNeighboursOnItsMoleculeAlone) {
  // One atom alone, small molecules, and one above radiusGraph's cell-list threshold.
  const std::vector<int64_t> sizes{1, 4, 13, 30, kCellListAtoms + 20, 9};
  const PaddedAtoms a = paddedAtoms(sizes, 5, 3);
  const int64_t n = a.pos.dim(0), k = kNeighbours, firstPad = n - 5;
  const Tensor e = knnGraph(a.pos, a.batch, a.mask, k, kCutoff);
  ASSERT_EQ(e.shape(), (Shape{2, n * k}));
  const int64_t* src = e.data<int64_t>();
  const int64_t* dst = src + n * k;
  int64_t full = 0, partial = 0, ties = 0;
  for (size_t m = 0; m < sizes.size(); ++m) {
    const Tensor ref = radiusGraph(a.molecules[m], kCutoff, k);
    const int64_t* rs = ref.data<int64_t>();
    const int64_t* rd = rs + ref.dim(1);
    int64_t r = 0;
    for (int64_t i = 0; i < sizes[m]; ++i) {
      const int64_t row = a.offset[m] + i;
      int64_t s = 0;
      for (; r < ref.dim(1) && rd[r] == i; ++r, ++s) {
        EXPECT_EQ(src[row * k + s], rs[r] + a.offset[m])
            << "molecule " << m << ", atom " << i << ", slot " << s;
        EXPECT_EQ(dst[row * k + s], row);
      }
      (s == k ? full : partial) += 1;
      for (; s < k; ++s) {  // empty slots: self-loops on the first padding atom
        EXPECT_EQ(src[row * k + s], firstPad) << "molecule " << m << ", atom " << i << ", slot " << s;
        EXPECT_EQ(dst[row * k + s], firstPad);
      }
    }
    // Ties: consecutive neighbours of one atom at exactly the same distance (the grid makes them common).
    Tensor p = a.molecules[m].to(DType::F64);
    auto d2 = [&](int64_t x, int64_t y) {
      double s = 0;
      for (int c = 0; c < 3; ++c)
        s += (p.at(3 * x + c) - p.at(3 * y + c)) * (p.at(3 * x + c) - p.at(3 * y + c));
      return s;
    };
    for (int64_t t = 1; t < ref.dim(1); ++t)
      ties += rd[t] == rd[t - 1] && d2(rd[t], rs[t]) == d2(rd[t], rs[t - 1]);
  }
  EXPECT_GT(full, 10) << "atoms with at least k neighbours within the cutoff";
  EXPECT_GT(partial, 10) << "atoms with fewer";
  EXPECT_GT(ties, 10) << "neighbours tied in distance";
  for (int64_t row = firstPad; row < n; ++row)
    for (int64_t s = 0; s < k; ++s) {
      EXPECT_EQ(src[row * k + s], row) << "padding atom " << row;
      EXPECT_EQ(dst[row * k + s], row) << "padding atom " << row;
    }
}

TEST(KnnGraph, MorePaddingLeavesRealAtomsSlotsAndTwoThreadsMatchOne) {
  const PaddedAtoms tight = paddedAtoms({5, 17, 11}, 1, 8), loose = paddedAtoms({5, 17, 11}, 40, 8);
  const int64_t real = 33, k = kNeighbours;
  setNumThreads(1);
  const Tensor a = knnGraph(tight.pos, tight.batch, tight.mask, k, kCutoff);
  const Tensor b = knnGraph(loose.pos, loose.batch, loose.mask, k, kCutoff);
  setNumThreads(2);
  const Tensor c = knnGraph(loose.pos, loose.batch, loose.mask, k, kCutoff);
  setNumThreads(0);
  EXPECT_TRUE(b.bitEqual(c));
  // Real rows: the same sources; the same targets except empty slots, which point at the first padding atom
  // (the same index in both batches: padding starts after the real atoms).
  for (int64_t slot = 0; slot < real * k; ++slot) {
    EXPECT_EQ(a.data<int64_t>()[slot], b.data<int64_t>()[slot]) << slot;
    EXPECT_EQ(a.data<int64_t>()[a.dim(1) + slot], b.data<int64_t>()[b.dim(1) + slot]) << slot;
  }
}

TEST(KnnGraph, RecordsTheDistanceMatrixAndTopKAndNothingOnTheTape) {
  struct Tally : OpObserver {
    void onOp(const OpEvent& e) override {
      names.push_back(e.info->name);
      flops += e.flops;
      bytes += e.bytes;
      backward += e.info->backwardFlops;
      recorded = recorded || e.recorded;
    }
    std::vector<std::string> names;
    int64_t flops = 0, bytes = 0, backward = 0;
    bool recorded = false;
  } tally;
  const PaddedAtoms a = paddedAtoms({6, 9}, 3, 1);
  const int64_t n = a.pos.dim(0), k = 28;
  {
    ObserverScope watch(tally);
    knnGraph(a.pos, a.batch, a.mask, k, kCutoff);
  }
  EXPECT_EQ(tally.names, std::vector<std::string>{"knnGraph"});
  // 8 FLOPs a pair for the distance, ceil(log2(29)) = 5 comparisons a pair for the top 28.
  EXPECT_EQ(tally.flops, n * n * (8 + 5));
  // pos, batch (int32) and mask read; the float32 matrix written and read; int32 [2, N*k] written.
  EXPECT_EQ(tally.bytes, n * (12 + 4 + 1) + 2 * n * n * 4 + 2 * n * k * 4);
  EXPECT_EQ(tally.backward, 0);
  EXPECT_FALSE(tally.recorded);
}

void expectRefusal(const std::function<void()>& f, const std::string& words) {
  try {
    f();
    FAIL() << "accepted; expected an error naming '" << words << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(KnnGraph, RefusesBadShapesNamingThem) {
  const PaddedAtoms a = paddedAtoms({4, 3}, 2, 5);
  expectRefusal(
      [&] {
        knnGraph(Tensor({9, 2}, DType::F32), a.batch, a.mask, 3, kCutoff);
      },
      "pos must be float [N, 3]");
  expectRefusal(
      [&] {
        knnGraph(Tensor({9, 3}, DType::I64), a.batch, a.mask, 3, kCutoff);
      },
      "pos must be float [N, 3]");
  expectRefusal([&] { knnGraph(a.pos, a.batch.slice(0, 8), a.mask, 3, kCutoff); },
                "batch must be int64 [N] with N = 9");
  expectRefusal([&] { knnGraph(a.pos, a.batch, a.mask.slice(0, 4), 3, kCutoff); },
                "nodeMask must be uint8 [N]");
  expectRefusal([&] { knnGraph(a.pos, a.batch, a.mask, 0, kCutoff); },
                "k (neighbours per atom) must be >= 1, got 0");
  expectRefusal([&] { knnGraph(a.pos, a.batch, a.mask, 3, -1.0); }, "cutoff must be finite and > 0");
  // No padding atom, and an atom with fewer than k neighbours: nowhere to point its empty slots.
  const PaddedAtoms none = paddedAtoms({4, 3}, 0, 5);
  expectRefusal([&] { knnGraph(none.pos, none.batch, none.mask, 3, kCutoff); }, "no padding atom");
  expectRefusal([&] { knnGraph(none.pos, none.batch, Tensor(), 3, kCutoff); }, "--num-nodes");
}

}  // namespace
}  // namespace gnn
