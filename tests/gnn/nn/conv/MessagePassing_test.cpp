// MessagePassing::propagate: message -> aggregate -> update against direct computations, with gradients; the
// fused messageAndAggregate hook replaces gather -> message -> aggregate when a layer provides it.
#include "gnn/nn/conv/MessagePassing.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "GradCheck.h"
#include "gnn/nn/conv/GCNConv.h"

namespace gnn {
namespace {

// out_i = aggr_{j -> i} (x_j * w_ij) + x_i, with a per-edge scalar weight given as edge_attr [E, 1].
class WeightedConv : public MessagePassing {
 public:
  explicit WeightedConv(const std::string& a) : MessagePassing(a, /*needsTargetFeatures=*/true) {}
  Variable forward(const Tensor& ei, const Variable& x, const Variable& w) { return propagate(ei, x, w); }
  Tensor lastXi;

 protected:
  Variable message(const Variable& xj, const Variable& xi, const Variable& e) override {
    lastXi = xi.value();
    return mul(xj, e);
  }
  Variable update(const Variable& aggr, const Variable& x) override { return add(aggr, x); }
};

Tensor edges() { return Tensor::fromVector<int64_t>({0, 1, 2, 3, 3, 1, 1, 0, 1, 2}, {2, 5}); }

TEST(MessagePassing, SumMatchesSparseProduct) {
  Tensor x = testing::randomTensor({4, 3}, 1), w = testing::randomTensor({5, 1}, 2);
  WeightedConv conv("sum");
  Tensor out = conv.forward(edges(), Variable(x), Variable(w)).value();
  const int64_t* e = edges().data<int64_t>();
  std::vector<int64_t> rows, cols;
  std::vector<double> vals;
  for (int k = 0; k < 5; ++k) {
    rows.push_back(e[5 + k]);
    cols.push_back(e[k]);
    vals.push_back(w.at(k));
  }
  SparseMatrix a = SparseMatrix::fromCoo(4, 4, rows, cols, vals, DType::F64);
  Tensor ref = add(spmm(a, Variable(x)), Variable(x)).value();
  EXPECT_LT((out.matrix<double>() - ref.matrix<double>()).cwiseAbs().maxCoeff(), 1e-12);
  // x_i is the target's features, edge by edge.
  EXPECT_EQ(conv.lastXi.matrix<double>().row(0), x.matrix<double>().row(1));
}

TEST(MessagePassing, MeanAndMaxAggregations) {
  Tensor x = testing::randomTensor({4, 2}, 3), ones = Tensor::full({5, 1}, 1.0, DType::F64);
  WeightedConv mean("mean"), max("max");
  Tensor m = mean.forward(edges(), Variable(x), Variable(ones)).value();
  Tensor mx = max.forward(edges(), Variable(x), Variable(ones)).value();
  auto xm = x.matrix<double>();
  // Edges 0->1, 1->1, 2->0, 3->1, 3->2: node 1 receives from 0, 1 and 3; node 3 receives nothing.
  EXPECT_NEAR(m.matrix<double>()(1, 0), (xm(0, 0) + xm(1, 0) + xm(3, 0)) / 3 + xm(1, 0), 1e-12);
  EXPECT_NEAR(mx.matrix<double>()(1, 1), std::max({xm(0, 1), xm(1, 1), xm(3, 1)}) + xm(1, 1), 1e-12);
  EXPECT_NEAR(m.matrix<double>()(3, 0), xm(3, 0), 1e-12);  // no incoming edge: the aggregate is 0
  EXPECT_NEAR(mx.matrix<double>()(3, 1), xm(3, 1), 1e-12);
}

TEST(MessagePassing, GradientsThroughEveryAggregation) {
  for (const char* a : {"sum", "mean", "max"}) {
    testing::expectGradientsMatch(
        [a](const std::vector<Variable>& v) {
          WeightedConv conv(a);
          return conv.forward(edges(), v[0], v[1]);
        },
        {testing::randomTensor({4, 3}, 4), testing::randomTensor({5, 1}, 5)});
  }
}

// Sum aggregation through a fused SpMM; other aggregations decline (an undefined result) and run unfused.
class FusedSumConv : public MessagePassing {
 public:
  explicit FusedSumConv(const std::string& a) : MessagePassing(a) {}
  Variable forward(const Tensor& ei, const Variable& x) { return propagate(ei, x); }
  int fusedCalls = 0, messageCalls = 0;

