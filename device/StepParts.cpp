#include "device/StepParts.h"

#include <algorithm>
#include <sstream>

#include "device/Plan.h"
#include "device/PlanFormat.h"

namespace gnn {

using planfmt::pct;

StepParts stepParts(const CostPlan& c, const HostPlan& h) {
  StepParts p;
  const StepSplit& s = c.split;
  p.device = {{"compute", "compute (bottleneck stage)", s.compute},
              {"exchange", "on-tile exchange (gathers, scatters)", s.exchange},
              {"pipeline_bubble", "pipeline bubble and stage copies", s.bubble},
              {"all_reduce_ipu_links", "all-reduce over IPU-Links", std::max(0.0, s.allReduce - c.networkSeconds)},
              {"all_reduce_network", "all-reduce between PODs or hosts", c.networkSeconds},
              {"optimizer", "optimizer", s.optimizer},
              {"host_io", "host I/O (transfers, the request's call)", s.hostIo},
              {"streaming", "streaming memory", s.streaming}};
  for (const StepPart& part : p.device) p.deviceStep += part.seconds;
  p.hostKnown = h.known;
  p.hostPreparation = h.known ? h.secondsPerStep : 0;
  p.overlappedStep = std::max(p.deviceStep, p.hostPreparation);
  p.serialStep = p.deviceStep + p.hostPreparation;
  p.asyncLoading = h.asyncLoading;
  return p;
}

StepParts stepParts(const Plan& plan) { return stepParts(plan.cost, plan.host); }

std::string StepParts::table() const {
  std::ostringstream s;
  char line[160];
  const double T = deviceStep > 0 ? deviceStep : 1;
  s << "  step parts (per step, on the bottleneck stage):\n";
  for (const StepPart& p : device) {
    std::snprintf(line, sizeof line, "    %-40s %10.3f ms %5s\n", p.name.c_str(), p.seconds * 1e3, pct(p.seconds / T).c_str());
    s << line;
  }
  std::snprintf(line, sizeof line, "    %-40s %10.3f ms\n", "the device's step", deviceStep * 1e3);
  s << line;
  if (hostKnown) {
    std::snprintf(line, sizeof line, "    %-40s %10.3f ms %5s  (%s)\n", "host preparation (all hosts)",
                  hostPreparation * 1e3, pct(hostPreparation / T).c_str(),
                  asyncLoading ? "beside the step: overlapped by asynchronous loading"
                               : "between the calls: synchronous loading, PopTorch's default");
    s << line;
    if (asyncLoading)
      std::snprintf(line, sizeof line, "    %-40s %10.3f ms  (with --loader-mode sync: %.3f ms)\n",
                    "the step with the hosts", overlappedStep * 1e3, serialStep * 1e3);
    else
      std::snprintf(line, sizeof line, "    %-40s %10.3f ms  (with --loader-mode async: %.3f ms)\n",
                    "the step with the hosts", serialStep * 1e3, overlappedStep * 1e3);
    s << line;
  }
  return s.str();
}

nlohmann::json StepParts::toJson() const {
  nlohmann::json parts = nlohmann::json::array();
  const double T = deviceStep > 0 ? deviceStep : 1;
  for (const StepPart& p : device)
    parts.push_back({{"part", p.key}, {"name", p.name}, {"ms", p.seconds * 1e3}, {"share", p.seconds / T}});
  nlohmann::json j = {{"device", parts}, {"device_step_ms", deviceStep * 1e3}};
  if (hostKnown) {
    j["host_preparation_ms"] = hostPreparation * 1e3;
    j["loader_mode"] = asyncLoading ? "async" : "sync";
    j["step_with_hosts_ms"] = (asyncLoading ? overlappedStep : serialStep) * 1e3;
    j["step_with_async_loading_ms"] = overlappedStep * 1e3;
    j["step_without_async_loading_ms"] = serialStep * 1e3;
  }
  return j;
}

}  // namespace gnn
