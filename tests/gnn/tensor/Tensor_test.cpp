#include "gnn/tensor/Tensor.h"

#include <gtest/gtest.h>

namespace gnn {
namespace {

TEST(Tensor, ShapesViewsAndConversions) {
  Tensor t = Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.dim(-1), 2);
  EXPECT_EQ(t.matrix<float>()(2, 1), 6);
  Tensor s = t.slice(1, 3);
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_EQ(s.at(0), 3);
  s.data<float>()[0] = 30;  // a slice shares storage
  EXPECT_EQ(t.at(2), 30);
  Tensor c = t.clone();
  c.data<float>()[0] = -1;
  EXPECT_EQ(t.at(0), 1);
  EXPECT_EQ(t.to(DType::I64).at(5), 6);
  EXPECT_EQ(t.reshape({6}).dim(0), 6);
  EXPECT_THROW(t.reshape({4}), std::invalid_argument);
  EXPECT_THROW(t.data<double>(), std::invalid_argument);
  EXPECT_THROW(Tensor({1, 1, 1, 1, 1}), std::invalid_argument);
  EXPECT_EQ(Tensor::zeros({2, 2}).flat<float>().sum(), 0);
}

}  // namespace
}  // namespace gnn
