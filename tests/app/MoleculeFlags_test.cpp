#include <gtest/gtest.h>

#include <vector>

#include "app/MoleculeProgram.h"

namespace gnn::app {
namespace {

// The molecule program's command line parsed into its settings and checked (nothing is read or trained).
struct Parsed {
  int code = -1;
  std::string err;
  MoleculeSettings s;
};

Parsed parse(std::vector<std::string> args, const MoleculeProgramDefaults& d = {}) {
  Parsed out;
  Program prog(d.name, d.summary);
  addMoleculeFlags(prog, out.s, d);
  std::vector<char*> argv;
  args.insert(args.begin(), d.name);
  for (std::string& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  out.code = prog.run(static_cast<int>(argv.size()), argv.data(), [&] {
    checkMoleculeFlags(prog, out.s, d, "");
    return 0;
  });
  out.err = testing::internal::GetCapturedStderr();
  return out;
}

TEST(MoleculeFlags, DefaultsComeFromTheProgram) {
  MoleculeProgramDefaults d;
  d.name = "qm7_like";
  d.model = "gcn";
  d.batchSize = 64;
  d.layers = 3;
  d.hidden = 32;
  d.overSize = "skip";
  d.strategy = "auto";
  d.targetCols = "u0";
  d.training.epochs = 7;
  d.training.lr = 5e-4;
  const Parsed p = parse({}, d);
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.s.spec.model, "gcn");
  EXPECT_EQ(p.s.spec.layers, 3);
  EXPECT_EQ(p.s.spec.hidden, 32);
  EXPECT_EQ(p.s.batchSize, 64);
  EXPECT_EQ(p.s.overSize, "skip");
  EXPECT_EQ(p.s.targetCols, "u0");
  EXPECT_EQ(p.s.training.epochs, 7);
  EXPECT_EQ(p.s.training.lr, 5e-4);
  // And the defaults every molecule program shares.
  EXPECT_EQ(p.s.data, "");
  EXPECT_EQ(p.s.task, "auto");
  EXPECT_EQ(p.s.targetScaling, "standard");
  EXPECT_EQ(p.s.split, "auto");
  EXPECT_EQ(p.s.limit, -1);
  EXPECT_EQ(p.s.numNodes, 0);
  EXPECT_EQ(p.s.prefetch, 2);
  EXPECT_FALSE(p.s.profile);
  EXPECT_EQ(p.s.device.device, "cpu");
  EXPECT_EQ(p.s.packing(), PackingStrategy::PlannedPack);  // auto: plan for message passing
  EXPECT_EQ(p.s.overSizeStrategy(), OverSizeStrategy::Skip);
}

TEST(MoleculeFlags, FlagsSetTheSettingsAndTheRunConfiguration) {
  const Parsed p = parse({"--data", "mols.csv", "--target-cols", "a,b", "--split", "scaffold", "--batch-size", "32",
                          "--model", "gcn", "--hidden", "64", "--strategy", "pad", "--oversize", "trim", "--task",
                          "regression", "--seed", "9", "--epochs", "3", "--profile"});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.s.data, "mols.csv");
  EXPECT_EQ(p.s.targetCols, "a,b");
  EXPECT_EQ(p.s.split, "scaffold");
  EXPECT_EQ(p.s.batchSize, 32);
  EXPECT_EQ(p.s.spec.model, "gcn");
  EXPECT_EQ(p.s.spec.hidden, 64);
  EXPECT_EQ(p.s.packing(), PackingStrategy::PadToMax);
  EXPECT_EQ(p.s.overSizeStrategy(), OverSizeStrategy::TrimNodesAndEdges);
  EXPECT_EQ(p.s.task, "regression");
  EXPECT_EQ(p.s.training.seed, 9u);
  EXPECT_EQ(p.s.training.epochs, 3);
  EXPECT_TRUE(p.s.profile);
  // The flags that define a run are what its checkpoints keep.
  MoleculeSettings s = p.s;
  RunConfig config;
  s.bind(config);
  const nlohmann::json j = config.toJson();
  EXPECT_EQ(j["data"], "mols.csv");
  EXPECT_EQ(j["target_cols"], "a,b");
  EXPECT_EQ(j["split"], "scaffold");
  EXPECT_EQ(j["batch_size"], 32);
  EXPECT_EQ(j["model"], "gcn");
  EXPECT_EQ(j["hidden"], 64);
  EXPECT_EQ(j["strategy"], "pad");
  EXPECT_EQ(j["oversize"], "trim");
  EXPECT_EQ(j["task"], "regression");
  EXPECT_EQ(j["seed"], 9);
  EXPECT_FALSE(j.contains("epochs"));  // may change when a run continues
  EXPECT_FALSE(j.contains("profile"));
}

TEST(MoleculeFlags, ABadValueIsRefusedWithTheFlagsName) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--batch-size", "0"}, "--batch-size"},
      {{"--batch-size", "many"}, "batch-size"},
      {{"--strategy", "greedy"}, "--strategy"},
      {{"--oversize", "drop"}, "--oversize"},
      {{"--task", "ranking"}, "--task"},
      {{"--target-scaling", "atomref"}, "--target-scaling"},
      {{"--split", "scaffold", "--split-col", "fold"}, "--split-col"},
      {{"--limit", "0"}, "--limit 0"},
      {{"--num-graphs", "1"}, "--num-graphs 1"},
      {{"--format", "pdb"}, "--format"},
      {{"--model", "schnet"}, "--model"},
  };
  for (const auto& [args, flag] : cases) {
    const Parsed p = parse(args);
    EXPECT_EQ(p.code, 2) << args[0] << " " << args[1] << ": " << p.err;
    EXPECT_NE(p.err.find(flag), std::string::npos) << args[0] << " " << args[1] << ": " << p.err;
  }
}

}  // namespace
}  // namespace gnn::app
