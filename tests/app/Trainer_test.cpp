#include "app/Trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "app/CheckpointDir.h"
#include "gnn/nn/Linear.h"
#include "gnn/ops/Ops.h"

namespace gnn::app {
namespace {
namespace fs = std::filesystem;

// A folder of its own for each test, removed after it.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("gnn_trainer_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// A tiny regression run on CPU: a 3 -> 1 Linear layer, 8 samples in 3 batches per epoch, Adam. Validation is
// scripted (epoch e scores e, lower is better), so epoch 1 stays the best and --early-stopping 2 ends the run
// after epoch 3: every field of the trainer's state takes a value other than its initial one.
struct TinyRun {
  Program prog{"trainer_test", "a tiny training run"};
  TrainingFlags flags;
  Generator gen;
  Linear model;
  std::unique_ptr<Optimizer> opt;
  RunConfig config;
  std::unique_ptr<Trainer> trainer;
  int testPasses = 0;  // how often the test set was evaluated
  Tensor x = Tensor::fromVector<float>({0.1f, 0.5f, -0.3f, 0.9f, -0.2f, 0.4f, 0.3f, 0.3f, 0.8f, -0.7f, 0.6f, 0.1f,
                                        0.2f, -0.9f, 0.5f, 0.4f, 0.0f, -0.1f, -0.6f, 0.2f, 0.7f, 0.5f, 0.5f, -0.4f},
                                       {8, 3});
  Tensor y = Tensor::fromVector<float>({1.0f, -0.5f, 0.3f, 2.0f, 0.7f, -1.2f, 0.4f, 0.9f}, {8, 1});

  TinyRun(uint64_t initSeed, const std::string& checkpointDir, bool testEveryEpoch = false)
      : gen(initSeed), model(3, 1, gen) {
    flags.testEveryEpoch = testEveryEpoch;
    flags.epochs = 5;
    flags.lr = 0.05;
    flags.earlyStopping = 2;
    flags.quiet = true;
    flags.checkpointDir = checkpointDir;
    flags.checkpointEvery = checkpointDir.empty() ? 0 : 1;
    flags.keepCheckpoints = 100;
    if (!checkpointDir.empty()) fs::create_directories(checkpointDir);
    opt = flags.makeOptimizer({{model.parameters(), 0.0}});
    trainer = std::make_unique<Trainer>(prog, flags, model, *opt, config, MetricSpec{"mae", false}, "samples");
  }

