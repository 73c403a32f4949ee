#include "device/MemoryModel.h"

#include <algorithm>
#include <cstdio>

#include "device/PipelineSchedule.h"

namespace gnn {

double floatScale(Precision p) { return p == Precision::FP16 ? 0.5 : 1.0; }

std::string formatMB(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

std::map<std::string, int64_t> IpuMemory::byCategory() const {
  std::map<std::string, int64_t> m;
  for (const MemoryItem& i : items) m[i.category] += i.bytes;
  return m;
}

namespace {
int64_t scaleBytes(int64_t bytes, double f) { return static_cast<int64_t>(static_cast<double>(bytes) * f + 0.5); }

// Saved bytes of a block at the program's precision (floating tensors shrink with fp16).
int64_t savedAt(const BlockProfile& b, double fs) {
  int64_t n = 0;
  for (const OpCost& c : b.forward) n += c.floating ? scaleBytes(c.savedBytes, fs) : c.savedBytes;
  return n;
}

// The largest single op's working set (inputs and output), matmuls capped by availableMemoryProportion.
int64_t temporaries(const ModelProfile& m, int64_t first, int64_t last, double fs, int64_t ampBytes,
                    std::string* which) {
  int64_t best = 0;
  for (int64_t b = first; b < last; ++b)
    for (const auto* ops : {&m.blocks[static_cast<size_t>(b)].forward, &m.blocks[static_cast<size_t>(b)].backward})
      for (const OpCost& c : *ops) {
        int64_t bytes = c.floating ? scaleBytes(c.bytes, fs) : c.bytes;
        if (c.cls == OpClass::Matmul) bytes = std::min(bytes, ampBytes);
        if (bytes > best) {
          best = bytes;
          *which = m.blocks[static_cast<size_t>(b)].name + ": " + c.name;
        }
      }
  return best;
}

// What every part of a stage's memory depends on: the model, the stage, and the options' figures for it.
struct StageContext {
  const ModelProfile& m;
  const IpuOptions& o;
  int64_t first, last, s, P;
  double fs;
  bool fp16, phased;
  int64_t pb, R, G, ampBytes;
  int64_t statePerParam;  // optimizer state per parameter
  int64_t ioIn;           // the first stage's input bytes per micro-batch
  int64_t stash;          // micro-batches whose activations the stage holds at once
};

StageContext stageContext(const ModelProfile& m, int64_t first, int64_t last, int64_t s, int64_t P,
                          const IpuOptions& o, const IpuSpec& spec) {
  const double fs = floatScale(o.precision);
  const bool fp16 = o.precision == Precision::FP16;
  const int64_t pb = fp16 ? 2 : 4;
  const int64_t R = o.replicationFactor;
  const int64_t G = m.training ? o.gradientAccumulation : o.deviceIterations;
  const bool phased = o.executionStrategy == ExecutionStrategy::Phased;
  const int64_t ampBytes = static_cast<int64_t>(o.availableMemoryProportion * static_cast<double>(spec.memoryBytes()));
  // Optimizer state per parameter: its fp32 tensors, plus the fp32 master weights when the model runs in fp16.
  const int64_t statePerParam = m.training ? 4 * m.optimizerStateTensors + (fp16 ? 4 : 0) : 0;
  const int64_t ioIn = o.eightBitIo ? m.inputBytes - m.inputIntegerFeatureBytes + m.inputIntegerFeatureElements
                                    : m.inputBytes;
  // Micro-batches whose activations a stage holds at once: 2(P-s)-1 pipelined, 1 sharded, all G phased.
  const int64_t stash =
      m.training ? PipelineSchedule::training(P, std::max<int64_t>(G, 1), o.executionStrategy).maxStashed(s) : 0;
  return {m, o, first, last, s, P, fs, fp16, phased, pb, R, G, ampBytes, statePerParam, ioIn, stash};
}

// Where a stage's items go: on the IPU (add) or to streaming memory (stream); an item of no bytes is left out.
struct StageItems {
  IpuMemory& ipu;
  std::vector<MemoryItem>& streaming;

  void add(std::string cat, std::string block, std::string detail, int64_t bytes) {
    if (bytes > 0) ipu.items.push_back({std::move(cat), std::move(block), std::move(detail), bytes});
  }
  void stream(std::string cat, std::string block, std::string detail, int64_t bytes) {
    if (bytes > 0) streaming.push_back({std::move(cat), std::move(block), std::move(detail), bytes});
  }
};

// Weights at the program's precision; phased execution keeps them in streaming memory and loads one phase at a
// time (charged as the resident phase).
void blockWeights(const BlockProfile& bp, const StageContext& c, StageItems& items) {
  const int64_t w = bp.parameters;
  if (c.phased) items.stream("weights", bp.name, c.fp16 ? "fp16" : "fp32", w * c.pb);
  items.add("weights", bp.name, c.fp16 ? "fp16" : "fp32", w * c.pb);
}

// Training: one gradient per weight (with accumulation an fp32 accumulator, the sum over micro-batches), and the
// optimizer's state: sharded over the replicas with RTS, in streaming memory when offloaded or phased.
void blockGradientsAndState(const BlockProfile& bp, const StageContext& c, StageItems& items) {
  const int64_t w = bp.parameters;
  const std::string& bn = bp.name;
  items.add("gradients", bn, c.G > 1 ? "fp32 accumulators" : (c.fp16 ? "fp16" : "fp32"), w * (c.G > 1 ? 4 : c.pb));
  int64_t state = w * c.statePerParam;
  std::string how = std::to_string(c.m.optimizerStateTensors) + " fp32 tensors per weight" +
                    (c.fp16 ? " + fp32 master weights" : "");
  if (c.o.replicatedTensorSharding) {
    state = (state + c.R - 1) / c.R;
    how += ", 1/" + std::to_string(c.R) + " shard per replica";
  }
  if (c.o.offloadOptimizer || c.phased)
    items.stream("optimizer state", bn, how, state);
  else
    items.add("optimizer state", bn, how, state);
}

// The activations block b stashes for the micro-batches in flight (`saved`: its saved bytes per micro-batch).
void blockStash(const BlockProfile& bp, int64_t b, int64_t saved, const StageContext& c, StageItems& items) {
  const std::string& bn = bp.name;
  const int64_t stash = c.stash;
  if (c.o.recompute) {
    // A checkpoint per block (its input state) per micro-batch in flight; the block's own saved tensors
    // exist only while its backward runs (charged once, apart).
    const int64_t cp = b == c.first && c.s == 0 ? 0 : scaleBytes(bp.inputBytes, c.fs);
    if (c.phased)
      items.stream("stashed activations", bn, "checkpoint x " + std::to_string(stash) + " micro-batches", cp * stash);
    else
      items.add("stashed activations", bn, "checkpoint x " + std::to_string(stash) + " micro-batches", cp * stash);
  } else if (c.phased) {
    items.stream("stashed activations", bn, "x " + std::to_string(stash) + " micro-batches", saved * stash);
  } else {
    // The largest saved tensors of the block, named, then the rest.
    std::vector<const OpCost*> ops;
    for (const OpCost& op : bp.forward)
      if (op.savedBytes > 0) ops.push_back(&op);
    std::stable_sort(ops.begin(), ops.end(),
                     [](const OpCost* a, const OpCost* b2) { return a->savedBytes > b2->savedBytes; });
    int64_t rest = saved;
    for (size_t i = 0; i < ops.size() && i < 2; ++i) {
      const int64_t bytes = ops[i]->floating ? scaleBytes(ops[i]->savedBytes, c.fs) : ops[i]->savedBytes;
      items.add("stashed activations", bn, ops[i]->name + " x " + std::to_string(stash) + " micro-batches",
                bytes * stash);
      rest -= bytes;
    }
    items.add("stashed activations", bn, "other ops x " + std::to_string(stash) + " micro-batches", rest * stash);
  }
}

// Recomputation: the micro-batch's inputs are kept too (the first block recomputes from them), and one block's
// saved tensors (the largest: `maxBlockSaved` bytes of `maxBlockName`) are live while its backward runs.
// Phased: one micro-batch's saved tensors of the resident phase.
void recomputedOrResident(const StageContext& c, const std::string& maxBlockName, int64_t maxBlockSaved,
                          StageItems& items) {
  if (c.o.recompute) {
    if (c.phased)
      items.stream("stashed activations", "", "micro-batch inputs x " + std::to_string(c.stash), c.ioIn * c.stash);
    else
      items.add("stashed activations", "", "micro-batch inputs x " + std::to_string(c.stash), c.ioIn * c.stash);
    items.add("recomputation", maxBlockName, "one block's saved tensors during its backward", maxBlockSaved);
  } else {
    int64_t phaseSaved = 0;
    for (int64_t b = c.first; b < c.last; ++b) phaseSaved += savedAt(c.m.blocks[static_cast<size_t>(b)], c.fs);
    items.add("stashed activations", "", "one micro-batch of the resident phase", phaseSaved);
  }
}

// Buffers between stages: what a stage receives and sends, double-buffered (phased: the phase's output
// activations of every micro-batch wait in streaming memory).
void stageBuffers(const StageContext& c, StageItems& items) {
  const int64_t in = c.s > 0 ? scaleBytes(c.m.blocks[static_cast<size_t>(c.first)].inputBytes, c.fs) : 0;
  const int64_t out = c.s + 1 < c.P ? scaleBytes(c.m.blocks[static_cast<size_t>(c.last - 1)].outputBytes, c.fs) : 0;
  items.add(c.phased ? "phase buffers" : "stage buffers", "", "received + sent, double-buffered", 2 * (in + out));
  if (c.phased)
    items.stream("phase activations", items.ipu.stageName, "x " + std::to_string(c.G) + " micro-batches", out * c.G);
}

// Inference: the largest block's input and output are live at once.
void inferenceActivations(const StageContext& c, StageItems& items) {
  int64_t live = 0;
  for (int64_t b = c.first; b < c.last; ++b) {
    const BlockProfile& bp = c.m.blocks[static_cast<size_t>(b)];
    live = std::max(live, scaleBytes(bp.inputBytes + bp.outputBytes, c.fs));
  }
  items.add("activations", "", "the largest block's input and output", live);
}

// The largest op's temporaries, the host streams and the stated constant for code and exchange.
void fixedItems(const StageContext& c, const IpuSpec& spec, StageItems& items) {
  const ModelProfile& m = c.m;
  std::string which;
  items.add("temporaries", "", "", temporaries(m, c.first, c.last, c.fs, c.ampBytes, &which));
  IpuMemory& ipu = items.ipu;
  if (!ipu.items.empty() && ipu.items.back().category == "temporaries") ipu.items.back().detail = "largest op: " + which;
  // Host streams: every stage reads the micro-batch's fields; double-buffered. The last stage returns the output.
  // Integer features (atom and bond types, Graphormer's encodings) are read by the input block only: the first
  // stage receives them; every stage receives the indices and masks.
  items.add("I/O buffers", "", std::string("micro-batch input, double-buffered") + (c.o.eightBitIo && c.s == 0 ? " (8-bit features)" : ""),
            2 * (c.s == 0 ? c.ioIn : m.inputBytes - m.inputIntegerFeatureBytes));
  if (c.s == c.P - 1) items.add("I/O buffers", "", "output, double-buffered", 2 * scaleBytes(m.outputBytes, c.fs));
  items.add("code and exchange", "", "stated constant: " + std::to_string(spec.codeAndExchangeBytesPerTile / 1024) +
                                         " KiB per tile",
            spec.codeAndExchangeBytes());
}
}  // namespace

IpuMemory stageMemory(const ModelProfile& m, int64_t first, int64_t last, int64_t s, int64_t P, const IpuOptions& o,
                      const IpuSpec& spec, std::vector<MemoryItem>* streaming) {
  const StageContext c = stageContext(m, first, last, s, P, o, spec);
  std::vector<MemoryItem> ignored;
  IpuMemory ipu;
  ipu.stage = s;
  ipu.stageName = stageLabel(m.blockNames(), first, last);
  StageItems items{ipu, streaming ? *streaming : ignored};
  // The block with the most saved tensors: recomputation holds one block's at a time.
  int64_t maxBlockSaved = 0;
  std::string maxBlockName;
  for (int64_t b = first; b < last; ++b) {
    const BlockProfile& bp = m.blocks[static_cast<size_t>(b)];
    blockWeights(bp, c, items);
    if (!m.training) continue;
    blockGradientsAndState(bp, c, items);
    const int64_t saved = savedAt(bp, c.fs);
    if (saved > maxBlockSaved) {
      maxBlockSaved = saved;
      maxBlockName = bp.name;
    }
    blockStash(bp, b, saved, c, items);
  }
  if (m.training && (o.recompute || c.phased)) recomputedOrResident(c, maxBlockName, maxBlockSaved, items);
  if (P > 1) stageBuffers(c, items);
  if (!m.training) inferenceActivations(c, items);
  fixedItems(c, spec, items);
  ipu.budget = spec.memoryBytes();
  for (const MemoryItem& it : ipu.items) ipu.total += it.bytes;
  std::stable_sort(ipu.items.begin(), ipu.items.end(),
                   [](const MemoryItem& a, const MemoryItem& b) { return a.bytes > b.bytes; });
  return ipu;
}

MemoryPlan planMemory(const ModelProfile& m, const StageBlocks& stages, const IpuOptions& o, const IpuSpec& spec) {
  MemoryPlan plan;
  const int64_t P = static_cast<int64_t>(stages.size());
  plan.streamingBudget = static_cast<int64_t>(spec.streamingBytesPerIpu);
  std::vector<IpuMemory> perStage;
  for (int64_t s = 0; s < P; ++s)
    perStage.push_back(stageMemory(m, stages[static_cast<size_t>(s)].first, stages[static_cast<size_t>(s)].second, s, P,
                                   o, spec, &plan.streaming));
  if (o.executionStrategy == ExecutionStrategy::Phased) {
    // One IPU per replica runs every phase in turn: the resident set is the fullest phase; the weights of the
    // other phases live in streaming memory (listed there).
    size_t worst = 0;
    for (size_t i = 0; i < perStage.size(); ++i)
      if (perStage[i].total > perStage[worst].total) worst = i;
    IpuMemory one = perStage[worst];
    one.stageName = "phase " + std::to_string(worst) + " (" + one.stageName + ") of " + std::to_string(P);
    perStage = {one};
  }
  plan.ipus = std::move(perStage);
  for (size_t i = 0; i < plan.ipus.size(); ++i) {
    if (plan.ipus[i].total > plan.ipus[plan.fullest].total) plan.fullest = i;
    plan.fits = plan.fits && plan.ipus[i].fits();
  }
  for (const MemoryItem& it : plan.streaming) plan.streamingTotal += it.bytes;
  std::stable_sort(plan.streaming.begin(), plan.streaming.end(),
                   [](const MemoryItem& a, const MemoryItem& b) { return a.bytes > b.bytes; });
  if (plan.streamingTotal > plan.streamingBudget) plan.fits = false;
  return plan;
}

}  // namespace gnn
