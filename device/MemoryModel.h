// MemoryModel: the bytes each simulated IPU holds for a model cut into stages, item by item, against its
// In-Processor-Memory. Per stage (every replica holds the same): weights, gradient accumulators, optimizer state
// (and fp16's fp32 master weights), the activations stashed for the micro-batches in flight (a pipelined stage s
// of P holds up to 2(P-s)-1: PipelineSchedule), what recomputation keeps instead, the buffers between stages,
// the largest op's temporaries (matmuls capped by availableMemoryProportion, as Poplar's planner does), the
// host I/O buffers and a stated constant for code and exchange. Streaming memory (off-chip) is listed apart:
// what offload and phased execution move there. Every figure comes from the compile record (ModelProfile) and
// the IpuSpec; nothing is fitted.
//
//   MemoryPlan m = planMemory(profile, {{0, 4}, {4, 8}}, options, IpuSpec::mk2());
//   if (!m.fits) std::cerr << m.ipus[m.fullest].describe();
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "device/IpuOptions.h"
#include "device/IpuSpec.h"
#include "device/ModelProfile.h"
#include "device/StageSplit.h"

namespace gnn {


struct MemoryItem {
  std::string category;  // "weights", "optimizer state", "stashed activations", ...
  std::string block;     // "layers/3", or "" for the whole stage
  std::string detail;    // "multiHeadAttention x 7 micro-batches", ...
  int64_t bytes = 0;
};

/// One IPU: stage `stage` of a replica (phased execution: the one IPU of a replica, the fullest phase).
struct IpuMemory {
  int64_t stage = 0;
  std::string stageName;
  std::vector<MemoryItem> items;
  int64_t total = 0, budget = 0;
  bool fits() const { return total <= budget; }
  std::map<std::string, int64_t> byCategory() const;
};

struct MemoryPlan {
  std::vector<IpuMemory> ipus;       // one per stage (phased: one)
  std::vector<MemoryItem> streaming;  // off-chip, per replica
  int64_t streamingTotal = 0, streamingBudget = 0;
  size_t fullest = 0;  // index into ipus of the largest total
  bool fits = true;
};

/// Bytes a value of a floating tensor takes at `p` relative to the fp32 it was captured in.
double floatScale(Precision p);

/// One stage `stage` of `stages` holding blocks [first, last); what it puts in streaming memory is appended to
/// `streaming` (may be null).
IpuMemory stageMemory(const ModelProfile& model, int64_t first, int64_t last, int64_t stage, int64_t stages,
                      const IpuOptions& options, const IpuSpec& spec, std::vector<MemoryItem>* streaming);

MemoryPlan planMemory(const ModelProfile& model, const StageBlocks& stages, const IpuOptions& options,
                      const IpuSpec& spec);

/// "12.3 MB" (decimal megabytes, as PopVision).
std::string formatMB(int64_t bytes);

}  // namespace gnn
