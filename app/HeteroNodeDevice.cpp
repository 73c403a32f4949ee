#include "app/HeteroNodeDevice.h"

#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "device/CompileRecord.h"
#include "device/Plan.h"
#include "gnn/ops/Ops.h"

namespace gnn::app {

namespace {

// Bytes the plan's IPUs hold per parameter: its weights, gradients and optimizer state over its parameters (so
// the split follows the plan's precision, accumulation, optimizer and sharding).
double bytesPerParameter(const Plan& plan) {
  int64_t bytes = 0;
  for (const IpuMemory& m : plan.memory.ipus)
    for (const MemoryItem& i : m.items)
      if (i.category == "weights" || i.category == "gradients" || i.category == "optimizer state") bytes += i.bytes;
  return plan.parameters > 0 ? static_cast<double>(bytes) / static_cast<double>(plan.parameters) : 0;
}

std::vector<std::string> dottedParts(const std::string& name) {
  std::vector<std::string> parts;
  std::stringstream in(name);
  for (std::string p; std::getline(in, p, '.');) parts.push_back(p);
  return parts;
}

// Whose each parameter is: a node type's, a relation's, or shared.
struct ParameterOwners {
  std::map<std::string, int64_t> types, relations;
  int64_t shared = 0;
};

ParameterOwners parameterOwners(const Module& model, const HeteroNodeModelSpec& spec) {
  ParameterOwners o;
  std::set<std::string> types, relations;
  for (const HeteroRGCNNodeType& t : spec.nodeTypes) types.insert(t.name);
  for (const EdgeType& r : spec.edgeTypes) relations.insert(r.str());
  const int64_t R = static_cast<int64_t>(spec.edgeTypes.size());
  for (const auto& [name, p] : model.namedParameters()) {
    const std::vector<std::string> parts = dottedParts(name);
    const int64_t n = p.value().numel();
    // R-GCN's convs.<l>.weight [R, in, out] (without bases) and convs.<l>.comp [R, bases]: a slice per relation.
    const bool slices = spec.name == "rgcn" && parts.size() == 3 && parts[0] == "convs" &&
                        ((parts[2] == "weight" && spec.numBases == 0) || parts[2] == "comp");
    if (slices && R > 0) {
      for (const EdgeType& r : spec.edgeTypes) o.relations[r.str()] += n / R;
      continue;
    }
    std::string type, relation;  // a relation's key holds its types' names, never as a whole part
    for (const std::string& part : parts) {
      if (relations.count(part)) relation = part;
      if (types.count(part)) type = part;
    }
    if (!relation.empty()) o.relations[relation] += n;
    else if (!type.empty()) o.types[type] += n;
    else o.shared += n;
  }
  return o;
}

// One entry: its input bytes per micro-batch (double-buffered on the IPU) and its parameters at perParam bytes.
nlohmann::json memoryTerm(int64_t inputBytes, int64_t parameters, double perParam) {
  const auto paramBytes = static_cast<int64_t>(static_cast<double>(parameters) * perParam + 0.5);
  return {{"input_bytes", inputBytes}, {"io_buffer_bytes", 2 * inputBytes}, {"parameters", parameters},
          {"parameter_bytes", paramBytes}, {"total_bytes", paramBytes + 2 * inputBytes}};
}

}  // namespace

nlohmann::json heteroMemoryByType(const Plan& plan, const Module& model, const HeteroNodeModelSpec& spec,
                                  const TypedBatchLayout& layout, const Tensor& edgeType) {
  const double perParam = bytesPerParameter(plan);
  ParameterOwners owners = parameterOwners(model, spec);
  nlohmann::json types = nlohmann::json::object();
  for (size_t t = 0; t < spec.nodeTypes.size(); ++t) {
    const HeteroRGCNNodeType& type = spec.nodeTypes[t];
    // Its rows of x (fp32) and of the node mask (1 byte a row).
    const int64_t input = layout.rows[t] * (layout.widths[t] * streamedBytesPerElement(DType::F32) + 1);
    nlohmann::json j = memoryTerm(input, owners.types[type.name], perParam);
    j["rows"] = layout.rows[t];
    j["features"] = layout.widths[t];
    types[type.name] = j;
  }
  std::vector<int64_t> edges(spec.edgeTypes.size(), 0);
  const int64_t* rel = edgeType.data<int64_t>();
  for (int64_t e = 0; e < edgeType.numel(); ++e)
    if (rel[e] >= 0 && rel[e] < static_cast<int64_t>(edges.size())) ++edges[static_cast<size_t>(rel[e])];
  // An edge crosses as two node ids (edge_index) and its relation (edge_attr), as 32-bit values, and a mask byte.
  const int64_t perEdge = 3 * streamedBytesPerElement(DType::I64) + 1;
  nlohmann::json relations = nlohmann::json::object();
  for (size_t r = 0; r < spec.edgeTypes.size(); ++r) {
    const std::string key = spec.edgeTypes[r].str();
    nlohmann::json j = memoryTerm(edges[r] * perEdge, owners.relations[key], perParam);
    j["edges"] = edges[r];
    relations[key] = j;
  }
  return {{"bytes_per_parameter", perParam},
          {"node_types", types},
          {"relations", relations},
          {"shared", memoryTerm(0, owners.shared, perParam)}};
}

HeteroNodeDevice::HeteroNodeDevice(const HeteroDeviceInputs& in, BlockModel& model, Optimizer* optimizer)
    : in_(in), model_(model), layout_(wholeGraphLayout(in.spec)) {
  const HeteroNodeData& d = in.data;
  graph_ = typedGraphBatch(layout_, d.features, d.graph.edgeIndex, d.graph.edgeType, d.y, d.trainMask);
  // The CPU path's loss: a mean over the target type's training nodes.
  LossFn lossFn{[](const Variable& out, const Batch& b) { return crossEntropy(out, b.y, b.trainMask); },
                [](const Batch& b) { return labelCount(b.trainMask, 0); }};
  PlanInputs plan;
  plan.samplesPerMicroBatch = 1;  // one graph, as the homogeneous whole-graph program counts it
  plan.extendReport = [this](const Plan& p, nlohmann::json& j) {
    j["memory_by_type"] = heteroMemoryByType(p, model_, in_.spec, layout_, in_.data.graph.edgeType);
  };
  const DeviceFlags& df = in.settings.device;
  program_ = df.compile(in.prog, model, std::move(lossFn), optimizer, graph_, plan, in.settings.training.quiet);
  if (!df.trace.empty() || !df.traceSvg.empty()) program_->enableTrace(df.traceRequests);
}

int64_t HeteroNodeDevice::updatesPerEpoch() const {
  return program_->updatesFor(in_.settings.device.microBatchesPerRequest());
}

bool HeteroNodeDevice::trainEpoch(Trainer& trainer) {
  // Under mpirun each rank sends only its replicas' micro-batches (RequestShard: the device's mapping).
  const RequestShard shard = in_.settings.device.options.shard(/*training=*/true);
  int64_t mine = 0;
  for (int64_t m = 0; m < in_.settings.device.microBatchesPerRequest(); ++m) mine += shard.owns(m) ? 1 : 0;
  if (mine <= 1) return trainer.step(*program_, mine == 1 ? graph_ : Batch());
  return trainer.step(*program_, stackMicroBatches(std::vector<Batch>(static_cast<size_t>(mine), graph_)));
}

nlohmann::json HeteroNodeDevice::finish(const std::string& programName) const {
  const DeviceFlags& df = in_.settings.device;
  df.writeTraces(*program_, programName);
  nlohmann::json j = df.toJson(*program_);
  const nlohmann::json plan = df.planJson(*program_);  // items() must not outlive the json it iterates
  for (const auto& [k, v] : plan.items()) j[k] = v;
  if (const Plan* p = program_->plan())
    j["memory_by_type"] = heteroMemoryByType(*p, model_, in_.spec, layout_, in_.data.graph.edgeType);
  if (!in_.settings.training.quiet) std::cerr << "stages (per micro-batch):\n" << program_->stageTable();
  return j;
}

}  // namespace gnn::app
