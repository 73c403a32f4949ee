// Checks the graph-level models' tests share (Graphormer, GPS++): a model's outputs for real graphs bit-identical
// however the batch is padded, and its loss and every gradient bit-identical on 1 and 2 threads.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "GraphormerMolecules.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"
#include "models/BlockModel.h"

namespace gnn::testing {

/// The first `rows` rows of a and b hold the same bits.
inline bool sameRows(const Tensor& a, const Tensor& b, int64_t rows) {
  const size_t bytes = static_cast<size_t>(rows * a.cols()) * dtypeSize(a.dtype());
  return std::memcmp(a.raw(), b.raw(), bytes) == 0;
}

/// For each group of six of `graphs`, in evaluation and in training (the same random key): the model's outputs
/// for the six real graphs are the same bits with one padding graph, with more padding nodes and edges, and with
/// four more padding graphs (blocks of side 30), and every padding graph's row is 0. `label` names the case.
inline void expectRealGraphsBitIdenticalWithAnyPadding(BlockModel& model, const std::vector<Graph>& graphs,
                                                       const std::string& label) {
  for (size_t first = 0; first + 6 <= graphs.size(); first += 6) {
    const std::vector<Graph> six(graphs.begin() + first, graphs.begin() + first + 6);
    const std::vector<Batch> batches{test::batchOf(six, 30), test::batchOf(six, 30, 1, 37),
                                     test::batchOf(six, 30, 5, 11)};
    for (bool training : {false, true}) {
      model.train(training);
      std::vector<Tensor> outs;
      for (const Batch& b : batches) {
        ExecutionContext::current().setRandomKey({3, 7, 0});
        outs.push_back(model.forward(b).value());
      }
      for (size_t k = 1; k < outs.size(); ++k)
        EXPECT_TRUE(sameRows(outs[k], outs[0], 6))
            << label << (training ? " training" : " eval") << " padding " << k << ": " << outs[k].at(0) << " vs "
            << outs[0].at(0);
      for (const Tensor& out : outs)
        for (int64_t r = 6; r < out.rows(); ++r) EXPECT_EQ(out.at(r), 0.0) << label << ": padding graph row";
    }
  }
}

/// One training step's L1 loss on `batch` and every parameter's gradient: the same bits on 1 and 2 threads.
inline void expectOneAndTwoThreadsGiveTheSameBits(BlockModel& model, const Batch& batch) {
  model.train();
  auto run = [&](int threads) {
    setNumThreads(threads);
    model.zeroGrad();
    ExecutionContext::current().setRandomKey({2, 5, 0});
    Variable loss = l1Loss(model.forward(batch), batch.y, batch.yMask);
    loss.backward();
    std::vector<Tensor> out{loss.value().clone()};
    for (const auto& p : model.parameters()) out.push_back(p.grad().clone());
    setNumThreads(0);
    return out;
  };
  const std::vector<Tensor> one = run(1), two = run(2);
  for (size_t i = 0; i < one.size(); ++i)
    EXPECT_EQ(std::memcmp(one[i].raw(), two[i].raw(), one[i].nbytes()), 0)
        << (i ? model.namedParameters()[i - 1].first : "loss");
}

}  // namespace gnn::testing
