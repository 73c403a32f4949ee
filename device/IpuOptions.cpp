#include "device/IpuOptions.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "gnn/system/Check.h"

namespace gnn {

const char* outputModeName(OutputMode m) {
  switch (m) {
    case OutputMode::Default: return "default";
    case OutputMode::All: return "all";
    case OutputMode::Sum: return "sum";
    case OutputMode::Final: return "final";
    case OutputMode::EveryN: return "every";
  }
  return "?";
}

OutputMode parseOutputMode(const std::string& text, int64_t* period) {
  if (text == "all") return OutputMode::All;
  if (text == "sum") return OutputMode::Sum;
  if (text == "final") return OutputMode::Final;
  if (text == "default") return OutputMode::Default;
  for (const char* prefix : {"every:", "everyN:", "everyn:"}) {
    const std::string p(prefix);
    if (text.rfind(p, 0) == 0) {
      const std::string n = text.substr(p.size());
      char* end = nullptr;
      const long long v = std::strtoll(n.c_str(), &end, 10);
      GNN_CHECK_ARG(!n.empty() && end && *end == '\0' && v >= 1, "output mode '", text,
                    "': the period after ':' must be a whole number >= 1 (e.g. every:4)");
      if (period) *period = v;
      return OutputMode::EveryN;
    }
  }
  invalidArgument("unknown output mode '", text, "' (all, sum, final, every:N)");
}

const char* executionStrategyName(ExecutionStrategy s) {
  switch (s) {
    case ExecutionStrategy::Pipelined: return "pipelined";
    case ExecutionStrategy::Sharded: return "sharded";
    case ExecutionStrategy::Phased: return "phased";
  }
  return "?";
}

ExecutionStrategy parseExecutionStrategy(const std::string& text) {
  if (text == "pipelined") return ExecutionStrategy::Pipelined;
  if (text == "sharded") return ExecutionStrategy::Sharded;
  if (text == "phased") return ExecutionStrategy::Phased;
  invalidArgument("unknown execution strategy '", text, "' (pipelined, sharded, phased)");
}

const char* precisionName(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::FP16: return "fp16";
    case Precision::BF16: return "bf16";
  }
  return "?";
}

Precision parsePrecision(const std::string& text) {
  if (text == "fp32" || text == "float32") return Precision::FP32;
  if (text == "fp16" || text == "float16" || text == "half") return Precision::FP16;
  if (text == "bf16" || text == "bfloat16") return Precision::BF16;
  invalidArgument("unknown precision '", text, "' (fp32, fp16, bf16)");
}

MatmulPrecision matmulPrecisionOf(Precision p) {
  return p == Precision::BF16 ? MatmulPrecision::BFloat16 : MatmulPrecision::Float32;
}

namespace {
double parseScale(const std::string& text, const std::string& whole) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  GNN_CHECK_ARG(!text.empty() && end && *end == '\0' && std::isfinite(v) && v > 0, "loss scaling '", whole,
                "': the scale after ':' must be a finite number > 0 (e.g. static:1024)");
  return v;
}
}  // namespace

LossScaling LossScaling::parse(const std::string& text) {
  LossScaling l;
  if (text == "none") return l;
  if (text == "dynamic") {
    l.mode = Mode::Dynamic;
    l.scale = 65536;
    return l;
  }
  for (const char* prefix : {"static:", "dynamic:"}) {
    const std::string p(prefix);
    if (text.rfind(p, 0) == 0) {
      l.mode = p == "static:" ? Mode::Static : Mode::Dynamic;
      l.scale = parseScale(text.substr(p.size()), text);
      return l;
    }
  }
  invalidArgument("unknown loss scaling '", text, "' (none, static:S, dynamic, dynamic:S)");
}

std::string LossScaling::describe() const {
  char buf[96];
  switch (mode) {
    case Mode::None: return "no loss scaling";
    case Mode::Static: std::snprintf(buf, sizeof buf, "static loss scaling %g", scale); return buf;
    case Mode::Dynamic: std::snprintf(buf, sizeof buf, "dynamic loss scaling from %g", scale); return buf;
  }
  return "?";
}

LossScaling PrecisionOptions::resolvedLossScaling() const {
  if (precision != Precision::FP16) return LossScaling{};
  if (lossScaling.mode != LossScaling::Mode::None) return lossScaling;
  return LossScaling::parse("dynamic");
}

std::string IpuOptions::describeMemoryOptions() const {
  std::string s;
  auto add = [&](const std::string& x) { s += (s.empty() ? "" : ", ") + x; };
  if (precision == Precision::FP16) {
    add("fp16");
    add(resolvedLossScaling().describe());
    if (stochasticRounding) add("stochastic rounding");
  }
  if (offloadOptimizer) add("optimizer state offloaded");
  if (recompute) add("recomputation");
  if (replicatedTensorSharding) add("replicated tensor sharding");
  if (executionStrategy == ExecutionStrategy::Phased) add("phased execution");
  if (eightBitIo) add("8-bit I/O");
  return s;
}

const char* partialRequestName(PartialRequest p) { return p == PartialRequest::Pad ? "pad" : "drop"; }

