// The plan commands as a user runs them: a packed loader's plan counts real graphs (graphs/s = packs/s x mean
// real graphs per pack, not the graph slots --batch-size asked for), the loader's preparation is timed within its
// bounds, a slow host (--host-prep-ms, the test hook) is named as the bottleneck and caps the headline, and
// --plan-scaling prints the table for 1..64 replicas in one command, as text and as the JSON's "scaling".
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "RunProgram.h"

namespace {
using gnn::testing::expectUsageError;
using gnn::testing::runExample;

// GPS++'s kind of micro-batch: 33 graph slots but a node and edge budget for about 16 molecules.
const std::string kPacked =
    "--device ipu --limit 300 --hidden 32 --strategy plan --batch-size 16 --num-graphs 33 --grad-accum 4 ";

nlohmann::json planJson(const std::string& args, int code = 0) {
  const gnn::testing::ProgramResult r = runExample("molecule_property", args + " --json", false);
  EXPECT_EQ(r.code, code) << args << "\n" << r.out;
  try {
    return nlohmann::json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << args << ": stdout is not one JSON object (" << e.what() << "):\n" << r.out;
    return {};
  }
}

TEST(PlanCommands, PackedLoaderPlanCountsRealGraphs) {
  const nlohmann::json j = planJson(kPacked + "--plan-only");
  const nlohmann::json& pk = j["packing"];
  ASSERT_TRUE(pk.is_object()) << j.dump(2);
  EXPECT_EQ(pk["strategy"], "plan");
  EXPECT_EQ(pk["graph_slots_per_pack"], 33);
  const double mean = pk["real_graphs_per_pack"].get<double>();
  EXPECT_GT(mean, 4.0);
  EXPECT_LT(mean, 32.0 * 0.75);  // the node budget, not the 32 real slots, limits a pack
  EXPECT_DOUBLE_EQ(j["samples_per_micro_batch"].get<double>(), mean);
  const double packsPerS = pk["packs_per_s"].get<double>();
  const double device = j["estimated_samples_per_s"].get<double>();
  EXPECT_NEAR(device, packsPerS * mean, 1e-9 * device);
  // packs/s by hand from the step: 1 replica x 4 micro-batches of one pack per weight update.
  EXPECT_NEAR(packsPerS, 4.0 / (j["step_ms"].get<double>() / 1e3), 1e-9 * packsPerS);
  // The host: timed on the loader (at most 20 micro-batches), this machine's cores.
  const nlohmann::json& h = j["host"];
  ASSERT_TRUE(h.is_object()) << j.dump(2);
  EXPECT_GE(h["timed_micro_batches"].get<int>(), 1);
  EXPECT_LE(h["timed_micro_batches"].get<int>(), 20);
  EXPECT_GT(h["ms_per_micro_batch_one_core"].get<double>(), 0);
  EXPECT_EQ(h["cores_source"], "this machine's");
  const double hostRate = h["host_samples_per_s"].get<double>();
  // The hosts' rate: a step's 4 micro-batches over their preparation on this machine's cores and the call.
  const double prepMs = 4 * h["ms_per_micro_batch_one_core"].get<double>() / h["cores_per_host"].get<double>();
  EXPECT_NEAR(hostRate, 4 * mean * 1e3 / (prepMs + h["call_ms_per_step"].get<double>()), 1e-6 * hostRate);
  // PopTorch's default loader (synchronous): each step of 4 micro-batches waits for their preparation.
  EXPECT_EQ(j["throughput"]["loader_mode"], "sync");
  const double step = j["step_ms"].get<double>() / 1e3 +
                      4 * h["ms_per_micro_batch_one_core"].get<double>() / 1e3 / h["cores_per_host"].get<double>();
  EXPECT_NEAR(j["throughput"]["samples_per_s"].get<double>(), 4 * mean / step, 1e-6 * device);
  EXPECT_LT(j["throughput"]["samples_per_s"].get<double>(), std::min(device, hostRate));
  const nlohmann::json async = planJson(kPacked + "--plan-only --loader-mode async --host-prep-ms " +
                                        std::to_string(h["ms_per_micro_batch_one_core"].get<double>()));
  EXPECT_EQ(async["throughput"]["loader_mode"], "async");
  // Asynchronous: the preparation hides under the IPUs' part of the step, the call does not.
  const double callMs = async["host"]["call_ms_per_step"].get<double>();
  const double asyncStep = callMs + std::max(async["step_ms"].get<double>() - callMs,
                                             async["host"]["preparation_ms_per_step"].get<double>());
  EXPECT_NEAR(async["throughput"]["samples_per_s"].get<double>(), 4 * mean * 1e3 / asyncStep, 1e-9 * device);
}

TEST(PlanCommands, SlowHostIsTheBottleneckInTheTextAndTheJson) {
  // 200 ms per micro-batch on one core, 2 cores: 2 x mean / 0.2 graphs/s, far below the IPUs.
  const std::string slow = kPacked + "--plan-only --host-prep-ms 200 --host-cores 2 --loader-mode async";
  const nlohmann::json j = planJson(slow);
  const double mean = j["packing"]["real_graphs_per_pack"].get<double>();
  EXPECT_EQ(j["throughput"]["limited_by"], "host");
  const double call = j["host"]["call_ms_per_step"].get<double>() / 1e3;
  EXPECT_NEAR(j["throughput"]["samples_per_s"].get<double>(), 4 * mean / (4 * 0.2 / 2 + call), 1e-9 * mean);
  EXPECT_TRUE(j["host"]["host_is_bottleneck"].get<bool>());
  EXPECT_EQ(j["host"]["cores_source"], "--host-cores");
  EXPECT_NEAR(j["step_parts"]["host_preparation_ms"].get<double>(), 4 * 200.0 / 2, 1e-9);
  const gnn::testing::ProgramResult text = runExample("molecule_property", slow, false);
  EXPECT_EQ(text.code, 0) << text.out;
  for (const char* needle : {"the HOST is the bottleneck", "limited by the HOST", "AsynchronousDataAccessor",
                             "--device-iterations", "host preparation (all hosts)", "real graphs per pack"})
    EXPECT_NE(text.out.find(needle), std::string::npos) << needle << "\n" << text.out;
  // A fast host leaves the IPUs as the limit once device iterations spread the request's call (a step of this
  // small model is shorter than one call).
  const nlohmann::json fast =
      planJson(kPacked + "--plan-only --host-prep-ms 0.001 --loader-mode async --device-iterations 64");
  EXPECT_EQ(fast["throughput"]["limited_by"], "device");
  EXPECT_DOUBLE_EQ(fast["throughput"]["samples_per_s"].get<double>(), fast["estimated_samples_per_s"].get<double>());
}

// --synthetic-data (PopTorch's enableSyntheticData): the plan drops the host's transfers and preparation, so the
// IPUs bind even where a slow host would; a run without a plan command is refused (nothing is computed here).
TEST(PlanCommands, SyntheticDataPlansTheDeviceAlone) {
  const std::string base = kPacked + "--plan-only --replicas 4 --merge-all-reduce";
  const nlohmann::json real = planJson(base + " --host-prep-ms 200 --host-cores 2");
  const nlohmann::json synthetic = planJson(base + " --synthetic-data");
  EXPECT_EQ(real["throughput"]["limited_by"], "host");
  EXPECT_FALSE(real["throughput"]["synthetic_data"].get<bool>());
  EXPECT_TRUE(synthetic["throughput"]["synthetic_data"].get<bool>());
  EXPECT_EQ(synthetic["throughput"]["limited_by"], "device");
  EXPECT_TRUE(synthetic["host"].is_null());
  EXPECT_TRUE(synthetic["throughput"]["host_samples_per_s"].is_null());
  EXPECT_DOUBLE_EQ(synthetic["throughput"]["samples_per_s"].get<double>(),
                   synthetic["estimated_samples_per_s"].get<double>());
  // Without transfers the device's step is shorter by the host I/O; the collectives are the same.
  EXPECT_LT(synthetic["step_ms"].get<double>(), real["step_ms"].get<double>());
  EXPECT_LT(synthetic["step_split"]["host_io"].get<double>(), real["step_split"]["host_io"].get<double>());
  EXPECT_DOUBLE_EQ(synthetic["collectives"]["all_reduce_ms"].get<double>(),
                   real["collectives"]["all_reduce_ms"].get<double>());
  EXPECT_EQ(synthetic["collectives"]["per_update"], 1);
  EXPECT_TRUE(synthetic["collectives"]["merged"].get<bool>());
  expectUsageError(runExample("molecule_property", "--device ipu --limit 50 --synthetic-data"),
                   "--synthetic-data plans what PopTorch's enableSyntheticData runs");
  expectUsageError(runExample("molecule_property", "--limit 50 --synthetic-data --plan-only"),
                   "--synthetic-data is an option of the simulated IPU");
}

TEST(PlanCommands, PlanScalingPrintsOneToSixtyFourReplicas) {
  const std::string args = kPacked + "--pipeline-splits layers/2 --plan-scaling --host-prep-ms 1 --host-cores 8";
  const nlohmann::json j = planJson(args);
  const nlohmann::json& rows = j["scaling"]["rows"];
  ASSERT_EQ(rows.size(), 7u) << j.dump(2);
  double lastAllReduce = -1;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t R = int64_t{1} << i;
    EXPECT_EQ(rows[i]["replicas"], R);
    EXPECT_EQ(rows[i]["ipus"], 2 * R);
    EXPECT_EQ(rows[i]["hosts"], (2 * R + 3) / 4);
    EXPECT_EQ(rows[i]["pods"], (2 * R + 63) / 64);
    const double allReduce = rows[i]["all_reduce_ipu_links_ms"].get<double>() + rows[i]["all_reduce_network_ms"].get<double>();
    EXPECT_GE(allReduce, lastAllReduce);
    lastAllReduce = allReduce;
    for (const char* key : {"compute_ms", "exchange_ms", "host_io_ms", "host_preparation_ms", "samples_per_s"})
      EXPECT_TRUE(rows[i][key].is_number()) << key;
  }
  EXPECT_EQ(rows[0]["all_reduce_network_ms"], 0.0);
  EXPECT_GT(rows[6]["all_reduce_network_ms"].get<double>(), 0);
  const gnn::testing::ProgramResult text = runExample("molecule_property", args, false);
  EXPECT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("Scaling (--plan-scaling)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Plan of the training program"), std::string::npos) << text.out;
  expectUsageError(runExample("molecule_property", "--plan-scaling"), "--plan-scaling is an option of the simulated IPU");
  expectUsageError(runExample("molecule_property", "--device ipu --plan-only --host-cores 0"), "--host-cores");
  expectUsageError(runExample("molecule_property", "--merge-all-reduce"), "--merge-all-reduce is an option of the simulated IPU");
  expectUsageError(runExample("molecule_property", "--loader-mode async"), "--loader-mode async is an option of the simulated IPU");
  expectUsageError(runExample("molecule_property", "--device ipu --plan-only --loader-mode fast"), "--loader-mode");
}

}  // namespace
