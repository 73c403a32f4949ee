// Checkpoints of a tiny real run, changed in memory and saved again (save() recomputes the checksum, so only
// their contents give them away): `predict` and the training programs' --load refuse each one in their own
// words, naming the tensor, the trainer field or the configuration field at fault; never a JSON library's
// message, a std::bad_alloc or a run that "trains" an epoch of nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "RunProgram.h"
#include "ScratchFolder.h"
#include "gnn/io/Checkpoint.h"

namespace {
namespace fs = std::filesystem;
using gnn::Checkpoint;
using gnn::testing::ProgramResult;
using gnn::testing::runExample;

constexpr int64_t kHuge = int64_t{1} << 40;

class CraftedCheckpoint : public gnn::testing::SuiteScratchFolderTest<CraftedCheckpoint> {
 protected:
  // One short molecule_property run (2 layers x 16, 5 training batches per epoch) for every test.
  static void SetUpTestSuite() {
    makeFolder("crafted_checkpoint_test");
    base_ = (dir_ / "base.ckpt").string();
    run_ = runExample("molecule_property", "--limit 200 --layers 2 --hidden 16 --batch-size 32 --epochs 1 "
                                           "--threads 2 --quiet --save " + base_);
    std::ofstream(dir_ / "new.smi") << "CCO\nc1ccccc1O\nCC(=O)Nc1ccc(O)cc1\n";
  }
  void SetUp() override { ASSERT_EQ(run_.code, 0) << run_.out; }

  // The base checkpoint changed by `edit`, saved as `name`.
  static std::string craft(const std::string& name, const std::function<void(Checkpoint&)>& edit) {
    Checkpoint ck = Checkpoint::load(base_);
    edit(ck);
    const std::string path = (dir_ / name).string();
    ck.save(path);
    return path;
  }
  static ProgramResult predict(const std::string& ckpt) {
    return runExample("predict", "--checkpoint " + ckpt + " --input " + (dir_ / "new.smi").string() + " --out " +
                                     (dir_ / "out.csv").string() + " --threads 2");
  }
  static ProgramResult continueRun(const std::string& ckpt) {
    return runExample("molecule_property", "--load " + ckpt + " --epochs 2 --threads 2 --quiet");
  }
  // Refused (exit 1 or 2), with `needle`, and none of what a refusal in the program's own words never holds.
  static void expectRefused(const ProgramResult& r, const std::string& needle) {
    EXPECT_TRUE(r.code == 1 || r.code == 2) << r.code << ": " << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << "missing '" << needle << "' in: " << r.out;
    for (const char* raw : {"json.exception", "bad_alloc", "best epoch"})
      EXPECT_EQ(r.out.find(raw), std::string::npos) << raw << " in: " << r.out;
  }

