// StepParts: one step of a plan (a weight update; inference: a device iteration) as the parts people size a
// system by: compute and on-tile exchange on the bottleneck stage, the pipeline's bubble (with the copies between
// stages), the gradient all-reduce over IPU-Links and over the hosts' network, the optimizer, host I/O, streaming
// memory; the device's parts add up to its step. Beside them, the hosts' preparation of the step's micro-batches,
// which asynchronous loading overlaps with the step (throughput = min(device, host)).
//
//   StepParts parts = stepParts(plan);
//   std::cout << parts.table();   // part, ms, share of the device's step
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gnn {

struct CostPlan;
struct HostPlan;
struct Plan;

struct StepPart {
  std::string key;   // "compute", "all_reduce_ipu_links", ...
  std::string name;  // "all-reduce over IPU-Links"
  double seconds = 0;
};

struct StepParts {
  std::vector<StepPart> device;  // add up to deviceStep
  double deviceStep = 0;
  bool hostKnown = false;
  double hostPreparation = 0;    // the step's micro-batches prepared on every host's cores
  double overlappedStep = 0;     // max(device, host): asynchronous loading
  double serialStep = 0;         // device + host: preparation between calls
  bool asyncLoading = false;     // which of the two the step with the hosts is (HostPlan::asyncLoading)

  std::string table() const;
  nlohmann::json toJson() const;
};

StepParts stepParts(const CostPlan& cost, const HostPlan& host);
StepParts stepParts(const Plan& plan);

}  // namespace gnn
