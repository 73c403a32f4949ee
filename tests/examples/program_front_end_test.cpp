// The programs' shared front end, tried as a user would: every value that used to be accepted with a
// different meaning is now refused in flag terms (exit 2) or behaves as documented; checkpoints carry the
// configuration; --quiet keeps the result; a scaffold-split run writes predictions that `predict` reproduces
// bit for bit; an interrupted run continues to the same weights.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "RunProgram.h"
#include "ScratchFolder.h"

namespace {
namespace fs = std::filesystem;
using Result = gnn::testing::ProgramResult;

const std::string kBin = std::string(GNN_BINARY_DIR) + "/examples/";
const std::string kData = std::string(GNN_SOURCE_DIR) + "/examples/data/";

using gnn::testing::expectUsageError;
using gnn::testing::runExample;
using gnn::testing::lastJson;

class FrontEnd : public gnn::testing::ScratchFolderTest {
 protected:
};

TEST_F(FrontEnd, ValuesThatUsedToRunWithAnotherMeaningAreRefusedInFlagTerms) {
  expectUsageError(runExample("molecule_property", "--task multiclass"), "--task 'multiclass': must be one of");
  expectUsageError(runExample("molecule_property", "--epochs -1"), "--epochs -1: must be at least 0");
  expectUsageError(runExample("molecule_property", "--threads -3"), "--threads -3: must be >= 0");
  expectUsageError(runExample("cora_gcn", "--threads 999"), "--threads 999: this machine has");
  expectUsageError(runExample("cora_gcn", "--lr inf"), "--lr inf: must be a finite number > 0");
  expectUsageError(runExample("molecule_property", "--strategy packed"), "--strategy 'packed': must be one of auto, pad, stream, plan");
  expectUsageError(runExample("molecule_property", "--oversize Skip"), "--oversize 'Skip': must be one of");
  expectUsageError(runExample("molecule_property", "--schedule linear"), "--schedule 'linear': must be one of");
  expectUsageError(runExample("molecule_property", "--warmup 10"), "--warmup 10 needs --schedule cosine, warmup-linear or noam");
  expectUsageError(runExample("cora_gcn", "--runs 0"), "--runs 0: must be at least 1");
  // An unknown flag: boost's message, the program's name and the hint.
  Result u = runExample("cora_gcn", "--format csv");
  EXPECT_EQ(u.code, 2);
  EXPECT_NE(u.out.find("cora_gcn --help"), std::string::npos) << u.out;
}

TEST_F(FrontEnd, HelpShowsDefaultsAsTypedAndNoBuildPaths) {
  for (const char* program : {"cora_gcn", "molecule_property", "predict"}) {
    Result h = runExample(program, "--help", false);
    EXPECT_EQ(h.code, 0) << program;
    EXPECT_EQ(h.out.find("00000000"), std::string::npos) << program << ": " << h.out;
    EXPECT_EQ(h.out.find(GNN_SOURCE_DIR), std::string::npos) << program << ": " << h.out;
    EXPECT_EQ(h.out.find(GNN_BINARY_DIR), std::string::npos) << program << ": " << h.out;
  }
  EXPECT_NE(runExample("cora_gcn", "--help", false).out.find("(=0.0005)"), std::string::npos);
}

TEST_F(FrontEnd, BatchShapesTooSmallAreExplainedInFlagTerms) {
  Result r = runExample("molecule_property", "--limit 300 --num-nodes 140");
  expectUsageError(r, "raise --num-nodes to at least");
  EXPECT_NE(r.out.find("--oversize skip"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("OverSizeStrategy"), std::string::npos) << r.out;
  expectUsageError(runExample("molecule_property", "--limit 300 --num-graphs 1"), "--num-graphs 1");
  // A format the file name does not tell: the reader's message names --format, which the program has.
  expectUsageError(runExample("molecule_property", "--limit 300 --num-nodes 20"), "at least one atom and one bond");
  std::ofstream(path("mols.dat")) << "CCO\nCCN\n";
  Result f = runExample("molecule_property", "--data " + path("mols.dat"));
  EXPECT_EQ(f.code, 1) << f.out;
  EXPECT_NE(f.out.find("--format"), std::string::npos) << f.out;
  EXPECT_NE(runExample("molecule_property", "--help", false).out.find("--format"), std::string::npos);
}

TEST_F(FrontEnd, ALearningRateGivenOnLoadTakesEffect) {
  const std::string ck = path("c.ckpt");
  ASSERT_EQ(runExample("cora_gcn", "--epochs 5 --lr 0.01 --quiet --save " + ck).code, 0);
  ASSERT_EQ(runExample("cora_gcn", "--epochs 7 --lr 0.003 --quiet --load " + ck + " --log " + path("l.jsonl")).code, 0);
  std::ifstream in(path("l.jsonl"));
  int epochs = 0;
  for (std::string l; std::getline(in, l);) {
    nlohmann::json e = nlohmann::json::parse(l);
    if (e.contains("run")) {
      EXPECT_EQ(e["run"]["continued_from_epoch"], 5);
      continue;
    }
    EXPECT_EQ(e["lr"].get<double>(), 0.003) << l;
    ++epochs;
  }
  EXPECT_EQ(epochs, 2);  // --epochs is the total: 5 done, 2 more
}

TEST_F(FrontEnd, ClassificationOnContinuousTargetsIsAnErrorNamingTheLine) {
  Result r = runExample("molecule_property", "--limit 300 --task classification");
  expectUsageError(r, "--task classification needs 0/1 labels, but ");
  EXPECT_NE(r.out.find("data.csv.gz line "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("homolumogap"), std::string::npos) << r.out;
}

TEST_F(FrontEnd, ACsvWithoutTargetColumnsAsksForThem) {
  Result r = runExample("molecule_property", "--data " + kData + "moleculenet/BBBP.csv.gz --limit 200");
  expectUsageError(r, "has no targets to train on: pass --target-cols");
  EXPECT_NE(r.out.find("p_np"), std::string::npos) << r.out;  // the columns are listed
}

TEST_F(FrontEnd, AnUnwritableSaveIsFoundBeforeTraining) {
  const auto t0 = std::chrono::steady_clock::now();
  Result r = runExample("molecule_property", "--epochs 200 --save /nonexistent-folder/run.ckpt");
  expectUsageError(r, "--save /nonexistent-folder/run.ckpt: the folder /nonexistent-folder does not exist");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  expectUsageError(runExample("cora_gcn", "--log " + dir_.string()), "is a folder");
}

TEST_F(FrontEnd, QuietKeepsTheResultOnStdout) {
  Result c = runExample("cora_gcn", "--quiet --epochs 5", /*withStderr=*/false);
  EXPECT_EQ(c.code, 0);
  EXPECT_NE(c.out.find("test accuracy"), std::string::npos) << c.out;
  Result m = runExample("molecule_property", "--quiet --limit 300 --layers 1 --hidden 16", false);
  EXPECT_EQ(m.code, 0);
  EXPECT_NE(m.out.find("valid mae"), std::string::npos) << m.out;
  // Progress goes to stderr only.
  Result e = gnn::testing::runProgram("sh -c '" + kBin + "cora_gcn --epochs 3 2>&1 >/dev/null'", false);
  EXPECT_NE(e.out.find("epoch 3/3"), std::string::npos) << e.out;
}

TEST_F(FrontEnd, NpzInputHonoursLimitAndRefusesColumnsItCannotChange) {
  Result b = gnn::testing::runProgram(kBin + "build_dataset --input " + kData +
                                      "moleculenet/BBBP.csv.gz --target-cols p_np --out " + path("bbbp.npz") +
                                      " --threads 2 2>&1");
  ASSERT_EQ(b.code, 0) << b.out;
  nlohmann::json j = lastJson(runExample("molecule_property", "--data " + path("bbbp.npz") +
                                                           " --limit 500 --epochs 1 --layers 1 --hidden 16 --json",
                                  false)
                                  .out);
  EXPECT_EQ(j["graphs"], 500);
  EXPECT_EQ(j["train_graphs"].get<int>() + j["valid_graphs"].get<int>() + j["test_graphs"].get<int>(), 500);
  expectUsageError(runExample("molecule_property", "--data " + path("bbbp.npz") + " --smiles-col SMILES"),
                   "--smiles-col applies when molecules are read from a CSV");
  expectUsageError(runExample("molecule_property", "--data " + path("bbbp.npz") + " --target-cols name"),
                   "was built with targets p_np");
}

TEST_F(FrontEnd, CheckpointsCarryTheConfigurationAndContradictionsAreErrors) {
  const std::string ck = path("run.ckpt");
  Result a = runExample("molecule_property", "--limit 400 --layers 2 --hidden 24 --epochs 1 --lr 0.003 --save " + ck);
  ASSERT_EQ(a.code, 0) << a.out;
  // Continue with no model flags: the checkpoint's 2x24 GIN comes back.
  nlohmann::json j = lastJson(runExample("molecule_property", "--load " + ck + " --epochs 2 --json", false).out);
  EXPECT_EQ(j["layers"], 2);
  EXPECT_EQ(j["hidden"], 24);
  EXPECT_EQ(j["graphs"], 400);
  EXPECT_EQ(j["epochs"], 2);
  expectUsageError(runExample("molecule_property", "--load " + ck + " --hidden 300"),
                   "--hidden 300 contradicts " + ck + " (hidden 24)");
  // The same value given again is no contradiction.
  EXPECT_EQ(runExample("molecule_property", "--load " + ck + " --hidden 24 --epochs 1 --quiet").code, 0);
}

// The bar: a scaffold split on a MoleculeNet CSV prints per-epoch validation and the test metric at
// the best epoch, writes predictions, and `predict` on the same test molecules reproduces them bit for bit.
TEST_F(FrontEnd, ScaffoldSplitPredictionsAreReproducedByPredict) {
  const std::string ck = path("bbbp.ckpt"), pred = path("test_pred.csv"), log = path("log.jsonl");
  Result r = runExample("molecule_property", "--data " + kData +
                                          "moleculenet/BBBP.csv.gz --target-cols p_np --split scaffold --epochs 2 "
                                          "--layers 2 --hidden 32 --json --save " + ck + " --predict " + pred +
                                          " --log " + log);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("epoch 1/2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("valid rocauc"), std::string::npos) << r.out;
  nlohmann::json j = lastJson(r.out);
  EXPECT_EQ(j["split"]["kind"], "scaffold");
  EXPECT_TRUE(j["test_rocauc"].is_number()) << j.dump();
  EXPECT_TRUE(j["test_details"]["rocauc_per_target"].contains("p_np")) << j.dump();
  {
    std::ifstream in(log);
    int lines = 0;
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(nlohmann::json::parse(first)["run"]["split"]["kind"], "scaffold") << first;
    for (std::string l; std::getline(in, l);) {
      nlohmann::json e = nlohmann::json::parse(l);
      EXPECT_TRUE(e.contains("valid_rocauc"));
      ++lines;
    }
    EXPECT_EQ(lines, 2);
  }
  // The test molecules' SMILES, in the order of the predictions file, as a .smi for predict.
  std::ifstream in(pred);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header, "line,id,smiles,prediction");
  std::ofstream smi(path("test.smi"));
  std::vector<std::string> expected;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string l, id, smiles, p;
    std::getline(ss, l, ','), std::getline(ss, id, ','), std::getline(ss, smiles, ','), std::getline(ss, p, ',');
    smi << smiles << "\n";
    expected.push_back(smiles + "," + p);
  }
  smi.close();
  ASSERT_GT(expected.size(), 100u);
  Result p = runExample("predict", "--checkpoint " + ck + " --input " + path("test.smi") + " --out " + path("again.csv"));
  ASSERT_EQ(p.code, 0) << p.out;
  std::ifstream again(path("again.csv"));
  std::getline(again, header);
  size_t k = 0;
  while (std::getline(again, line)) {
    std::stringstream ss(line);
    std::string l, id, smiles, pr;
    std::getline(ss, l, ','), std::getline(ss, id, ','), std::getline(ss, smiles, ','), std::getline(ss, pr, ',');
    ASSERT_LT(k, expected.size());
    EXPECT_EQ(smiles + "," + pr, expected[k]) << "row " << k;
    ++k;
  }
  EXPECT_EQ(k, expected.size());
}

TEST_F(FrontEnd, PredictListsRejectedMoleculesWithTheirLines) {
  const std::string ck = path("m.ckpt");
  ASSERT_EQ(runExample("molecule_property", "--limit 300 --layers 1 --hidden 16 --quiet --save " + ck).code, 0);
  std::ofstream(path("new.smi")) << "CCO\nC1CC\nc1ccccc1O\n";
  Result p = runExample("predict", "--checkpoint " + ck + " --input " + path("new.smi") + " --out " + path("new.csv"));
  EXPECT_EQ(p.code, 0) << p.out;
  EXPECT_NE(p.out.find("new.smi:2: rejected 'C1CC'"), std::string::npos) << p.out;
  std::ifstream in(path("new.csv"));
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 3) << all;  // header + 2 molecules
  expectUsageError(runExample("predict", "--checkpoint " + ck + " --input " + path("new.smi")), "--out FILE.csv is required");
}

TEST_F(FrontEnd, MultipleTargetsGetPerTargetMetricsInTheirUnits) {
  nlohmann::json j = lastJson(
      runExample("molecule_property",
          "--data " + kData +
              "moleculenet/delaney-processed.csv.gz --target-cols 'measured log solubility in mols per litre,Molecular "
              "Weight' --epochs 1 --layers 1 --hidden 16 --json",
          false)
          .out);
  EXPECT_EQ(j["metric"], "std_mae");
  const auto& per = j["valid_details"]["mae_per_target"];
  ASSERT_TRUE(per.contains("Molecular Weight")) << j.dump();
  // Molecular weights are hundreds of daltons, solubilities a few log units: each MAE is in its own units.
  EXPECT_GT(per["Molecular Weight"].get<double>(), per["measured log solubility in mols per litre"].get<double>());
  EXPECT_EQ(j["target_scaling"]["std"].size(), 2u);
}

TEST_F(FrontEnd, SigintSavesAndLoadContinuesToTheSameWeights) {
  const std::string ck = path("int.ckpt");
  const std::string args = "--limit 1500 --layers 2 --hidden 48 --dropout 0.2 --epochs 3 --threads 2 --json --quiet";
  nlohmann::json whole = lastJson(runExample("molecule_property", args, false).out);
  // Interrupt the same run part-way; whatever moment the signal lands on, continuing must end the same.
  const std::string cmd = kBin + "molecule_property " + args + " --save " + ck + " > " + path("out.txt") + " 2>&1";
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  const int code = WEXITSTATUS(status);
  std::ifstream o(path("out.txt"));
  std::string out((std::istreambuf_iterator<char>(o)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(code == 130 || code == 0) << code << " " << out;
  if (code == 130) {
    EXPECT_NE(out.find("interrupted by SIGINT"), std::string::npos) << out;
  }
  ASSERT_TRUE(fs::exists(ck)) << out;
  nlohmann::json resumed = lastJson(runExample("molecule_property", args + " --load " + ck, false).out);
  EXPECT_EQ(resumed["param_l2"].get<double>(), whole["param_l2"].get<double>());
  EXPECT_EQ(resumed["loss_checksum"], whole["loss_checksum"]);
  EXPECT_EQ(resumed["valid_mae"].get<double>(), whole["valid_mae"].get<double>());
}

// Crash safety: kill -9 at several moments, --resume each time, and the run ends with the bits of one that
// was never stopped; a damaged newest checkpoint is reported and the one before it used.
TEST_F(FrontEnd, KilledRunsResumeToTheSameBitsAndADamagedCheckpointIsSkipped) {
  const std::string args = "--limit 3000 --layers 3 --hidden 128 --dropout 0.2 --epochs 3 --threads 2 --json --quiet";
  nlohmann::json whole = lastJson(runExample("molecule_property", args, false).out);
  const std::string dir = path("ckpts");
  const std::string resumeArgs = args + " --checkpoint-dir " + dir + " --checkpoint-every 3 --resume";
  int killed = 0;
  for (double t : {0.9, 1.3, 0.7, 1.6, 1.1}) {
    Result r = gnn::testing::runProgram("timeout -s KILL " + std::to_string(t) + " " + kBin + "molecule_property " +
                                        resumeArgs, false);
    if (r.code == 0) break;  // finished before the kill
    EXPECT_EQ(r.code, 137);
    ++killed;
  }
  nlohmann::json resumed = lastJson(runExample("molecule_property", resumeArgs, false).out);
  EXPECT_EQ(resumed["param_l2"].get<double>(), whole["param_l2"].get<double>()) << "after " << killed << " kills";
  EXPECT_EQ(resumed["loss_checksum"], whole["loss_checksum"]);
  // Flip a byte in the newest checkpoint: --resume names it and continues from the previous one. Only the
  // checkpoints: a kill that landed while one was written leaves its temporary (ckpt-N.ckpt.tmp.PID, removed once
  // a minute old), which sorts after them.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".ckpt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 2u);
  {
    std::fstream f(files.back(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(200);
    const char old = static_cast<char>(f.get());
    f.seekp(200);
    f.put(static_cast<char>(old ^ 0x5a));  // a changed byte whatever it was
  }
  Result again = runExample("molecule_property", resumeArgs);
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find(files.back().filename().string() + ": cannot be used"), std::string::npos) << again.out;
  EXPECT_EQ(lastJson(again.out)["param_l2"].get<double>(), whole["param_l2"].get<double>());
}

TEST_F(FrontEnd, CoraNonFiniteLossKeepsAFiniteLastGoodCheckpoint) {
  const std::string ck = path("lr.ckpt");
  Result r = runExample("cora_gcn", "--lr 1e20 --epochs 50 --save " + ck + " --quiet");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("training stopped"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(ck));
  // The saved state loads and evaluates (its weights are finite).
  Result e = runExample("cora_gcn", "--load " + ck + " --epochs 0 --lr 0.01 --json --quiet", false);
  EXPECT_EQ(e.code, 0) << e.out;
}

TEST_F(FrontEnd, AHugeLearningRateNeverLeavesNonFiniteWeightsInACheckpoint) {
  for (const char* lr : {"1e37", "1e38"}) {
    const std::string ck = path(std::string("huge") + lr + ".ckpt");
    Result r = runExample("molecule_property", std::string("--limit 600 --epochs 2 --layers 2 --hidden 32 --lr ") + lr +
                                            " --save " + ck + " --quiet");
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("training stopped"), std::string::npos) << r.out;
    if (!fs::exists(ck)) continue;  // stopped before anything could be saved
    nlohmann::json j = lastJson(runExample("molecule_property", "--load " + ck + " --epochs 0 --json --quiet", false).out);
    EXPECT_TRUE(std::isfinite(j["param_l2"].get<double>())) << lr << " " << j.dump();
  }
}

TEST_F(FrontEnd, EarlyStoppingAndSchedulesTakeEffect) {
  Result r = runExample("cora_gcn", "--epochs 200 --early-stopping 5 --schedule cosine --warmup 3 --json --quiet --log " +
                                 path("c.jsonl"),
                 false);
  ASSERT_EQ(r.code, 0);
  nlohmann::json j = lastJson(r.out);
  std::ifstream in(path("c.jsonl"));
  std::vector<nlohmann::json> lines;
  for (std::string l; std::getline(in, l);)
    if (!nlohmann::json::parse(l).contains("run")) lines.push_back(nlohmann::json::parse(l));
  ASSERT_GE(lines.size(), 6u);
  EXPECT_LT(lines.size(), 200u);  // stopped early
  EXPECT_LT(lines[0]["lr"].get<double>(), 0.01);  // in warmup
  const auto best = j["best_epoch"][0].get<int64_t>();
  EXPECT_EQ(static_cast<int64_t>(lines.size()), best + 5);
}

TEST_F(FrontEnd, ASplitColumnChoosesTheSplitAndThreadsMeanTheSameInBuildDataset) {
  std::ofstream(path("sc.csv")) << "smiles,y,part\nCCO,1.0,train\nCCN,2.0,train\nCCC,3.0,valid\nCCCl,1.5,test\n"
                                   "c1ccccc1,0.5,train\n";
  nlohmann::json j = lastJson(runExample("molecule_property", "--data " + path("sc.csv") +
                                                           " --target-cols y --split-col part --epochs 1 --layers 1 "
                                                           "--hidden 8 --json --quiet",
                                  false)
                                  .out);
  EXPECT_EQ(j["split"]["kind"], "column");
  EXPECT_EQ(j["train_graphs"], 3);
  EXPECT_EQ(j["test_graphs"], 1);
  expectUsageError(runExample("molecule_property", "--data " + path("sc.csv") + " --target-cols y --split-col part --split random"),
                   "both choose the split");
  expectUsageError(runExample("build_dataset", "--threads 999 --input " + path("sc.csv") + " --out " + path("x.npz")),
                   "--threads 999: this machine has");
}

TEST_F(FrontEnd, TimeBudgetStopsTrainingAndSaysSo) {
  nlohmann::json j = lastJson(runExample("molecule_property", "--limit 600 --layers 1 --hidden 16 --epochs 100000 "
                                                       "--time-budget 0.03 --schedule cosine --json --quiet",
                                  false)
                                  .out);
  EXPECT_TRUE(j["stopped_by_time_budget"].get<bool>()) << j.dump();
  EXPECT_LT(j["epochs"].get<int64_t>(), 100000);
  EXPECT_GE(j["train_seconds"].get<double>(), 1.8 * 0.99);
  EXPECT_TRUE(std::isfinite(j["valid_mae"].get<double>()));
  expectUsageError(runExample("molecule_property", "--time-budget -1"), "--time-budget -1: must be");
}

}  // namespace
