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
}  // namespace

IpuMemory stageMemory(const ModelProfile& m, int64_t first, int64_t last, int64_t s, int64_t P, const IpuOptions& o,
                      const IpuSpec& spec, std::vector<MemoryItem>* streaming) {
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
  std::vector<MemoryItem> ignored;
  if (!streaming) streaming = &ignored;
  IpuMemory ipu;
  ipu.stage = s;
  ipu.stageName = m.blocks[static_cast<size_t>(first)].name;
  if (last - first > 1) ipu.stageName += ".." + m.blocks[static_cast<size_t>(last - 1)].name;
  auto add = [&](std::string cat, std::string block, std::string detail, int64_t bytes) {
    if (bytes > 0) ipu.items.push_back({std::move(cat), std::move(block), std::move(detail), bytes});
  };
  auto stream = [&](std::string cat, std::string block, std::string detail, int64_t bytes) {
    if (bytes > 0) streaming->push_back({std::move(cat), std::move(block), std::move(detail), bytes});
  };
  int64_t maxBlockSaved = 0;
  std::string maxBlockName;
  for (int64_t b = first; b < last; ++b) {
    const BlockProfile& bp = m.blocks[static_cast<size_t>(b)];
    const int64_t w = bp.parameters;
    const std::string bn = bp.name;
    // Weights at the program's precision; phased execution keeps them in streaming memory and loads one
    // phase at a time (charged below as the resident phase).
    if (phased) stream("weights", bn, fp16 ? "fp16" : "fp32", w * pb);
    add("weights", bn, fp16 ? "fp16" : "fp32", w * pb);
    if (m.training) {
      // One gradient per weight; with accumulation an fp32 accumulator (the sum over micro-batches).
      add("gradients", bn, G > 1 ? "fp32 accumulators" : (fp16 ? "fp16" : "fp32"), w * (G > 1 ? 4 : pb));
      int64_t state = w * statePerParam;
      std::string how = std::to_string(m.optimizerStateTensors) + " fp32 tensors per weight" +
                        (fp16 ? " + fp32 master weights" : "");
      if (o.replicatedTensorSharding) {
        state = (state + R - 1) / R;
        how += ", 1/" + std::to_string(R) + " shard per replica";
      }
      if (o.offloadOptimizer || phased)
        stream("optimizer state", bn, how, state);
      else
        add("optimizer state", bn, how, state);
      const int64_t saved = savedAt(bp, fs);
      if (saved > maxBlockSaved) {
        maxBlockSaved = saved;
        maxBlockName = bn;
      }
      if (o.recompute) {
        // A checkpoint per block (its input state) per micro-batch in flight; the block's own saved tensors
        // exist only while its backward runs (charged once below).
        const int64_t cp = b == first && s == 0 ? 0 : scaleBytes(bp.inputBytes, fs);
        if (phased)
          stream("stashed activations", bn, "checkpoint x " + std::to_string(stash) + " micro-batches", cp * stash);
        else
          add("stashed activations", bn, "checkpoint x " + std::to_string(stash) + " micro-batches", cp * stash);
      } else if (phased) {
        stream("stashed activations", bn, "x " + std::to_string(stash) + " micro-batches", saved * stash);
      } else {
        // The largest saved tensors of the block, named, then the rest.
        std::vector<const OpCost*> ops;
        for (const OpCost& c : bp.forward)
          if (c.savedBytes > 0) ops.push_back(&c);
        std::stable_sort(ops.begin(), ops.end(),
                         [](const OpCost* a, const OpCost* b2) { return a->savedBytes > b2->savedBytes; });
        int64_t rest = saved;
        for (size_t i = 0; i < ops.size() && i < 2; ++i) {
          const int64_t bytes = ops[i]->floating ? scaleBytes(ops[i]->savedBytes, fs) : ops[i]->savedBytes;
          add("stashed activations", bn, ops[i]->name + " x " + std::to_string(stash) + " micro-batches",
              bytes * stash);
          rest -= bytes;
        }
        add("stashed activations", bn, "other ops x " + std::to_string(stash) + " micro-batches", rest * stash);
      }
    }
  }
  if (m.training && (o.recompute || phased)) {
    // Recomputation: the micro-batch's inputs are kept too (the first block recomputes from them), and one
    // block's saved tensors are live while its backward runs. Phased: one micro-batch's saved tensors of the
    // resident phase.
    if (o.recompute) {
      if (phased)
        stream("stashed activations", "", "micro-batch inputs x " + std::to_string(stash), ioIn * stash);
      else
        add("stashed activations", "", "micro-batch inputs x " + std::to_string(stash), ioIn * stash);
      add("recomputation", maxBlockName, "one block's saved tensors during its backward", maxBlockSaved);
    } else {
      int64_t phaseSaved = 0;
      for (int64_t b = first; b < last; ++b) phaseSaved += savedAt(m.blocks[static_cast<size_t>(b)], fs);
      add("stashed activations", "", "one micro-batch of the resident phase", phaseSaved);
    }
  }
  // Buffers between stages: what a stage receives and sends, double-buffered.
  if (P > 1) {
    const int64_t in = s > 0 ? scaleBytes(m.blocks[static_cast<size_t>(first)].inputBytes, fs) : 0;
    const int64_t out = s + 1 < P ? scaleBytes(m.blocks[static_cast<size_t>(last - 1)].outputBytes, fs) : 0;
    add(phased ? "phase buffers" : "stage buffers", "", "received + sent, double-buffered", 2 * (in + out));
    if (phased) stream("phase activations", ipu.stageName, "x " + std::to_string(G) + " micro-batches", out * G);
  }
  if (!m.training) {
    int64_t live = 0;
    for (int64_t b = first; b < last; ++b) {
      const BlockProfile& bp = m.blocks[static_cast<size_t>(b)];
      live = std::max(live, scaleBytes(bp.inputBytes + bp.outputBytes, fs));
    }
    add("activations", "", "the largest block's input and output", live);
  }
  std::string which;
  add("temporaries", "", "", temporaries(m, first, last, fs, ampBytes, &which));
  if (!ipu.items.empty() && ipu.items.back().category == "temporaries") ipu.items.back().detail = "largest op: " + which;
  // Host streams: every stage reads the micro-batch's fields; double-buffered. The last stage returns the output.
  // Integer features (atom and bond types, Graphormer's encodings) are read by the input block only: the first
  // stage receives them; every stage receives the indices and masks.
  add("I/O buffers", "", std::string("micro-batch input, double-buffered") + (o.eightBitIo && s == 0 ? " (8-bit features)" : ""),
      2 * (s == 0 ? ioIn : m.inputBytes - m.inputIntegerFeatureBytes));
  if (s == P - 1) add("I/O buffers", "", "output, double-buffered", 2 * scaleBytes(m.outputBytes, fs));
  add("code and exchange", "", "stated constant: " + std::to_string(spec.codeAndExchangeBytesPerTile / 1024) +
                                   " KiB per tile",
      spec.codeAndExchangeBytes());
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