 protected:
  Variable message(const Variable& xj, const Variable&, const Variable&) override {
    ++messageCalls;
    return xj;
  }
  Variable messageAndAggregate(const Tensor& ei, const Variable& x, const Variable&, int64_t numNodes) override {
    if (!sumAggregation()) return {};
    ++fusedCalls;
    SparseMatrix a = GCNConv::normalizedAdjacency(ei, numNodes, /*addSelfLoops=*/false, /*normalize=*/false,
                                                  x.dtype());
    return spmm(a, x);
  }
  Variable update(const Variable& aggr, const Variable& x) override { return add(aggr, x); }
};

TEST(MessagePassing, FusedMessageAndAggregateReplacesTheUnfusedPath) {
  Tensor x = testing::randomTensor({4, 3}, 6), ones = Tensor::full({5, 1}, 1.0, DType::F64);
  FusedSumConv fused("sum"), declines("max");
  Tensor out = fused.forward(edges(), Variable(x)).value();
  EXPECT_EQ(fused.fusedCalls, 1);
  EXPECT_EQ(fused.messageCalls, 0);
  WeightedConv unfused("sum");
  Tensor ref = unfused.forward(edges(), Variable(x), Variable(ones)).value();
  EXPECT_LT((out.matrix<double>() - ref.matrix<double>()).cwiseAbs().maxCoeff(), 1e-12);  // update ran too
  declines.forward(edges(), Variable(x));
  EXPECT_EQ(declines.fusedCalls, 0);
  EXPECT_EQ(declines.messageCalls, 1);
  testing::expectGradientsMatch(
      [](const std::vector<Variable>& v) {
        FusedSumConv conv("sum");
        return conv.forward(edges(), v[0]);
      },
      {testing::randomTensor({4, 3}, 7)});
}

TEST(MessagePassing, TakesAnAggregationByPyGsNameOrAsAModule) {
  Tensor x = testing::randomTensor({4, 3}, 8), ones = Tensor::full({5, 1}, 1.0, DType::F64);
  WeightedConv add("add"), sum("sum");  // "add" is PyG's older name of the sum
  EXPECT_EQ(std::string(add.aggregation().name()), "sum");
  EXPECT_TRUE(add.forward(edges(), Variable(x), Variable(ones)).value().bitEqual(
      sum.forward(edges(), Variable(x), Variable(ones)).value()));
  try {
    WeightedConv bad("median");
    FAIL() << "an unknown aggregation was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'median' is not one of sum (add), mean, max"), std::string::npos);
  }
  // The aggregation is a child module without parameters: the layer's parameter names are unchanged.
  Generator gen(1);
  GCNConv conv(3, 2, gen);
  for (const auto& [name, p] : conv.namedParameters()) EXPECT_EQ(name.find("aggr_module"), std::string::npos);
}

TEST(MessagePassing, RejectsEdgeAttrOfTheWrongLength) {
  WeightedConv conv("sum");
  EXPECT_THROW(conv.forward(edges(), Variable(Tensor({4, 3}, DType::F64)), Variable(Tensor({4, 1}, DType::F64))),
               std::invalid_argument);
}

// ptrToSortedIndex (each row's segment, as PyG's `batch`) and sortedIndexToPtr undo each other, empty segments
// included; a ptr that decreases or does not start at 0 is refused.
TEST(SegmentIndex, PtrAndSortedIndexAreInverses) {
  const Tensor ptr = Tensor::fromVector(std::vector<int64_t>{0, 2, 2, 5, 6});
  const Tensor index = ptrToSortedIndex(ptr);
  ASSERT_EQ(index.shape(), Shape({6}));
  const std::vector<int64_t> want{0, 0, 2, 2, 2, 3};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(index.data<int64_t>()[i], want[static_cast<size_t>(i)]) << i;
  EXPECT_TRUE(sortedIndexToPtr(index, 4).bitEqual(ptr));
  EXPECT_EQ(ptrToSortedIndex(Tensor::fromVector(std::vector<int64_t>{0})).numel(), 0);
  EXPECT_THROW(ptrToSortedIndex(Tensor::fromVector(std::vector<int64_t>{0, 3, 2})), std::invalid_argument);
  EXPECT_THROW(ptrToSortedIndex(Tensor::fromVector(std::vector<int64_t>{1, 3})), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