  void run() {
    const std::vector<std::pair<int64_t, int64_t>> batches = {{0, 3}, {3, 6}, {6, 8}};
    Trainer::Hooks hooks;
    hooks.stepsPerEpoch = [&] { return static_cast<int64_t>(batches.size()); };
    hooks.trainEpoch = [&](int64_t, int64_t skip) {
      for (const std::pair<int64_t, int64_t>& rows : batches) {
        if (skip > 0) {
          --skip;
          continue;
        }
        trainer->step([&] { return l1Loss(model.forward(Variable(x.slice(rows.first, rows.second))),
                                          y.slice(rows.first, rows.second)); },
                      rows.second - rows.first);
      }
    };
    hooks.validate = [&] {
      Evaluation e;
      e.metric = static_cast<double>(trainer->completedEpochs());
      e.details = {{"epoch", trainer->completedEpochs()}};
      return e;
    };
    hooks.test = [&] {
      ++testPasses;
      Evaluation e;
      e.metric = 0.5;
      return e;
    };
    trainer->run(hooks);
  }
};

std::vector<Tensor> weights(const Module& m) {
  std::vector<Tensor> w;
  for (const auto& [name, p] : m.namedParameters()) w.push_back(p.value().clone());
  return w;
}

void expectSameTensors(const Checkpoint& a, const Checkpoint& b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    ASSERT_TRUE(b.tensors.count(name)) << name;
    EXPECT_TRUE(t.bitEqual(b.tensors.at(name))) << name;
  }
}

TEST(Trainer, ResumesEveryFieldAndContinuesToTheSameBits) {
  TempDir dir("resume");
  // The run never stopped.
  TinyRun whole(1, (dir.path / "whole").string());
  whole.run();
  ASSERT_TRUE(whole.trainer->summary()["stopped_early"].get<bool>());
  ASSERT_EQ(whole.trainer->completedEpochs(), 3);

  // Its checkpoint after optimizer step 7: epoch 3, one step in.
  const std::string mid = CheckpointDir((dir.path / "whole").string(), 100).pathFor(7);
  const Checkpoint saved = Checkpoint::load(mid);
  const nlohmann::json& state = saved.meta.at("trainer");
  const std::vector<std::string> fields = {"best_epoch",       "best_test",      "best_valid",    "best_valid_details",
                                           "completed_epochs", "epoch_loss_sum", "epoch_samples", "last_loss",
                                           "loss_checksum",    "since_improvement", "step_in_epoch", "stopped_early"};
  std::vector<std::string> keys;
  for (const auto& [k, v] : state.items()) keys.push_back(k);
  EXPECT_EQ(keys, fields);
  EXPECT_EQ(state["completed_epochs"], 2);
  EXPECT_EQ(state["step_in_epoch"], 1);
  EXPECT_EQ(state["epoch_samples"], 3);
  EXPECT_EQ(state["best_epoch"], 1);
  EXPECT_EQ(state["best_valid"], 1.0);
  EXPECT_EQ(state["best_valid_details"], (nlohmann::json{{"epoch", 1}}));
  // The best epoch's test metric is taken once, after the last epoch, on the kept best weights.
  EXPECT_TRUE(state["best_test"].empty()) << state["best_test"];
  EXPECT_EQ(whole.testPasses, 1);
  EXPECT_EQ(whole.trainer->summary()["test_mae"], 0.5);
  EXPECT_EQ(state["since_improvement"], 1);
  EXPECT_GT(state["epoch_loss_sum"].get<double>(), 0.0);
  EXPECT_GT(state["last_loss"].get<double>(), 0.0);
  EXPECT_NE(state["loss_checksum"].get<uint64_t>(), 0u);

  // A fresh Trainer (other initial weights) resumed from it holds every field as saved: its own checkpoint,
  // written before any step, is the same.
  TinyRun resumed(2, "");
  resumed.trainer->resume(saved, mid);
  const std::string again = (dir.path / "again.ckpt").string();
  resumed.trainer->save(again);
  const Checkpoint reread = Checkpoint::load(again);
  EXPECT_EQ(reread.meta.at("trainer"), state);
  expectSameTensors(reread, saved);

  // Continuing ends with the bits of the run never stopped.
  resumed.run();
  const std::vector<Tensor> a = weights(whole.model), b = weights(resumed.model);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].bitEqual(b[i])) << i;
  EXPECT_EQ(resumed.trainer->lossChecksum(), whole.trainer->lossChecksum());
  for (const char* key : {"epochs", "best_epoch", "valid_mae", "test_mae", "final_loss", "steps", "stopped_early",
                          "loss_checksum"})
    EXPECT_EQ(resumed.trainer->summary()[key], whole.trainer->summary()[key]) << key;
  // Its learning curve holds the epochs trained before the checkpoint too: the uninterrupted run's.
  const std::vector<TrainedEpoch>& ca = whole.trainer->curve();
  const std::vector<TrainedEpoch>& cb = resumed.trainer->curve();
  ASSERT_EQ(ca.size(), 3u);
  ASSERT_EQ(cb.size(), ca.size());
  for (size_t i = 0; i < ca.size(); ++i) {
    EXPECT_EQ(ca[i].epoch, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(ca[i].valid, static_cast<double>(i) + 1);  // the validation hook returns the epoch
    EXPECT_TRUE(std::isnan(ca[i].test));                 // tested once, after the last epoch
    EXPECT_EQ(cb[i].epoch, ca[i].epoch);
    EXPECT_EQ(cb[i].valid, ca[i].valid);
    EXPECT_EQ(cb[i].loss, ca[i].loss) << i;
    EXPECT_TRUE(std::isnan(cb[i].test));
  }
  // And its final state is the uninterrupted run's, field for field.
  const std::string endA = (dir.path / "end_a.ckpt").string(), endB = (dir.path / "end_b.ckpt").string();
  whole.trainer->save(endA);
  resumed.trainer->save(endB);
  EXPECT_EQ(Checkpoint::load(endA).meta.at("trainer"), Checkpoint::load(endB).meta.at("trainer"));
  expectSameTensors(Checkpoint::load(endA), Checkpoint::load(endB));
}