  static std::string base_;
  static ProgramResult run_;
};
std::string CraftedCheckpoint::base_;
ProgramResult CraftedCheckpoint::run_{-1, ""};

// The first float tensor under `prefix` with more than 17 elements.
std::string tensorWithElement17(const Checkpoint& ck, const std::string& prefix) {
  for (const auto& [name, t] : ck.tensors)
    if (name.rfind(prefix, 0) == 0 && t.dtype() == gnn::DType::F32 && t.numel() > 17) return name;
  return "";
}

TEST_F(CraftedCheckpoint, ANanWeightIsNamedByPredictAndByLoad) {
  std::string model, best;
  const std::string path = craft("nan.ckpt", [&](Checkpoint& ck) {
    model = tensorWithElement17(ck, "model.");
    best = tensorWithElement17(ck, "best.");
    ck.tensors[model].flat<float>()(17) = NAN;
    ck.tensors[best].flat<float>()(17) = NAN;
  });
  ASSERT_FALSE(model.empty());
  ASSERT_FALSE(best.empty());
  // predict applies the best epoch's weights; --weights last the current ones.
  expectRefused(predict(path), path + ": tensor '" + best + "' holds NaN at element 17; the checkpoint cannot be used");
  expectRefused(runExample("predict", "--checkpoint " + path + " --input " + (dir_ / "new.smi").string() +
                                          " --out " + (dir_ / "out.csv").string() + " --weights last"),
                "tensor '" + model + "' holds NaN at element 17");
  expectRefused(continueRun(path), path + ": tensor '" + model + "' holds NaN at element 17");
}

TEST_F(CraftedCheckpoint, AStepInEpochPastTheEpochIsRefusedWithTheLimit) {
  const std::string path = craft("step.ckpt", [](Checkpoint& ck) {
    ck.meta["trainer"]["step_in_epoch"] = 1000000;
  });
  ProgramResult r = continueRun(path);
  const std::string named = path + ": trainer state out of range: step_in_epoch 1000000 is more than the ";
  expectRefused(r, named);
  const size_t at = r.out.find(named);
  ASSERT_NE(at, std::string::npos);
  const int64_t steps = std::stoll(r.out.substr(at + named.size()));
  EXPECT_EQ(steps, 5) << r.out;  // 160 training molecules in batches of at most 32
  EXPECT_NE(r.out.find(" step(s) epoch 2 has on this data"), std::string::npos) << r.out;
  // A run stopped after an epoch's last step, before validating it, holds the epoch's own step count: it
  // continues with that epoch's validation.
  const std::string last = craft("last_step.ckpt", [&](Checkpoint& ck) {
    ck.meta["trainer"]["step_in_epoch"] = steps;
  });
  ProgramResult done = continueRun(last);
  EXPECT_EQ(done.code, 0) << done.out;
}

TEST_F(CraftedCheckpoint, WidthsAndBatchSizesNoMachineHoldsAreRefusedByName) {
  for (int64_t hidden : {kHuge, int64_t{1} << 20}) {
    const std::string path = craft("hidden.ckpt", [&](Checkpoint& ck) { ck.meta["config"]["hidden"] = hidden; });
    const std::string named = path + ": its configuration's hidden " + std::to_string(hidden) + " needs about ";
    expectRefused(continueRun(path), named);
    expectRefused(predict(path), named);
  }
  const std::string nodes = craft("nodes.ckpt", [](Checkpoint& ck) { ck.meta["config"]["num_nodes"] = kHuge; });
  ProgramResult r = continueRun(nodes);
  expectRefused(r, nodes + ": its configuration's num_nodes 1099511627776 needs about ");
  EXPECT_NE(r.out.find("more than this machine's"), std::string::npos) << r.out;
  const std::string shape = craft("shape.ckpt", [](Checkpoint& ck) {
    ck.meta["config"]["derived"]["fixed"]["num_nodes"] = kHuge;
    ck.meta["config"]["derived"]["eval_fixed"]["num_nodes"] = kHuge;
  });
  expectRefused(continueRun(shape), "its configuration's derived.fixed.num_nodes 1099511627776 needs about ");
  expectRefused(predict(shape), "its configuration's derived.eval_fixed.num_nodes 1099511627776 needs about ");
  // The same sizes on a command line are usage errors in flag terms.
  gnn::testing::expectUsageError(runExample("molecule_property", "--batch-size 1099511627776 --epochs 1"),
                                 "--batch-size 1099511627776 needs about ");
  gnn::testing::expectUsageError(runExample("cora_gcn", "--hidden 1099511627776 --epochs 1"),
                                 "--hidden 1099511627776 needs about ");
}

TEST_F(CraftedCheckpoint, MetadataPredictCannotUseIsRefusedInItsOwnWords) {
  const std::string noTargets = craft("no_targets.ckpt", [](Checkpoint& ck) {
    ck.meta["config"]["derived"].erase("targets");
  });
  expectRefused(predict(noTargets), noTargets + ": not a checkpoint predict can use: its metadata lacks 'targets'");
  const std::string renamed = craft("renamed.ckpt", [](Checkpoint& ck) {
    ck.meta["configuration"] = ck.meta["config"];
    ck.meta.erase("config");
  });
  expectRefused(predict(renamed), "not a checkpoint predict can use: its metadata lacks 'config'");
  // Continuing it would take the command line's widths for the ones the weights were trained with.
  expectRefused(continueRun(renamed), renamed + ": its metadata's 'config' is missing");
  const std::string mistyped = craft("mistyped.ckpt", [](Checkpoint& ck) {
    ck.meta["config"]["derived"]["fixed"]["num_edges"] = "many";
    ck.meta["config"]["derived"]["eval_fixed"]["num_edges"] = "many";
    ck.meta["config"]["derived"]["target_scaling"] = {{"mean", "zero"}};
  });
  expectRefused(predict(mistyped), "not a checkpoint predict can use: its metadata's 'config.derived.");
  expectRefused(continueRun(mistyped), "configuration 'derived.");
  const std::string trainer = craft("trainer.ckpt", [](Checkpoint& ck) {
    ck.meta["trainer"]["best_epoch"] = "first";
  });
  expectRefused(continueRun(trainer), trainer + ": trainer state 'best_epoch' = \"first\" has the wrong type");
}

// A SchNet checkpoint reads 3D coordinates: SMILES get them from the seeded conformers its featurisation
// embeds; one whose run read coordinates from files (no conformers) is refused SMILES in predict's words.
TEST_F(CraftedCheckpoint, SchNetWithoutConformersIsRefusedSmilesInPredictsWords) {
  const std::string schnet = (dir_ / "schnet.ckpt").string();
  ProgramResult trained = runExample("qm7_schnet", "--limit 60 --layers 1 --hidden 16 --filters 16 --epochs 1 "
                                                   "--threads 2 --quiet --save " + schnet);
  ASSERT_EQ(trained.code, 0) << trained.out;
  ProgramResult embedded = predict(schnet);
  EXPECT_EQ(embedded.code, 0) << embedded.out;
  const std::string fromFiles = craft("schnet_files.ckpt", [&](Checkpoint& ck) {
    ck = Checkpoint::load(schnet);
    ck.meta["config"]["derived"]["featurisation"]["conformers"] = false;
  });
  ProgramResult r = predict(fromFiles);
  gnn::testing::expectUsageError(r, "--input " + (dir_ / "new.smi").string() + ": " + fromFiles +
                                        " holds a SchNet model, which reads 3D atom coordinates, and smi input has none");
  EXPECT_NE(r.out.find("give --input as SDF or XYZ with 3D coordinates"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("build the dataset"), std::string::npos) << r.out;
}

}  // namespace
