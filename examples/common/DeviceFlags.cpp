#include "examples/common/DeviceFlags.h"

#include <sstream>

namespace gnn::app {

void DeviceFlags::addTo(Program& prog) {
  prog.group("Device (the simulated IPU's execution model; names as in PopTorch)").add_options()(
      "device", value(&device, "cpu"),
      "cpu (the model whole, on this machine's cores) | ipu (simulated IPUs: replicas, pipeline stages, "
      "gradient accumulation, device iterations, all on CPU threads with exact numerics)")(
      "replicas", value(&replicas, int64_t{1}), "data-parallel replicas (PopTorch's replicationFactor; --device ipu)")(
      "grad-accum", value(&gradAccum, int64_t{1}),
      "micro-batches per weight update (gradientAccumulation); one update = --batch-size x --replicas x this")(
      "device-iterations", value(&deviceIterations, int64_t{1}), "weight updates per host request (deviceIterations)")(
      "output-mode", value(&outputMode, "default"),
      "which micro-batches' outputs a host request returns: all | sum | final | every:N (default: final in "
      "training); the programs log every update's loss whatever the mode")(
      "pipeline-splits", value(&pipelineSplits, ""),
      "block names that start a new pipeline stage, comma-separated in model order (e.g. layers/1,layers/3); "
      "each stage of each replica is one simulated IPU")(
      "execution", value(&execution, "pipelined"),
      "pipelined (every stage at once, micro-batches in flight) | sharded (one stage at a time)")(
      "auto-round-num-ipus", po::bool_switch(&autoRound),
      "round replicas x stages up to a power of two, as real IPU systems require")(
      "partial-request", value(&partialRequest, "pad"),
      "the epoch's last host request when it has too few micro-batches for a weight update: pad (with weight-0 "
      "micro-batches) | drop (counted in the report)")(
      "trace", po::value(&trace)->value_name("FILE.json"),
      "write the execution trace of the first --trace-requests host requests (Chrome trace-event JSON: open it in "
      "https://ui.perfetto.dev or chrome://tracing)")(
      "trace-svg", po::value(&traceSvg)->value_name("FILE.svg"),
      "draw the last traced host request's schedule as an SVG timeline (open it in a browser)")(
      "trace-requests", value(&traceRequests, int64_t{2}), "host requests recorded for --trace");
}

void DeviceFlags::apply() {
  requireOneOf("--device", device, {"cpu", "ipu"});
  requireAtLeast("--replicas", static_cast<double>(replicas), 1);
  requireAtLeast("--grad-accum", static_cast<double>(gradAccum), 1);
  requireAtLeast("--device-iterations", static_cast<double>(deviceIterations), 1);
  requireAtLeast("--trace-requests", static_cast<double>(traceRequests), 1);
  requireOneOf("--execution", execution, {"pipelined", "sharded"});
  requireOneOf("--partial-request", partialRequest, {"pad", "drop"});
  if (!trace.empty()) checkWritable("--trace", trace);
  if (!traceSvg.empty()) checkWritable("--trace-svg", traceSvg);
  options = IpuOptions{};
  options.replicationFactor = replicas;
  options.gradientAccumulation = gradAccum;
  options.deviceIterations = deviceIterations;
  try {
    options.outputMode = parseOutputMode(outputMode, &options.outputPeriod);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--output-mode: ") + e.what());
  }
  options.executionStrategy = parseExecutionStrategy(execution);
  options.partialRequest = parsePartialRequest(partialRequest);
  options.autoRoundNumIpus = autoRound;
  options.pipelineSplits.clear();
  std::stringstream ss(pipelineSplits);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) options.pipelineSplits.push_back(item);
  if (device == "cpu") {
    if (replicas != 1) throw UsageError("--replicas " + std::to_string(replicas) + " needs --device ipu");
    if (!options.pipelineSplits.empty()) throw UsageError("--pipeline-splits needs --device ipu");
  }
  try {
    options.validate(true, static_cast<int64_t>(options.pipelineSplits.size()) + 1);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

nlohmann::json DeviceFlags::toJson(const DeviceProgram& program) const {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : program.stageNames()) stages.push_back(s);
  return {{"device", device},
          {"ipus", program.numIpus()},
          {"replicas", replicas},
          {"grad_accum", gradAccum},
          {"device_iterations", deviceIterations},
          {"execution", execution},
          {"output_mode", outputModeName(options.resolvedOutputMode(true))},
          {"stages", stages},
          {"host_requests", program.hostRequests()}};
}

void DeviceFlags::writeTraces(const DeviceProgram& program, const std::string& title) const {
  if (!trace.empty()) program.trace().writeChromeJson(trace, title);
  if (!traceSvg.empty()) program.trace().writeSvg(traceSvg, title);
}

}  // namespace gnn::app