TEST(Trainer, TestsOnceAtTheEndUnlessAskedEveryEpoch) {
  TinyRun once(1, "");
  once.run();
  EXPECT_EQ(once.testPasses, 1);
  TinyRun every(1, "", /*testEveryEpoch=*/true);
  every.run();
  EXPECT_EQ(every.testPasses, 3);  // epochs 1-3 (early stopping after 3)
  for (const TrainedEpoch& e : every.trainer->curve()) EXPECT_EQ(e.test, 0.5) << e.epoch;
  EXPECT_EQ(every.trainer->summary()["test_mae"], once.trainer->summary()["test_mae"]);
  EXPECT_EQ(every.trainer->lossChecksum(), once.trainer->lossChecksum());
}

TEST(Trainer, NamesAMissingMistypedOrNegativeField) {
  TempDir dir("fields");
  TinyRun first(1, "");
  first.run();
  const std::string path = (dir.path / "run.ckpt").string();
  first.trainer->save(path);
  auto resumeWith = [&](const std::function<void(nlohmann::json&)>& change) {
    Checkpoint ck = Checkpoint::load(path);
    change(ck.meta["trainer"]);
    TinyRun fresh(1, "");
    try {
      fresh.trainer->resume(ck, path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(resumed)");
  };
  EXPECT_EQ(resumeWith([](nlohmann::json& t) { t.erase("best_test"); }), path + ": trainer state lacks 'best_test'");
  EXPECT_EQ(resumeWith([](nlohmann::json& t) { t["loss_checksum"] = "x"; }),
            path + ": trainer state 'loss_checksum' = \"x\" has the wrong type");
  EXPECT_EQ(resumeWith([](nlohmann::json& t) { t["since_improvement"] = -1; }),
            path + ": trainer state out of range: since_improvement -1 is negative; the checkpoint cannot be used");
  EXPECT_EQ(resumeWith([](nlohmann::json& t) { t["loss_scaling"] = {{"scale", 4.0}}; }),
            path + ": trainer state lacks 'loss_scaling.clean_updates'");
  // A null double reads back as NaN (best_valid) or 0 (epoch_loss_sum, a sum).
  EXPECT_EQ(resumeWith([](nlohmann::json& t) {
              t["best_valid"] = nullptr;
              t["epoch_loss_sum"] = nullptr;
            }),
            "(resumed)");
}

TEST(Trainer, ANonFiniteLossSavesBothTheFileAndTheFolder) {
  TempDir dir("stop");
  TinyRun run(1, (dir.path / "ck").string());
  run.flags.save = (dir.path / "run.ckpt").string();
  int steps = 0;
  try {
    run.trainer->step(
        [&] {
          ++steps;
          return l1Loss(run.model.forward(Variable(run.x)), run.y);
        },
        8);
    run.trainer->step([&] { return l1Loss(run.model.forward(Variable(run.x)), Tensor::full({8, 1}, NAN)); }, 8);
    FAIL() << "a NaN loss was trained on";
  } catch (const std::runtime_error& e) {
    const std::string folder = CheckpointDir((dir.path / "ck").string(), 100).pathFor(1);
    EXPECT_NE(std::string(e.what()).find("the state before this step is saved in " + run.flags.save + " and " + folder),
              std::string::npos)
        << e.what();
    EXPECT_TRUE(fs::exists(run.flags.save));
    EXPECT_TRUE(fs::exists(folder));
    EXPECT_EQ(Checkpoint::load(run.flags.save).meta.at("trainer").at("epoch_samples"), 8);
  }
  EXPECT_EQ(steps, 1);
}

}  // namespace
}  // namespace gnn::app
