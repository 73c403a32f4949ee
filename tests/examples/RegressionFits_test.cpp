// Molecule models that learn: each fits targets that are functions of the molecular graph alone
// (tests/reference/graph_targets.py: Crippen logP per heavy atom, the share of aromatic atoms, the heavy-atom count)
// to R2 >= 0.95 on held-out molecules within 30 epochs, for one target and for two, with every packing strategy. A
// model that predicts a near-constant fails it, as GIN with LayerNorm did on ESOL (test R2 0.0 at 5 x 300) while
// its loss fell. Not here: SchNet (3D; on QM7 with such targets, heavy-atom count and mean atomic number, it
// reaches R2 0.91-0.92 in 20 epochs, two minutes of this test's budget) and GPS++ (44M weights, about 55
// molecules/s on 2 cores).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "RunProgram.h"

namespace {
using gnn::testing::lastJson;
using gnn::testing::runExample;

const std::string kTargets = std::string(GNN_SOURCE_DIR) + "/tests/reference/molecules/graph_targets.csv";

struct FitCase {
  std::string name;     // the test's name
  std::string program;  // molecule_property or qm7_schnet
  std::string args;     // the model and what differs from the defaults beyond --epochs
  std::string targets;  // --target-cols
  int epochs;
};

std::ostream& operator<<(std::ostream& os, const FitCase& c) { return os << c.name; }

class RegressionFits : public ::testing::TestWithParam<FitCase> {};

TEST_P(RegressionFits, HeldOutR2AtLeast095PerTarget) {
  const FitCase& c = GetParam();
  const std::string args = c.args + " --data " + kTargets + " --target-cols " + c.targets +
                           " --split random --seed 11 --epochs " + std::to_string(c.epochs) +
                           " --metric r2,rmse --threads 2 --quiet --json";
  const auto r = runExample(c.program, args, false);
  ASSERT_EQ(r.code, 0) << c.program << " " << args << "\n" << r.out;
  const nlohmann::json j = lastJson(r.out);
  ASSERT_TRUE(j.contains("test_details")) << j.dump();
  const nlohmann::json& perTarget = j["test_details"]["r2_per_target"];
  ASSERT_EQ(perTarget.size(), c.targets.find(',') == std::string::npos ? 1u : 2u) << j.dump();
  for (const auto& [target, r2] : perTarget.items())
    EXPECT_GE(r2.get<double>(), 0.95) << c.name << ": " << target << " on " << j["test_graphs"] << " held-out molecules";
}

// GIN and GCN at their defaults (5 x 300, --norm auto = batch, mean pooling, batches of 128, Adam 1e-3) and D-MPNN
// at Chemprop's (depth 3 x 300, batches of 50, Noam), mean-type targets for mean readouts,
// packed as by default (plan); padded (pad) and streamed at width 64, where a run takes seconds. GIN with
// LayerNorm, the earlier default, reaches R2 0.02 on mean_logp at 5 x 300.
const std::string kSmallModel = " --hidden 64 --layers 3";
const FitCase kCases[] = {
    {"gin", "molecule_property", "--model gin", "mean_logp", 30},
    {"gin_two_targets", "molecule_property", "--model gin", "mean_logp,aromatic_fraction", 30},
    {"gin_pad", "molecule_property", "--model gin --strategy pad" + kSmallModel, "mean_logp", 30},
    {"gin_stream", "molecule_property", "--model gin --strategy stream" + kSmallModel, "mean_logp", 30},
    {"gcn", "molecule_property", "--model gcn", "mean_logp", 30},
    {"gcn_two_targets", "molecule_property", "--model gcn", "mean_logp,aromatic_fraction", 30},
    {"gcn_pad", "molecule_property", "--model gcn --strategy pad" + kSmallModel, "mean_logp", 30},
    {"gcn_stream", "molecule_property", "--model gcn --strategy stream" + kSmallModel, "mean_logp", 30},
    // D-MPNN's default readout is a sum (sum / 100, `chemprop train`'s): a sum-type target; with its mean readout
    // the mean-type ones.
    {"dmpnn", "molecule_property", "--model dmpnn", "heavy_atoms", 30},
    {"dmpnn_mean_two_targets", "molecule_property", "--model dmpnn --aggregation mean", "mean_logp,aromatic_fraction",
     30},
    {"dmpnn_mean_pad", "molecule_property", "--model dmpnn --aggregation mean --strategy pad --hidden 64", "mean_logp",
     30},
    {"dmpnn_mean_stream", "molecule_property", "--model dmpnn --aggregation mean --strategy stream --hidden 64",
     "mean_logp", 30},
    // Graphormer-slim (12 x 80, its fixed configuration; training skips the 14 molecules above --max-node 30), in
    // batches of 32: 64 give it too few steps in 20 epochs.
    {"graphormer_slim_two_targets", "pcqm4m_graphormer", "--model slim --batch-size 32", "mean_logp,aromatic_fraction",
     20},
};

INSTANTIATE_TEST_SUITE_P(MoleculeModels, RegressionFits, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<FitCase>& i) { return i.param.name; });

}  // namespace
