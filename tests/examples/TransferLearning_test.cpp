// Transfer learning in the molecule programs (app/TransferInit.h): --init-from copies another run's encoder and
// starts a fresh head (a classifier on an encoder trained for two regression targets), --freeze-encoder leaves
// the encoder bit for bit as the checkpoint holds it while the head trains (also through --load), the split
// into encoder and head for every model, and the refusals: other widths, layers or model named with the
// parameter, both shapes and the checkpoint; --init-from with --load or --resume; --freeze-encoder alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "RunProgram.h"
#include "ScratchFolder.h"
#include "ShippedFiles.h"
#include "app/MoleculeModel.h"
#include "app/TransferInit.h"
#include "gnn/io/Checkpoint.h"

namespace {
namespace fs = std::filesystem;
using namespace gnn;
using gnn::testing::expectUsageError;
using gnn::testing::ProgramResult;
using gnn::testing::runExample;
using gnn::testing::lastJson;
using gnn::testing::kEsolCsv;
using gnn::testing::kBbbpCsv;

// Small runs: GIN 2 x 32, 60 molecules to pretrain, 200 to fine-tune (both classes in every split). LayerNorm, so
// one checkpoint serves the runs on one model copy and on replicas (where --norm auto is LayerNorm); a frozen
// BatchNorm is tested in tests/gnn/nn/norm/BatchNorm_test.cpp.
const std::string kSmall = " --split random --norm layer --threads 1 --quiet --json";
const std::string kPretrain = "--data " + kEsolCsv +
                              " --target-cols 'measured log solubility in mols per litre,Molecular Weight' --epochs 1 "
                              "--hidden 32 --layers 2 --limit 60 --batch-size 20" + kSmall;
const std::string kFineTune = "--data " + kBbbpCsv + " --target-cols p_np --limit 200 --batch-size 50" + kSmall;
const std::string kWidths = " --hidden 32 --layers 2";

bool sameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

class TransferLearning : public gnn::testing::SuiteScratchFolderTest<TransferLearning> {
 protected:
  static void SetUpTestSuite() {
    makeFolder("transfer_test");
    pretrained_ = (dir_ / "pre.ckpt").string();
    ProgramResult r = runExample("molecule_property", kPretrain + " --save " + pretrained_, false);
    ASSERT_EQ(r.code, 0) << r.out;
  }
  static std::string pretrained_;
};
std::string TransferLearning::pretrained_;

TEST_F(TransferLearning, AFrozenEncoderEndsAsTheCheckpointHoldsItAndTheNewHeadTrains) {
  const std::string tuned = path("tuned.ckpt");
  ProgramResult r = runExample("molecule_property", kFineTune + kWidths + " --epochs 2 --init-from " + pretrained_ +
                                                        " --freeze-encoder --save " + tuned);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = lastJson(r.out);
  EXPECT_EQ(j["task"], "classification");  // the checkpoint's encoder learnt two regression targets
  EXPECT_EQ(j["init_from"], pretrained_);
  EXPECT_EQ(j["freeze_encoder"], true);
  EXPECT_EQ(j["trained_parameters"], 32 + 1);  // the head: [1, 32] and its bias
  EXPECT_TRUE(std::isfinite(j["valid_metric"].get<double>())) << j.dump();

  const Checkpoint pre = Checkpoint::load(pretrained_), ft = Checkpoint::load(tuned);
  EXPECT_EQ(ft.meta["config"]["init_from"], pretrained_);
  EXPECT_EQ(ft.meta["config"]["freeze_encoder"], true);
  const std::string from = pre.tensors.count("best.head.weight") ? "best." : "model.";
  int64_t encoder = 0;
  for (const auto& [key, t] : ft.tensors) {
    if (key.rfind("model.", 0) != 0) continue;
    const std::string name = key.substr(6);
    if (name.rfind("head.", 0) == 0) continue;
    ++encoder;
    ASSERT_TRUE(pre.tensors.count(from + name)) << name;
    EXPECT_TRUE(sameBits(t, pre.tensors.at(from + name))) << name << " changed";
    EXPECT_TRUE(sameBits(ft.tensors.at("best." + name), t)) << name << " (best epoch's weights)";
  }
  EXPECT_GT(encoder, 10);
  // The head: one target where the checkpoint had two, trained away from its fresh initial values.
  EXPECT_EQ(pre.tensors.at("model.head.weight").shape(), (std::vector<int64_t>{2, 32}));
  ASSERT_EQ(ft.tensors.at("model.head.weight").shape(), (std::vector<int64_t>{1, 32}));
  app::MoleculeModelSpec spec;
  spec.hidden = 32;
  spec.layers = 2;
  std::unique_ptr<BlockModel> fresh = app::makeMoleculeModel(spec, 0);
  for (const auto& [name, v] : fresh->namedParameters())
    if (name.rfind("head.", 0) == 0) {
      EXPECT_FALSE(sameBits(v.value(), ft.tensors.at("model." + name))) << name;
    }

  // --load keeps the run's configuration: the encoder stays frozen for two more epochs.
  const std::string more = path("more.ckpt");
  r = runExample("molecule_property", "--load " + tuned + " --epochs 4 --quiet --json --threads 1 --save " + more);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(lastJson(r.out)["trained_parameters"], 33);
  const Checkpoint again = Checkpoint::load(more);
  for (const auto& [key, t] : again.tensors)
    if (key.rfind("model.", 0) == 0 && key.rfind("model.head.", 0) != 0) {
      EXPECT_TRUE(sameBits(t, pre.tensors.at(from + key.substr(6)))) << key << " changed after --load";
    }
  EXPECT_FALSE(sameBits(again.tensors.at("model.head.weight"), ft.tensors.at("model.head.weight")));
}

// The same on simulated IPUs: two replicas, two pipeline stages (the stage that holds no trained parameter
// included).
TEST_F(TransferLearning, AFrozenEncoderStaysAsItIsOnReplicasAndPipelineStages) {
  const std::string tuned = path("ipu.ckpt");
  ProgramResult r = runExample("molecule_property", kFineTune + kWidths + " --epochs 1 --init-from " + pretrained_ +
                                                        " --freeze-encoder --device ipu --replicas 2 --grad-accum 2 "
                                                        "--pipeline-splits layers/1 --save " + tuned);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(lastJson(r.out)["trained_parameters"], 33);
  const Checkpoint pre = Checkpoint::load(pretrained_), ft = Checkpoint::load(tuned);
  const std::string from = pre.tensors.count("best.head.weight") ? "best." : "model.";
  for (const auto& [key, t] : ft.tensors)
    if (key.rfind("model.", 0) == 0 && key.rfind("model.head.", 0) != 0) {
      EXPECT_TRUE(sameBits(t, pre.tensors.at(from + key.substr(6)))) << key << " changed";
    }
}

TEST_F(TransferLearning, WithoutFreezingEveryParameterTrainsFromTheCheckpoint) {
  ProgramResult r = runExample("molecule_property", kFineTune + kWidths + " --epochs 1 --seed 1 --init-from " + pretrained_ +
                                                        " --save " + path("all.ckpt"));
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = lastJson(r.out);
  EXPECT_EQ(j["freeze_encoder"], false);
  EXPECT_EQ(j["trained_parameters"], j["parameters"]);
  const Checkpoint pre = Checkpoint::load(pretrained_), ft = Checkpoint::load(path("all.ckpt"));
  EXPECT_FALSE(sameBits(ft.tensors.at("model.convs.0.mlp.0.weight"), pre.tensors.at("model.convs.0.mlp.0.weight")));
  // Started from the checkpoint, not from the seed's initial weights: after a few steps of Adam at 1e-3 the
  // encoder is still near the checkpoint's.
  const Tensor& a = ft.tensors.at("model.convs.0.mlp.0.weight");
  const Tensor& b = pre.tensors.at((pre.tensors.count("best.head.weight") ? "best." : "model.") + std::string("convs.0.mlp.0.weight"));
  double diff = 0;
  for (int64_t i = 0; i < a.numel(); ++i) diff = std::max(diff, std::fabs(double(a.data<float>()[i]) - b.data<float>()[i]));
  EXPECT_LT(diff, 0.05);
}

TEST_F(TransferLearning, MismatchedModelsAreRefusedNamingTheParameterBothShapesAndTheCheckpoint) {
  const std::string flag = "--init-from " + pretrained_;
  ProgramResult r = runExample("molecule_property", kFineTune + " --epochs 1 --hidden 16 --layers 2 " + flag);
  expectUsageError(r, flag + ": parameter 'atom_encoder.");
  EXPECT_NE(r.out.find(", 16] float32 in this run's encoder"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" in " + pretrained_ + " but "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(" + pretrained_ + ": gin 2x32; this run: gin 2x16)"), std::string::npos) << r.out;

  expectUsageError(runExample("molecule_property", kFineTune + " --epochs 1 --hidden 32 --layers 3 " + flag),
                   flag + ": this run's encoder has parameter 'convs.2.");
  expectUsageError(runExample("molecule_property", kFineTune + " --epochs 1 --hidden 32 --layers 1 " + flag),
                   flag + ": its encoder parameter 'convs.1.");
  expectUsageError(runExample("molecule_property", kFineTune + kWidths + " --epochs 1 --model gcn " + flag),
                   flag + " holds a --model gin encoder (gin 2x32), but this run builds --model gcn");
}

TEST_F(TransferLearning, FlagsThatContradictItAreRefused) {
  expectUsageError(runExample("molecule_property", kFineTune + " --init-from " + pretrained_ + " --load " + pretrained_),
                   "--init-from and --load both set the starting weights");
  expectUsageError(runExample("molecule_property", kFineTune + " --init-from " + pretrained_ +
                                                       " --resume --checkpoint-dir " + path("dir")),
                   "--init-from and --resume both set the starting weights");
  expectUsageError(runExample("molecule_property", kFineTune + " --freeze-encoder"),
                   "--freeze-encoder needs --init-from CKPT");
  expectUsageError(runExample("molecule_property", kFineTune + " --init-from " + path("none.ckpt")),
                   "--init-from " + path("none.ckpt") + ": no such file");
}

// For every model: the parameters whose shapes follow the number of targets are the head's, and the head has
// parameters (a fresh head for another task is possible, and freezing leaves something to train).
TEST(TransferSplit, TheHeadIsWhatDependsOnTheTargets) {
  for (const std::string m : {"gin", "gcn", "dmpnn", "slim", "schnet"}) {
    SCOPED_TRACE(m);
    app::MoleculeModelSpec spec;
    spec.model = m;
    spec.hidden = 16;
    spec.layers = 2;
    spec.ffnHiddenDim = 8;
    spec.ffnNumLayers = 2;
    spec.tasks = 1;
    std::unique_ptr<BlockModel> one = app::makeMoleculeModel(spec, 0);
    spec.tasks = 3;
    std::unique_ptr<BlockModel> three = app::makeMoleculeModel(spec, 0);
    const auto a = one->namedParameters(), b = three->namedParameters();
    ASSERT_EQ(a.size(), b.size());
    int64_t head = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].first, b[i].first);
      if (a[i].second.shape() != b[i].second.shape()) {
        EXPECT_TRUE(app::isHeadParameter(spec, a[i].first)) << a[i].first << " follows the targets";
      }
      head += app::isHeadParameter(spec, a[i].first);
    }
    EXPECT_GT(head, 0);
    EXPECT_LT(head, static_cast<int64_t>(a.size()));
    std::vector<Variable> trained = app::freezeEncoder(*three, spec);
    EXPECT_EQ(static_cast<int64_t>(trained.size()), head);
    for (const auto& [name, v] : three->namedParameters()) EXPECT_EQ(v.requiresGrad(), app::isHeadParameter(spec, name)) << name;
  }
}

}  // namespace
