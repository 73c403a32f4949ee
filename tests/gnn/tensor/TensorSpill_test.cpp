// TensorSpill: a tensor parked in a temporary file comes back with the same shape, dtype and bits; a tensor
// that would free nothing (shared, a view, small) is left alone; nothing is left in the temporary folder.
#include "gnn/tensor/TensorSpill.h"

#include <gtest/gtest.h>

#include <filesystem>


namespace gnn {
namespace {

size_t filesIn(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.path().filename().string().rfind("gnn_spill", 0) == 0;
  return n;
}

TEST(TensorSpill, ATensorComesBackWithItsBitsAndItsMemoryIsFreedMeanwhile) {
  Tensor t = Tensor::empty({1000, 37});
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = static_cast<float>(k % 977) * 0.37f - 11.0f;
  Tensor i = Tensor::empty({2, 5000}, DType::I64);
  for (int64_t k = 0; k < i.numel(); ++k) i.data<int64_t>()[k] = k * 7919 - 123456789;
  const Tensor tRef = t.clone(), iRef = i.clone();
  const size_t before = filesIn(std::filesystem::temp_directory_path());
  {
    TensorSpill a(t, 0), b(i, 0);
    ASSERT_TRUE(a.spilled());
    ASSERT_TRUE(b.spilled());
    EXPECT_EQ(a.bytes(), tRef.nbytes());
    EXPECT_FALSE(t.defined()) << "the storage was not released";
    EXPECT_FALSE(i.defined());
    a.restore();  // explicitly
    EXPECT_TRUE(t.bitEqual(tRef));
    EXPECT_FALSE(a.spilled());
  }  // b by its destructor
  EXPECT_TRUE(i.bitEqual(iRef));
  EXPECT_EQ(filesIn(std::filesystem::temp_directory_path()), before);
}

TEST(TensorSpill, WhatWouldFreeNothingStaysInMemory) {
  Tensor t = Tensor::zeros({256, 256});
  Tensor shared = t;  // a second owner: spilling would free nothing
  {
    TensorSpill s(t, 0);
    EXPECT_FALSE(s.spilled());
    EXPECT_TRUE(t.defined());
  }
  shared = Tensor();
  {
    TensorSpill s(t);  // 256 KB, below the default 64 MB floor
    EXPECT_FALSE(s.spilled());
  }
  Tensor rows = t.slice(10, 20);  // a view of part of t's storage
  {
    TensorSpill s(rows, 0);
    EXPECT_FALSE(s.spilled());
    EXPECT_TRUE(rows.defined());
  }
  Tensor none;
  TensorSpill s(none, 0);
  EXPECT_FALSE(s.spilled());
}

}  // namespace
}  // namespace gnn
