// HeteroNodeDevice: node_property's heterogeneous models (--model rgcn | hgt) trained on the simulated IPUs
// (--device ipu). Full batch, the whole typed graph is one micro-batch (models/TypedGraphBatch.h), repeated for
// every micro-batch of a host request as the homogeneous whole-graph path repeats its graph (each sees the same
// graph, so an update is the full-batch one); with --loader neighbor (R-GCN), each fixed-size sampled batch is a
// micro-batch, its featureless rows' node ids in z, stacked into host requests as the homogeneous loaders' batches
// are. Compiled by the device flags like every other program (the plan, --plan-only, the out-of-memory report,
// --trace), with the plan's memory split by node type and relation.
//
//   app::HeteroNodeDevice dev({prog, settings, data, spec}, *model, opt.get(), batches);  // batches: null = full
//   dev.trainEpoch(trainer, epoch, skip);     // host requests of microBatchesPerRequest micro-batches
//   result.device = dev.finish("node_property");
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "app/HeteroNodeBatches.h"
#include "app/HeteroNodeData.h"
#include "app/HeteroNodeModel.h"
#include "app/NodeFlags.h"
#include "app/Program.h"
#include "app/Trainer.h"
#include "device/Device.h"
#include "models/TypedGraphBatch.h"

namespace gnn::app {

/// The plan's memory by node type and relation ("memory_by_type" of the report and of --json). Per node type: its
/// rows, its features' bytes per micro-batch on the host link (fp32) and double-buffered on the IPU, the
/// parameters that are its own (an embedding, a Linear, HGT's per-type projections and skip) and what they hold on
/// the IPUs at the plan's bytes per parameter (weights, gradients, optimizer state). Per relation: its edges, their
/// bytes on the host link (two node ids, the relation and the edge mask), double-buffered, and its own parameters
/// (R-GCN's weight per relation or its basis coefficients, HGT's a_rel, m_rel, p_rel) with their bytes. Shared
/// parameters (R-GCN's bases, root weights and biases; HGT's classifier) are listed apart.
nlohmann::json heteroMemoryByType(const Plan& plan, const Module& model, const HeteroNodeModelSpec& spec,
                                  const TypedBatchLayout& layout, const Tensor& edgeType);

/// What the device path reads of the run.
struct HeteroDeviceInputs {
  const Program& prog;
  const NodeSettings& settings;
  const HeteroNodeData& data;
  const HeteroNodeModelSpec& spec;
};

class HeteroNodeDevice {
 public:
  /// Compiles the training program of model.module() (the caller's weights, updated by every request) and
  /// `optimizer` on the whole graph, or on `batches`' micro-batches (then epoch 0's first batch gives the shapes).
  HeteroNodeDevice(const HeteroDeviceInputs& in, HeteroNodeModel& model, Optimizer* optimizer,
                   HeteroNodeBatches* batches);

  /// Weight updates an epoch makes.
  int64_t updatesPerEpoch() const;
  /// The epoch's host requests, the first `skip` updates left out (an interrupted epoch's); false when
  /// --time-budget is spent.
  bool trainEpoch(Trainer& trainer, int64_t epoch, int64_t skip);
  /// Writes --trace / --trace-svg and returns the device's --json keys with the plan's and memory_by_type.
  nlohmann::json finish(const std::string& programName) const;

 private:
  Batch firstBatch();
  bool trainBatches(Trainer& trainer, int64_t epoch, int64_t skip);
  nlohmann::json memoryByType(const Plan& plan) const;

  HeteroDeviceInputs in_;
  const BlockModel& model_;
  HeteroNodeBatches* batches_;
  TypedBatchLayout layout_;
  Batch graph_;  // full batch: the whole graph's micro-batch
  Batch shapes_;  // the micro-batch compiled
  std::unique_ptr<DeviceProgram> program_;
};

}  // namespace gnn::app
