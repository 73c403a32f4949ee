#include "app/NodeRuns.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "app/ComputeInfo.h"
#include "gnn/autograd/OpInfo.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/SystemInfo.h"

namespace gnn::app {

NodeRuns trainNodeRuns(const NodeSettings& s, OpProfiler& profiler,
                       const std::function<NodeRunResult(uint64_t seed)>& runOne) {
  NodeRuns runs;
  std::optional<ObserverScope> profiling;
  if (s.profile) profiling.emplace(profiler);
  for (int64_t run = 0; run < s.runs; ++run) {
    const uint64_t seed = s.training.seed + static_cast<uint64_t>(run);
    NodeRunResult r = runOne(seed);
    if (!s.training.quiet && s.runs > 1)
      std::fprintf(stderr, "run %lld (seed %llu): test accuracy %.4f (best validation at epoch %lld)\n",
                   static_cast<long long>(run + 1), static_cast<unsigned long long>(seed), r.testAcc,
                   static_cast<long long>(r.bestEpoch));
    runs.epochMs.insert(runs.epochMs.end(), r.epochMs.begin(), r.epochMs.end());
    runs.inferMs.insert(runs.inferMs.end(), r.inferMs.begin(), r.inferMs.end());
    runs.results.push_back(std::move(r));
  }
  profiling.reset();
  if (s.profile) {
    std::fprintf(stderr, "per-op profile of %lld run(s) (training and evaluation forwards, backward)\n",
                 static_cast<long long>(s.runs));
    profiler.print(std::cerr);
  }
  return runs;
}

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::pair<double, double> meanStd(const std::vector<NodeRunResult>& results, double NodeRunResult::*field) {
  double m = 0, s = 0;
  for (const auto& r : results) m += r.*field;
  m /= static_cast<double>(results.size());
  for (const auto& r : results) s += (r.*field - m) * (r.*field - m);
  return std::pair{m, results.size() > 1 ? std::sqrt(s / static_cast<double>(results.size() - 1)) : 0.0};
}

void addNodeRunsJson(nlohmann::json& j, const NodeSettings& s, const NodeRuns& runs, const OpProfiler& profiler) {
  const std::vector<NodeRunResult>& results = runs.results;
  j["test_acc_mean"] = meanStd(results, &NodeRunResult::testAcc).first;
  j["test_acc_std"] = meanStd(results, &NodeRunResult::testAcc).second;
  j["test_acc_final_epoch_mean"] = meanStd(results, &NodeRunResult::finalTestAcc).first;
  j["val_acc_mean"] = meanStd(results, &NodeRunResult::valAcc).first;
  j["inference"] = !results.empty() && results.front().layerwiseInference ? "layerwise" : "full";
  j["epoch_ms_median"] = medianOf(runs.epochMs);
  j["infer_ms_median"] = medianOf(runs.inferMs);
  j["threads"] = numThreads();
  addComputeInfo(j);
  if (!results.empty() && results.front().device.is_object()) {
    const nlohmann::json dev = results.front().device;
    for (const auto& [k, v] : dev.items()) j[k] = v;
  } else {
    j["device"] = "cpu";
  }
  j["peak_rss_mb"] = peakRssMb();
  for (const auto& r : results) {
    j["test_acc"].push_back(r.testAcc);
    j["best_epoch"].push_back(r.bestEpoch);
    j["final_loss"].push_back(r.summary["final_loss"]);
    j["loss_checksum"].push_back(r.summary["loss_checksum"]);
    j["predictions_checksum"].push_back(r.predChecksum.hex());
    j["param_l2"].push_back(r.paramL2);
    j["param_checksum"].push_back(r.paramChecksum);
    if (!r.loader.is_null()) j["loader_runs"].push_back(r.loader);
  }
  if (s.profile) j["profile"] = profiler.json();
}

void printNodeRunsLine(const std::string& dataset, const NodeSettings& s, const NodeRuns& runs) {
  const std::vector<NodeRunResult>& results = runs.results;
  const auto [testMean, testStd] = meanStd(results, &NodeRunResult::testAcc);
  std::printf("%s: test accuracy %.4f", dataset.c_str(), testMean);
  if (s.runs > 1)
    std::printf(" +- %.4f over %lld runs", testStd, static_cast<long long>(s.runs));
  else
    std::printf(" (best validation accuracy %.4f at epoch %lld)", meanStd(results, &NodeRunResult::valAcc).first,
                static_cast<long long>(results[0].bestEpoch));
  std::printf("; epoch %.3f ms, inference %.3f ms (medians); param_l2 %.6f\n", medianOf(runs.epochMs),
              medianOf(runs.inferMs), results[0].paramL2);
}

}  // namespace gnn::app
