#include "models/CategoricalEncoder.h"

#include <gtest/gtest.h>

#include "models/AtomEncoder.h"
#include "models/BondEncoder.h"

namespace gnn {
namespace {

TEST(CategoricalEncoder, SumOfOneEmbeddingPerColumn) {
  Generator g(1);
  CategoricalEncoder enc({3, 4, 2}, 5, g, DType::F64);
  Tensor x = Tensor::fromVector<int64_t>({0, 3, 1, 2, 0, 0}, {2, 3});
  Tensor out = enc.forward(x).value();
  Tensor w = enc.parameters().front().value();  // [3 + 4 + 2, 5]: the three tables stacked
  const int64_t offsets[3] = {0, 3, 7};
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t d = 0; d < 5; ++d) {
      double expect = 0;
      for (int64_t c = 0; c < 3; ++c) expect += w.at((offsets[c] + x.at(r * 3 + c)) * 5 + d);
      EXPECT_DOUBLE_EQ(out.at(r * 5 + d), expect);
    }
  EXPECT_THROW(enc.forward(Tensor::fromVector<int64_t>({0, 4, 0}, {1, 3})), std::invalid_argument);
  EXPECT_THROW(enc.forward(Tensor::fromVector<int64_t>({0, 1}, {1, 2})), std::invalid_argument);
}

TEST(CategoricalEncoder, OgbVocabularies) {
  Generator g(2);
  AtomEncoder atoms(8, g);
  BondEncoder bonds(8, g);
  EXPECT_EQ(atoms.parameters().front().value().dim(0), 119 + 5 + 12 + 12 + 10 + 6 + 6 + 2 + 2);
  EXPECT_EQ(bonds.parameters().front().value().dim(0), 5 + 6 + 2);
  // Xavier-uniform per table: the bound of the atomic-number table is sqrt(6 / (119 + 8)).
  Tensor w = atoms.parameters().front().value();
  double bound = std::sqrt(6.0 / 127.0), maxAbs = 0;
  for (int64_t i = 0; i < 119 * 8; ++i) maxAbs = std::max(maxAbs, std::abs(w.at(i)));
  EXPECT_LE(maxAbs, bound);
  EXPECT_GT(maxAbs, 0.9 * bound);
}

}  // namespace
}  // namespace gnn
