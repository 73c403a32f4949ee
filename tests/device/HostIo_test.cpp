// What crosses the host link (device/HostIo.h), on its own: a batch's bytes with 64-bit values streamed as 32-bit;
// --eight-bit-io's integer features narrowed to uint8 and widened back to the same values on the device (Graphormer's
// node-pair fields with their column offsets and unreachable sentinel included), a value that does not fit refused
// naming the field, micro-batch and value; fp16's float inputs rounded to half in copies, targets left in fp32.
#include "device/HostIo.h"

#include <gtest/gtest.h>

#include <string>

#include "../models/GraphormerMolecules.h"
#include "gnn/nn/Init.h"
#include "gnn/tensor/HalfPrecision.h"
#include "loaders/BatchFields.h"

namespace gnn {
namespace {

// Four encoded PCQM4Mv2-style molecules (spatial_pos, edge_input), each with float coordinates.
Batch molecules() {
  std::vector<Graph> gs = test::pcqmStyle(4, 30);
  Generator gen(7);
  for (Graph& g : gs) g.pos = init::normal({g.numNodes, 3}, 1.5, gen);
  return test::batchOf(gs, 30);
}

// Every field's tensor, by name, as the batch holds it.
std::vector<std::pair<std::string, Tensor>> fieldsOf(const Batch& b) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const BatchField& f : batchFields())
    if ((b.*f.inBatch).defined()) out.emplace_back(f.name, b.*f.inBatch);
  for (const CollatorField& f : collatorFields())
    if ((b.*f.inBatch).defined()) out.emplace_back(f.name, b.*f.inBatch);
  return out;
}

TEST(HostIo, SixtyFourBitValuesCrossAsThirtyTwo) {
  const Batch b = molecules();
  int64_t want = 0, wide = 0;
  for (const auto& [name, t] : fieldsOf(b)) {
    const bool bits64 = t.dtype() == DType::I64 || t.dtype() == DType::F64;
    want += static_cast<int64_t>(t.nbytes()) / (bits64 ? 2 : 1);
    wide += bits64;
  }
  EXPECT_GT(wide, 0);
  EXPECT_EQ(hostLinkBytes(b), want);
}

TEST(HostIo, EightBitFeaturesWidenBackToTheSameValues) {
  const Batch original = molecules();
  ASSERT_TRUE(original.spatialPos.defined());
  ASSERT_TRUE(original.edgeInput.defined());
  Batch b = original;
  const int64_t bytes = narrowIntegerFeatures(b, 0);
  EXPECT_LT(bytes, hostLinkBytes(original));
  const auto before = fieldsOf(original), after = fieldsOf(b);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].second.dtype(), after[i].second.dtype()) << before[i].first;
    EXPECT_TRUE(before[i].second.bitEqual(after[i].second)) << before[i].first;
  }
}

TEST(HostIo, AFeatureThatDoesNotFitInEightBitsIsNamed) {
  Batch b = molecules();
  b.x = b.x.clone();
  ASSERT_EQ(b.x.dtype(), DType::I64);
  b.x.data<int64_t>()[5] = 300;
  try {
    narrowIntegerFeatures(b, 2);
    ADD_FAILURE() << "300 crossed as a uint8";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const char* part : {"--eight-bit-io", "field 'x'", "micro-batch 2", "holds 300", "element 5"})
      EXPECT_NE(what.find(part), std::string::npos) << part << " in: " << what;
  }
}

TEST(HostIo, HalfInputsAreRoundedInCopiesAndTargetsKeepTheirBits) {
  const Batch original = molecules();
  ASSERT_TRUE(original.pos.defined());
  const Tensor pos = original.pos.clone(), y = original.y.clone();
  Batch b = original;  // shares the request's tensors, as a micro-batch of it does
  const int64_t saved = roundInputsToHalf(b);
  EXPECT_EQ(saved, static_cast<int64_t>(pos.nbytes()) / 2);
  EXPECT_TRUE(original.pos.bitEqual(pos)) << "the caller's request changed";
  Tensor half = pos.clone();
  roundTensorToHalf(half, Rounding::Half);
  EXPECT_TRUE(b.pos.bitEqual(half));
  EXPECT_FALSE(b.pos.bitEqual(pos));
  EXPECT_TRUE(b.y.bitEqual(y));
}

}  // namespace
}  // namespace gnn
