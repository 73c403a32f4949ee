#include "app/HeteroNodeDevice.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "device/CompileRecord.h"
#include "device/Plan.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Check.h"

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

namespace {

// A sampled step's layout: its rows per type (the featured types' feature rows, the others' ids), the target's
// rows, the featureless rows' ids in z.
TypedBatchLayout stepLayout(const HeteroNodeStep& st, const HeteroNodeModelSpec& spec) {
  TypedBatchLayout layout;
  for (size_t t = 0; t < spec.nodeTypes.size(); ++t) {
    const Tensor& rows = st.features[t].defined() ? st.features[t] : st.nodeIds[t];
    layout.rows.push_back(rows.defined() ? rows.dim(0) : 0);
    layout.widths.push_back(std::max<int64_t>(spec.nodeTypes[t].features, 0));
  }
  layout.targetType = spec.targetType;
  layout.targetRows = st.targetRows;
  layout.nodeIds = true;
  return layout;
}

Batch stepBatch(const HeteroNodeStep& st, const TypedBatchLayout& layout) {
  Batch b = typedGraphBatch(layout, st.features, st.edgeIndex, st.edgeType, st.y, st.seedMask);
  setTypedNodeIds(b, layout, st.nodeIds);
  b.numSeeds = st.numSeeds;
  return b;
}

}  // namespace

HeteroNodeDevice::HeteroNodeDevice(const HeteroDeviceInputs& in, HeteroNodeModel& model, Optimizer* optimizer,
                                   HeteroNodeBatches* batches)
    : in_(in), model_(model.module()), batches_(batches) {
  shapes_ = firstBatch();
  if (batches_) model.setBatchLayout(layout_);
  // The CPU path's loss: a mean over the target type's training nodes (a batch's seeds).
  LossFn lossFn{[](const Variable& out, const Batch& b) { return crossEntropy(out, b.y, b.trainMask); },
                [](const Batch& b) { return labelCount(b.trainMask, 0); }};
  PlanInputs plan;
  plan.samplesPerMicroBatch = 1;  // one graph, as the homogeneous programs count a micro-batch of nodes
  plan.extendReport = [this](const Plan& p, nlohmann::json& j) { j["memory_by_type"] = memoryByType(p); };
  const DeviceFlags& df = in.settings.device;
  program_ = df.compile(in.prog, model.module(), std::move(lossFn), optimizer, shapes_, plan,
                        in.settings.training.quiet);
  if (!df.trace.empty() || !df.traceSvg.empty()) program_->enableTrace(df.traceRequests);
}

// The micro-batch the program is compiled for: the whole graph, or epoch 0's first sampled batch (the epoch
// starts again when it trains).
Batch HeteroNodeDevice::firstBatch() {
  const HeteroNodeData& d = in_.data;
  if (!batches_) {
    layout_ = wholeGraphLayout(in_.spec);
    graph_ = typedGraphBatch(layout_, d.features, d.graph.edgeIndex, d.graph.edgeType, d.y, d.trainMask);
    return graph_;
  }
  batches_->startEpoch(0);
  HeteroNodeStep st;
  GNN_CHECK_ARG(batches_->next(st), "--loader neighbor: the epoch has no batch to compile the program for");
  layout_ = stepLayout(st, in_.spec);
  return stepBatch(st, layout_);
}

nlohmann::json HeteroNodeDevice::memoryByType(const Plan& plan) const {
  return heteroMemoryByType(plan, model_, in_.spec, layout_, shapes_.edgeAttr);
}

int64_t HeteroNodeDevice::updatesPerEpoch() const {
  return program_->updatesFor(batches_ ? batches_->numBatches() : in_.settings.device.microBatchesPerRequest());
}

bool HeteroNodeDevice::trainEpoch(Trainer& trainer, int64_t epoch, int64_t skip) {
  if (batches_) return trainBatches(trainer, epoch, skip);
  if (skip > 0) return true;
  // Under mpirun each rank sends only its replicas' micro-batches (RequestShard: the device's mapping).
  const RequestShard shard = in_.settings.device.options.shard(/*training=*/true);
  int64_t mine = 0;
  for (int64_t m = 0; m < in_.settings.device.microBatchesPerRequest(); ++m) mine += shard.owns(m) ? 1 : 0;
  if (mine <= 1) return trainer.step(*program_, mine == 1 ? graph_ : Batch());
  return trainer.step(*program_, stackMicroBatches(std::vector<Batch>(static_cast<size_t>(mine), graph_)));
}

// Sampled batches stacked into host requests, as the homogeneous loaders' (app/NodeTraining.cpp).
bool HeteroNodeDevice::trainBatches(Trainer& trainer, int64_t epoch, int64_t skip) {
  const RequestShard shard = in_.settings.device.options.shard(/*training=*/true);
  const auto perRequest = static_cast<size_t>(in_.settings.device.microBatchesPerRequest());
  batches_->startEpoch(epoch);
  std::vector<Batch> parts;
  auto flush = [&] {
    if (parts.empty()) return true;
    const int64_t updates = program_->updatesFor(static_cast<int64_t>(parts.size()));
    const Batch request = ownedRequest(parts, shard);
    if (skip > 0) {
      skip -= updates;
      return true;
    }
    return trainer.step(*program_, request);
  };
  bool more = true;
  for (HeteroNodeStep st; more && batches_->next(st);) {
    parts.push_back(stepBatch(st, layout_));
    if (parts.size() == perRequest) more = flush();
  }
  return more && flush();
}

nlohmann::json HeteroNodeDevice::finish(const std::string& programName) const {
  const DeviceFlags& df = in_.settings.device;
  df.writeTraces(*program_, programName);
  nlohmann::json j = df.toJson(*program_);
  const nlohmann::json plan = df.planJson(*program_);  // items() must not outlive the json it iterates
  for (const auto& [k, v] : plan.items()) j[k] = v;
  if (const Plan* p = program_->plan()) j["memory_by_type"] = memoryByType(*p);
  if (!in_.settings.training.quiet) std::cerr << "stages (per micro-batch):\n" << program_->stageTable();
  return j;
}

}  // namespace gnn::app
