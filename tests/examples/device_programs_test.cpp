// The programs on the simulated IPU, run as a user would: molecule_property with 2 replicas × 2 micro-batches of
// 16 ends with the weights of --device cpu with batches of 64 (PadToMax: the same molecules per update), the
// JSON keys of the device, pipelined = --device cpu with the same accumulation bit for bit, a trace with one
// track per IPU and its SVG, cora_gcn on two pipeline stages, and every rule refused in flag terms.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "RunProgram.h"

namespace {
namespace fs = std::filesystem;
using Result = gnn::testing::ProgramResult;


using gnn::testing::expectUsageError;
using gnn::testing::runExample;

nlohmann::json json(const std::string& program, const std::string& args) {
  Result r = runExample(program, args + " --json --quiet", false);
  EXPECT_EQ(r.code, 0) << program << " " << args << "\n" << r.out;
  return nlohmann::json::parse(r.out.substr(r.out.find('{')));
}

const std::string kSmall = "--limit 400 --epochs 2 --hidden 64 --strategy pad ";

// With LayerNorm: a batch's statistics (BatchNorm, --norm auto's choice on one copy) are no sum over its parts.
TEST(DevicePrograms, ReplicasAndAccumulationMatchTheBigBatch) {
  const nlohmann::json cpu = json("molecule_property", kSmall + "--norm layer --device cpu --batch-size 64");
  const nlohmann::json ipu = json("molecule_property", kSmall + "--device ipu --batch-size 16 --replicas 2 --grad-accum 2");
  EXPECT_EQ(ipu["norm"], "layer");  // --norm auto with replicas
  EXPECT_EQ(cpu["norm"], "layer");
  const double a = cpu["param_l2"].get<double>(), b = ipu["param_l2"].get<double>();
  EXPECT_LE(std::abs(a - b) / a, 1e-5) << a << " vs " << b;
  EXPECT_EQ(cpu["steps"], ipu["steps"]);
  for (const char* key : {"device", "ipus", "replicas", "grad_accum", "device_iterations", "stages", "final_loss",
                          "param_l2", "host_requests", "samples_per_s"})
    EXPECT_TRUE(ipu.contains(key)) << key;
  EXPECT_EQ(ipu["device"], "ipu");
  EXPECT_EQ(ipu["ipus"], 2);
  EXPECT_EQ(cpu["device"], "cpu");
  EXPECT_EQ(ipu["host_requests"], ipu["steps"]);
}

TEST(DevicePrograms, PipelinedEqualsTheCpuWithTheSameAccumulationAndWritesATrace) {
  const std::string dir = fs::temp_directory_path() / ("gnn_device_programs_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const nlohmann::json cpu = json("molecule_property", kSmall + "--device cpu --batch-size 16 --grad-accum 4");
  const nlohmann::json piped =
      json("molecule_property", kSmall + "--device ipu --batch-size 16 --grad-accum 4 --pipeline-splits layers/1,layers/3 "
                                         "--device-iterations 2 --trace " + dir + "/t.json --trace-svg " + dir + "/t.svg");
  EXPECT_EQ(cpu["param_l2"], piped["param_l2"]);
  EXPECT_EQ(cpu["loss_checksum"], piped["loss_checksum"]);
  EXPECT_EQ(piped["ipus"], 3);
  EXPECT_EQ(piped["stages"].size(), 3u);
  std::ifstream f(dir + "/t.json");
  const nlohmann::json t = nlohmann::json::parse(f);
  std::set<int64_t> tracks;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "forward") tracks.insert(e["tid"].get<int64_t>());
  EXPECT_EQ(tracks.size(), 3u);
  std::ifstream s(dir + "/t.svg");
  std::stringstream svg;
  svg << s.rdbuf();
  EXPECT_NE(svg.str().find(">flush<"), std::string::npos);
  fs::remove_all(dir);
}

TEST(DevicePrograms, CoraOnTwoStages) {
  const nlohmann::json j =
      json("cora_gcn", "--epochs 30 --device ipu --grad-accum 2 --pipeline-splits layers/1");
  EXPECT_EQ(j["device"], "ipu");
  EXPECT_EQ(j["ipus"], 2);
  EXPECT_GT(j["test_acc"][0].get<double>(), 0.5);
}

// --plan-only / --plan-inference with --json: stdout is exactly one JSON object, the content of --report (nothing
// else: the whole of stdout parses); a pipelined training program plans recomputation by PopTorch's default, and
// --no-recompute plans it without.
TEST(DevicePrograms, PlanOnlyWithJsonPrintsTheReportAsOneJsonObject) {
  const std::string dir = fs::temp_directory_path() / ("gnn_device_plan_json_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string split = "--device ipu --limit 200 --batch-size 16 --pipeline-splits layers/2 ";
  auto plan = [&](const std::string& args, int code) {
    Result r = runExample("molecule_property", split + args + " --json --report " + dir + "/plan.json", false);
    EXPECT_EQ(r.code, code) << args << "\n" << r.out;
    nlohmann::json out;
    try {
      out = nlohmann::json::parse(r.out);  // throws on anything before or after the object
    } catch (const nlohmann::json::exception& e) {
      ADD_FAILURE() << args << ": stdout is not one JSON object (" << e.what() << "):\n" << r.out;
    }
    std::ifstream f(dir + "/plan.json");
    EXPECT_EQ(out, nlohmann::json::parse(f)) << "stdout differs from --report";
    return out;
  };
  const nlohmann::json train = plan("--grad-accum 4 --plan-only", 0);
  EXPECT_EQ(train["program"], "training");
  EXPECT_TRUE(train["fits"].get<bool>());
  EXPECT_EQ(train["memory_per_ipu_mb"].size(), 2u);
  EXPECT_EQ(train["stages"].size(), 2u);
  EXPECT_EQ(train["splits"], nlohmann::json::array({"layers/2"}));
  EXPECT_TRUE(train["estimated_samples_per_s"].get<double>() > 0);
  EXPECT_TRUE(train["recompute"].get<bool>());
  EXPECT_TRUE(train["recompute_by_default"].get<bool>());
  EXPECT_GT(train["stages"][0]["recompute_ms"].get<double>(), 0);
  EXPECT_NE(train["memory_options"].get<std::string>().find("recomputation"), std::string::npos);

  const nlohmann::json off = plan("--grad-accum 4 --plan-only --no-recompute", 0);
  EXPECT_FALSE(off["recompute"].get<bool>());
  EXPECT_FALSE(off["recompute_by_default"].get<bool>());
  EXPECT_EQ(off["stages"][0]["recompute_ms"].get<double>(), 0);
  EXPECT_GT(off["memory_per_ipu_mb"][0].get<double>(), train["memory_per_ipu_mb"][0].get<double>());

  const nlohmann::json asked = plan("--grad-accum 4 --plan-only --recompute", 0);
  EXPECT_TRUE(asked["recompute"].get<bool>());
  EXPECT_FALSE(asked["recompute_by_default"].get<bool>());
  EXPECT_EQ(asked["memory_per_ipu_mb"], train["memory_per_ipu_mb"]);

  const nlohmann::json infer = plan("--plan-inference --device-iterations 4", 0);
  EXPECT_EQ(infer["program"], "inference");
  EXPECT_FALSE(infer["recompute"].get<bool>());

  // One stage: no recomputation by default; the human report without --json.
  Result human = runExample("molecule_property", "--device ipu --limit 200 --plan-only", false);
  EXPECT_EQ(human.code, 0) << human.out;
  EXPECT_EQ(human.out.rfind("Plan of the training program", 0), 0u) << human.out;
  EXPECT_EQ(human.out.find("recomputation"), std::string::npos) << human.out;
  fs::remove_all(dir);
}

// Training runs pipelined over two stages recompute by default (--json's "recompute"), with the same bits as
// --no-recompute, which stores the activations instead.
TEST(DevicePrograms, PipelinedTrainingRecomputesByDefaultWithTheSameBits) {
  const std::string args = kSmall + "--device ipu --batch-size 16 --grad-accum 4 --pipeline-splits layers/1,layers/3";
  const nlohmann::json byDefault = json("molecule_property", args);
  const nlohmann::json stored = json("molecule_property", args + " --no-recompute");
  EXPECT_TRUE(byDefault["recompute"].get<bool>());
  EXPECT_FALSE(stored["recompute"].get<bool>());
  EXPECT_EQ(byDefault["param_l2"], stored["param_l2"]);
  EXPECT_EQ(byDefault["loss_checksum"], stored["loss_checksum"]);
  const nlohmann::json unsplit = json("molecule_property", kSmall + "--device ipu --batch-size 16 --grad-accum 4");
  EXPECT_FALSE(unsplit["recompute"].get<bool>());
  expectUsageError(runExample("molecule_property", "--device ipu --recompute --no-recompute"),
                   "--recompute and --no-recompute contradict each other");
  expectUsageError(runExample("molecule_property", "--no-recompute"), "--no-recompute is an option of the simulated IPU");
}

TEST(DevicePrograms, RulesAreRefusedInFlagTerms) {
  expectUsageError(runExample("molecule_property", "--device ipu --pipeline-splits layers/2 --grad-accum 1"),
                   "For pipelining, depth (gradient accumulation factor) must equal at least the number of pipeline "
                   "stages (2)");
  expectUsageError(runExample("molecule_property", "--device ipu --pipeline-splits layers/9 --grad-accum 2 --limit 200"),
                   "blocks: input, layers/0, layers/1, layers/2, layers/3, layers/4, head");
  expectUsageError(runExample("molecule_property", "--device ipu --pipeline-splits layers/3,layers/1 --grad-accum 4 --limit 200"),
                   "out of order");
  expectUsageError(runExample("molecule_property", "--replicas 2"), "--replicas 2 needs --device ipu");
  expectUsageError(runExample("molecule_property", "--device gpu"), "--device 'gpu'");
  expectUsageError(runExample("molecule_property", "--device ipu --output-mode every:0"), "--output-mode");
}

}  // namespace
