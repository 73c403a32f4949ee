#include "device/PlanScaling.h"

#include <algorithm>
#include <sstream>

#include "device/Plan.h"
#include "device/PlanFormat.h"
#include "device/StepParts.h"
#include "gnn/system/Check.h"

namespace gnn {

using planfmt::fmt;
using planfmt::thousands;

namespace {
double partOf(const StepParts& parts, const std::string& key) {
  for (const StepPart& p : parts.device)
    if (p.key == key) return p.seconds;
  return 0;
}
}  // namespace

PlanScaling planScaling(const Plan& plan, const ScalingOptions& so) {
  GNN_CHECK_ARG(plan.profile != nullptr, "planScaling: the plan holds no model profile (plan it with makePlan)");
  GNN_CHECK_ARG(so.ipusPerHost >= 1 && so.ipusPerPod >= 1 && so.maxReplicas >= 1,
                "planScaling: IPUs per host, IPUs per POD and replicas must be >= 1");
  PlanScaling t;
  t.options = so;
  t.stages = static_cast<int64_t>(plan.stages.size());
  t.networkGbps = plan.options.networkBytesPerSecond * 8 / 1e9;
  for (int64_t R = 1; R <= so.maxReplicas; R *= 2) {
    IpuOptions o = plan.options;  // its splits resolved, recomputation as planned
    o.replicationFactor = R;
    if (o.replicatedTensorSharding && R < 2) o.replicatedTensorSharding = false;
    ScalingRow row;
    row.replicas = R;
    row.ipus = o.numIpus(t.stages);
    row.hosts = (row.ipus + so.ipusPerHost - 1) / so.ipusPerHost;
    row.pods = (row.ipus + so.ipusPerPod - 1) / so.ipusPerPod;
    o.ipusPerPod = so.ipusPerPod;  // the all-reduce crosses the GW-Links between PODs
    Plan q = makePlan(*plan.profile, o, plan.samplesPerMicroBatch, /*withFixes=*/false);
    if (plan.host.known) q.setHost(plan.host.sample, plan.host.coresPerHost, plan.host.coresSource, row.hosts);
    const StepParts parts = stepParts(q);
    row.fits = q.fits();
    row.stepSeconds = parts.deviceStep;
    row.compute = partOf(parts, "compute");
    row.exchange = partOf(parts, "exchange");
    row.bubble = partOf(parts, "pipeline_bubble");
    row.allReduceIpuLinks = partOf(parts, "all_reduce_ipu_links");
    row.allReduceNetwork = partOf(parts, "all_reduce_network");
    row.optimizer = partOf(parts, "optimizer");
    row.hostIo = partOf(parts, "host_io");
    row.streaming = partOf(parts, "streaming");
    row.hostKnown = q.host.known;
    row.hostPreparation = parts.hostPreparation;
    row.deviceSamplesPerSecond = q.host.known ? q.host.deviceSamplesPerSecond : q.cost.samplesPerSecond;
    row.hostSamplesPerSecond = q.host.known ? q.host.samplesPerSecond : 0;
    row.samplesPerSecond = q.throughput();
    row.limitedBy = q.limitedBy();
    const double first = t.rows.empty() ? row.samplesPerSecond : t.rows.front().samplesPerSecond;
    row.efficiency = first > 0 ? row.samplesPerSecond / (static_cast<double>(R) * first) : 0;
    t.rows.push_back(row);
  }
  return t;
}

std::string PlanScaling::table() const {
  std::ostringstream s;
  s << "Scaling (--plan-scaling): each row the same " << stages << " stage(s), micro-batch and accumulation (weak "
    << "scaling); R x " << stages << " IPUs fed by ceil(IPUs / " << options.ipusPerHost << ") hosts (an IPU-M2000 / "
    << "Bow-2000 per host: --ipus-per-host) with the same cores each, joined by IPU-Links within PODs of "
    << options.ipusPerPod << " IPUs (--ipus-per-pod) and by GW-Links between PODs; ms per step\n";
  char line[320];
  std::snprintf(line, sizeof line, "  %4s %5s %5s %4s %4s %9s %9s %9s %9s %9s %9s %9s %9s %11s %11s %11s %7s %5s\n",
                "R", "IPUs", "hosts", "PODs", "fits", "step", "compute", "exchange", "bubble", "IPU-Link", "GW-Link",
                "host I/O", "host prep", "device/s", "host/s", "samples/s", "limit", "eff");
  s << line;
  for (const ScalingRow& r : rows) {
    std::snprintf(line, sizeof line,
                  "  %4lld %5lld %5lld %4lld %4s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9s %11s %11s %11s %7s %4.0f%%\n",
                  static_cast<long long>(r.replicas), static_cast<long long>(r.ipus), static_cast<long long>(r.hosts),
                  static_cast<long long>(r.pods), r.fits ? "yes" : "NO", r.stepSeconds * 1e3, r.compute * 1e3, r.exchange * 1e3, r.bubble * 1e3,
                  r.allReduceIpuLinks * 1e3, r.allReduceNetwork * 1e3, r.hostIo * 1e3,
                  r.hostKnown ? fmt("%.3f", r.hostPreparation * 1e3).c_str() : "-",
                  thousands(r.deviceSamplesPerSecond).c_str(), r.hostKnown ? thousands(r.hostSamplesPerSecond).c_str() : "-",
                  thousands(r.samplesPerSecond).c_str(), r.limitedBy.c_str(), r.efficiency * 100);
    s << line;
  }
  return s.str();
}

nlohmann::json PlanScaling::toJson() const {
  nlohmann::json rs = nlohmann::json::array();
  for (const ScalingRow& r : rows)
    rs.push_back({{"replicas", r.replicas},
                  {"ipus", r.ipus},
                  {"hosts", r.hosts},
                  {"pods", r.pods},
                  {"fits", r.fits},
                  {"step_ms", r.stepSeconds * 1e3},
                  {"compute_ms", r.compute * 1e3},
                  {"exchange_ms", r.exchange * 1e3},
                  {"pipeline_bubble_ms", r.bubble * 1e3},
                  {"all_reduce_ipu_links_ms", r.allReduceIpuLinks * 1e3},
                  {"all_reduce_network_ms", r.allReduceNetwork * 1e3},
                  {"optimizer_ms", r.optimizer * 1e3},
                  {"host_io_ms", r.hostIo * 1e3},
                  {"streaming_ms", r.streaming * 1e3},
                  {"host_preparation_ms", r.hostKnown ? nlohmann::json(r.hostPreparation * 1e3) : nlohmann::json(nullptr)},
                  {"device_samples_per_s", r.deviceSamplesPerSecond},
                  {"host_samples_per_s", r.hostKnown ? nlohmann::json(r.hostSamplesPerSecond) : nlohmann::json(nullptr)},
                  {"samples_per_s", r.samplesPerSecond},
                  {"limited_by", r.limitedBy},
                  {"efficiency", r.efficiency}});
  return {{"ipus_per_host", options.ipusPerHost},
          {"ipus_per_pod", options.ipusPerPod},
          {"stages", stages},
          {"network_gbps", networkGbps},
          {"assumptions", "each row keeps the stages, micro-batch and accumulation (weak scaling); hosts = ceil(IPUs / "
                          "ipus_per_host), host preparation scales with them at the same cores per host; pods = "
                          "ceil(IPUs / ipus_per_pod): the all-reduce runs over IPU-Links within a POD and over the "
                          "GW-Links between PODs (GCL's three phases)"},
          {"rows", rs}};
}

}  // namespace gnn
