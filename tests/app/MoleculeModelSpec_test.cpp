// MoleculeModelSpec::stateBytes, the estimate that refuses sizes which cannot fit in memory, with every option
// that adds weights or buffers (batch norm's statistics, the virtual node, MVE's second output per target): for
// gin within 15% above or below the built model's own count (parameters, buffers among them, 6 floats each); for
// gcn, whose layer is H x H instead of GIN's H -> 2H -> H, GIN's count is an upper bound.
#include <gtest/gtest.h>

#include <string>

#include "app/MoleculeModel.h"
#include "models/Graphormer.h"

namespace gnn::app {
namespace {

double actualTrainingBytes(const MoleculeModelSpec& spec) {
  auto model = makeMoleculeModel(spec, 1);
  double n = 0;
  for (const auto& [name, p] : model->namedParameters()) n += static_cast<double>(p.value().numel());
  return n * 6 * 4;
}

TEST(MoleculeModelSpec, StateBytesFollowsNormsVirtualNodesAndMveHeads) {
  for (const std::string model : {"gin", "gcn"})
    for (const std::string norm : {"layer", "batch"})
      for (bool virtualNode : {false, true})
        for (int64_t outputs : {1, 2}) {
          MoleculeModelSpec spec;
          spec.model = model;
          spec.norm = norm;
          spec.virtualNode = virtualNode;
          spec.outputsPerTarget = outputs;
          spec.tasks = 3;
          const double estimate = spec.stateBytes(true), actual = actualTrainingBytes(spec);
          const std::string what = model + " " + norm + " vn " + std::to_string(virtualNode) + " outputs " +
                                   std::to_string(outputs);
          EXPECT_GT(estimate, (model == "gin" ? 0.85 : 1.0) * actual) << what;
          EXPECT_LT(estimate, (model == "gin" ? 1.15 : 4.0) * actual) << what;
        }
}

// Graphormer runs on packed rows on this machine and on its [G·T] blocks for the simulated IPU
// (useStaticShapes, which the programs call with --device ipu); other models are left alone.
TEST(MoleculeModelSpec, StaticShapesTurnGraphormersPackedRowsOff) {
  MoleculeModelSpec spec;
  spec.model = "slim";
  spec.tasks = 1;
  auto model = makeMoleculeModel(spec, 1);
  auto* g = dynamic_cast<Graphormer*>(model.get());
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->options().packedRows);
  useStaticShapes(*model);
  EXPECT_FALSE(g->options().packedRows);
  EXPECT_FALSE(cloneModule(*g)->options().packedRows);
  spec.model = "gin";
  auto gin = makeMoleculeModel(spec, 1);
  useStaticShapes(*gin);  // nothing to change
  EXPECT_EQ(gin->numParameters(), makeMoleculeModel(spec, 1)->numParameters());
}

}  // namespace
}  // namespace gnn::app
