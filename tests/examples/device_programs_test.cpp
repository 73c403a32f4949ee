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

TEST(DevicePrograms, ReplicasAndAccumulationMatchTheBigBatch) {
  const nlohmann::json cpu = json("molecule_property", kSmall + "--device cpu --batch-size 64");
  const nlohmann::json ipu = json("molecule_property", kSmall + "--device ipu --batch-size 16 --replicas 2 --grad-accum 2");
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