PartialRequest parsePartialRequest(const std::string& text) {
  if (text == "pad") return PartialRequest::Pad;
  if (text == "drop") return PartialRequest::Drop;
  invalidArgument("unknown policy for the last partial request '", text, "' (pad, drop)");
}

OutputMode TrainingOptions::resolvedOutputMode(bool training) const {
  if (outputMode != OutputMode::Default) return outputMode;
  return training ? OutputMode::Final : OutputMode::All;
}

void IpuOptions::validate(bool training, int64_t stages) const {
  GNN_CHECK_ARG(replicationFactor >= 1, "replicationFactor must be >= 1, got ", replicationFactor);
  GNN_CHECK_ARG(gradientAccumulation >= 1, "gradientAccumulation must be >= 1, got ", gradientAccumulation);
  GNN_CHECK_ARG(deviceIterations >= 1, "deviceIterations must be >= 1, got ", deviceIterations);
  GNN_CHECK_ARG(outputMode != OutputMode::EveryN || outputPeriod >= 1, "output mode every:N needs N >= 1, got ",
                outputPeriod);
  GNN_CHECK_ARG(workers >= 0, "workers must be >= 0, got ", workers);
  GNN_CHECK_ARG(stages >= 1, "a program has at least one stage");
  GNN_CHECK_ARG(availableMemoryProportion > 0 && availableMemoryProportion <= 1,
                "availableMemoryProportion must be in (0, 1], got ", availableMemoryProportion);
  GNN_CHECK_ARG(ipuSpec == "mk2" || ipuSpec == "bow", "unknown IPU '", ipuSpec, "' (mk2, bow)");
  GNN_CHECK_ARG(precision == Precision::FP16 || lossScaling.mode == LossScaling::Mode::None,
                "loss scaling is for fp16 training; with fp32 leave it at none");
  GNN_CHECK_ARG(!stochasticRounding || precision == Precision::FP16, "stochastic rounding needs fp16 precision");
  GNN_CHECK_ARG(!replicatedTensorSharding || replicationFactor > 1,
                "replicated tensor sharding splits the optimizer state over the replicas: it needs "
                "replicationFactor >= 2, got ", replicationFactor);
  if (!training) {
    // PopTorch: "Gradient accumulation is not supported in inference" (an inference model has no update).
    GNN_CHECK_ARG(gradientAccumulation == 1, "gradient accumulation (", gradientAccumulation,
                  ") is only for training: an inference program has no weight update; set it to 1");
    if (stages > 1 && executionStrategy == ExecutionStrategy::Pipelined)
      GNN_CHECK_ARG(deviceIterations >= stages, "For pipelining, depth (device iterations in inference) must equal at "
                    "least the number of pipeline stages (", stages, "); got ", deviceIterations,
                    ": raise --device-iterations to ", stages, " or use --execution sharded");
    return;
  }
  // PopART's rule, in its words: a pipeline of P stages needs at least P micro-batches per update to fill.
  if (stages > 1 && executionStrategy == ExecutionStrategy::Pipelined)
    GNN_CHECK_ARG(gradientAccumulation >= stages, "For pipelining, depth (gradient accumulation factor) must equal at "
                  "least the number of pipeline stages (", stages, "); got ", gradientAccumulation,
                  ": raise --grad-accum to at least ", stages, " (2x or more keeps the pipeline busier), or use "
                  "--execution sharded");
}

bool IpuOptions::recomputesByDefault(bool training, int64_t stages) const {
  // PopTorch (popart_compiler/source/Compiler.cpp): "If we are pipelining we want to turn on recompute by
  // default" -- Pipelined execution over more than one IPU; sharded and phased programs do not.
  return !recompute && recomputeWhenPipelined && training && stages > 1 &&
         executionStrategy == ExecutionStrategy::Pipelined;
}

bool IpuOptions::recomputes(bool training, int64_t stages) const {
  return recompute || recomputesByDefault(training, stages);
}

int64_t IpuOptions::numIpus(int64_t stages) const {
  // Phased execution runs every phase on the same IPU(s) in turn.
  int64_t n = replicationFactor * (executionStrategy == ExecutionStrategy::Phased ? 1 : stages);
  if (!autoRoundNumIpus) return n;
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

std::string IpuOptions::describe(int64_t stages) const {
  std::string s = std::to_string(replicationFactor) + " replica(s) x " + std::to_string(stages) + " stage(s)";
  if (stages > 1) s += std::string(" (") + executionStrategyName(executionStrategy) + ")";
  s += ", accumulation " + std::to_string(gradientAccumulation) + ", " + std::to_string(deviceIterations) +
       " device iteration(s)";
  return s;
}

RequestShard IpuOptions::shard(bool training) const {
  const int64_t per = training ? gradientAccumulation : 1;
  const int64_t perRequest = training ? microBatchesPerRequest() : replicationFactor * deviceIterations;
  if (!processes || processes->size() == 1) return RequestShard::of(0, 1, replicationFactor, per, perRequest);
  return RequestShard::of(processes->rank(), processes->size(), replicationFactor, per, perRequest);
}

}  // namespace gnn
