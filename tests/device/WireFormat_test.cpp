// The bytes processes exchange (device/WireFormat.h): values, strings and tensors read back as written; a message
// that ends early, has bytes left over or describes an impossible tensor is an error naming the exchange, never a
// crash or a huge allocation; an error crosses as itself (a non-finite loss keeps its kind, naming the rank).
#include "device/WireFormat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <thread>

#include "BitEqual.h"
#include "device/Device.h"
#include "ThreadRanks.h"

namespace gnn {
namespace {

TEST(WireFormat, ValuesStringsAndTensorsReadBackAsWritten) {
  ByteWriter w;
  w.put<double>(-2.5);
  w.put<int64_t>(7);
  w.putString("stage 1");
  w.putString("");
  const Tensor f = Tensor::fromVector<float>({1.5f, -0.0f, 3e-38f, 7.f, 8.f, 9.f}, {2, 3});
  const Tensor i = Tensor::fromVector<int64_t>({4, -5}, {2});
  const Tensor empty = Tensor::empty({0, 4}, DType::F64);
  w.putTensor(f);
  w.putTensor(Tensor());
  w.putTensor(i);
  w.putTensor(empty);
  ByteReader r(w.bytes(), "test message");
  EXPECT_EQ(r.get<double>(), -2.5);
  EXPECT_EQ(r.get<int64_t>(), 7);
  EXPECT_EQ(r.getString(), "stage 1");
  EXPECT_EQ(r.getString(), "");
  EXPECT_TRUE(r.getTensor().bitEqual(f));
  EXPECT_FALSE(r.getTensor().defined());
  EXPECT_TRUE(r.getTensor().bitEqual(i));
  const Tensor e = r.getTensor();
  EXPECT_EQ(e.shape(), (Shape{0, 4}));
  EXPECT_EQ(e.dtype(), DType::F64);
  EXPECT_NO_THROW(r.expectEnd());
}

void expectRefused(const std::string& bytes, const std::string& says) {
  ByteReader r(bytes, "the gradients of update 3");
  try {
    r.getTensor();
    r.expectEnd();
    ADD_FAILURE() << "accepted a message that should say '" << says << "'";
  } catch (const ProcessGroupError& e) {
    EXPECT_NE(std::string(e.what()).find("the gradients of update 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(WireFormat, ShortLongAndImpossibleMessagesAreErrorsNamingTheExchange) {
  ByteWriter w;
  w.putTensor(Tensor::fromVector<float>({1, 2, 3, 4}, {4}));
  const std::string whole = w.bytes();
  for (size_t cut : {size_t{1}, size_t{2}, size_t{10}, whole.size() - 1})
    expectRefused(whole.substr(0, cut), "ended early");
  expectRefused(whole + "x", "1 bytes left over");
  auto tensorHeader = [](uint8_t dtype, std::vector<int64_t> shape) {
    ByteWriter h;
    h.put<uint8_t>(1);
    h.put<uint8_t>(dtype);
    h.put<int64_t>(static_cast<int64_t>(shape.size()));
    for (int64_t d : shape) h.put<int64_t>(d);
    return h.bytes();
  };
  expectRefused(tensorHeader(99, {2}), "unknown dtype 99");
  expectRefused(tensorHeader(0, {-3}), "dimension of -3");
  // Shapes whose bytes the message does not hold, or that overflow 64 bits: refused before any allocation.
  expectRefused(tensorHeader(0, {1'000'000'000, 1'000'000'000}), "ended early");
  expectRefused(tensorHeader(1, {1LL << 40, 1LL << 40, 1LL << 40}), "ended early");
  ByteWriter rank;
  rank.put<uint8_t>(1);
  rank.put<uint8_t>(0);
  rank.put<int64_t>(int64_t{1} << 60);
  expectRefused(rank.bytes(), "rank");
}

TEST(WireFormat, AnErrorCrossesAsItselfNamingItsRank) {
  {
    ByteWriter w;
    putError(w, std::make_exception_ptr(NonFiniteLoss(NAN, 3, "micro-batch 3 of the host request")));
    ByteReader r(w.bytes(), "errors");
    bool caught = false;
    try {
      throwError(r, 1);
    } catch (const NonFiniteLoss& e) {
      caught = true;
      EXPECT_EQ(e.microBatch(), 3);
      EXPECT_NE(e.where().find("on MPI rank 1"), std::string::npos) << e.where();
    }
    EXPECT_TRUE(caught) << "a non-finite loss crossed as another kind of error";
  }
  ByteWriter w;
  putError(w, std::make_exception_ptr(std::invalid_argument("bad shape")));
  ByteReader r(w.bytes(), "errors");
  EXPECT_THROW(
      {
        try {
          throwError(r, 2);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "MPI rank 2: bad shape");
          throw;
        }
      },
      std::runtime_error);
}

TEST(WireFormat, GatherOrRaiseGivesEveryPayloadOrTheLowestFailingRanksError) {
  auto all = std::make_shared<test::ThreadRanks>(3);
  std::vector<std::vector<std::string>> got(3);
  std::vector<std::string> errors(3);
  auto runRanks = [&](bool fail) {
    std::vector<std::thread> threads;
    for (int k = 0; k < 3; ++k)
      threads.emplace_back([&, k] {
        test::ThreadRank me(all, k);
        std::exception_ptr e;
        if (fail && k >= 1) e = std::make_exception_ptr(std::runtime_error("rank " + std::to_string(k) + " failed"));
        try {
          got[static_cast<size_t>(k)] = gatherOrRaise(me, "update 0", e, "payload " + std::to_string(k));
        } catch (const std::exception& x) {
          errors[static_cast<size_t>(k)] = x.what();
        }
      });
    for (auto& t : threads) t.join();
  };
  runRanks(false);
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(got[static_cast<size_t>(k)].size(), 3u);
    for (int p = 0; p < 3; ++p)
      EXPECT_EQ(got[static_cast<size_t>(k)][static_cast<size_t>(p)].substr(kPayload), "payload " + std::to_string(p));
  }
  runRanks(true);
  EXPECT_NE(errors[0].find("rank 1 failed"), std::string::npos) << errors[0];
  EXPECT_NE(errors[2].find("rank 1 failed"), std::string::npos) << errors[2];
  EXPECT_EQ(errors[1], "rank 1 failed");  // the failing rank raises its own error as itself
}

}  // namespace
}  // namespace gnn
