#include "device/ModelProfile.h"

#include <algorithm>
#include <map>
#include <set>

namespace gnn {

const char* opClassName(OpClass c) {
  switch (c) {
    case OpClass::Matmul: return "matmul";
    case OpClass::Exchange: return "exchange";
    case OpClass::Elementwise: return "element-wise";
  }
  return "?";
}

OpClass classifyOp(const std::string& n) {
  static const std::set<std::string> matmul = {"linear", "matmul", "matmulNT", "bmm", "bmmNT", "multiHeadAttention"};
  static const std::set<std::string> exchange = {
      "gatherRows",     "scatterSum",      "scatterMean",   "scatterMax",        "segmentSum",
      "segmentMean",    "segmentMax",      "segmentSoftmax", "spmm",             "embeddingBag",
      "reluMessageSum", "filterMessageSum", "toDenseBatch",  "graphAttentionBias", "multiHopEdgeBias",
      "permute",        "transpose",       "concatCols",    "edgeDistances",     "pairwiseDistances"};
  if (matmul.count(n)) return OpClass::Matmul;
  if (exchange.count(n)) return OpClass::Exchange;
  // The rest are element-wise, knnGraph (SchNet's radius graph built per micro-batch) among them: its distance
  // matrix and top-k run tile-local over rows of the [N, N] matrix, each row's positions broadcast once (N x 3
  // floats, nothing indexed), so it costs a fixed op cost plus its bytes (the matrix written and read) or its
  // FLOPs on the vector units, whichever binds.
  return OpClass::Elementwise;
}

namespace {

// What an exchange op indexes (OpCost::indices, tableRows), from its record: the ops' FLOPs and output shapes as
// gnn/ops record them (a scatter or segment reduction of X [rows, F] counts X.numel() FLOPs, and so on).
void exchangeRows(const OpRecord& op, const CompileRecord& r, OpCost& c) {
  const std::string n = op.name;
  const int64_t f = op.shape.empty() ? 1 : std::max<int64_t>(1, op.shape.back());
  const int64_t rows = op.shape.empty() ? 0 : op.shape.front();
  if (n == "gatherRows") {
    c.indices = rows;
    c.tableRows = r.numNodes;
  } else if (n == "embeddingBag") {
    c.indices = op.flops / f;
  } else if (n == "segmentSoftmax") {
    c.indices = rows;
    c.tableRows = rows;
  } else if (n.rfind("scatter", 0) == 0 || n.rfind("segment", 0) == 0) {
    c.indices = op.flops / f;
    c.tableRows = rows;
  } else if (n == "spmm" || n == "filterMessageSum") {
    c.indices = op.flops / (2 * f);
    c.tableRows = rows;
  } else if (n == "reluMessageSum") {  // its FLOPs add the root term when there is one: the batch's edges instead
    c.indices = r.numEdges;
    c.tableRows = rows;
  }
}

}  // namespace

ModelProfile ModelProfile::from(const CompileRecord& r, bool training, int64_t optimizerStateTensors) {
  ModelProfile m;
  m.training = training;
  m.optimizerStateTensors = optimizerStateTensors;
  m.graphSlots = r.numGraphs;
  static const std::set<std::string> intFeatures = {"x", "edge_attr", "z", "spatial_pos", "in_degree", "edge_input"};
  for (const FieldShape& f : r.fields) {
    if (!f.defined) continue;
    int64_t n = 1;
    for (int64_t d : f.shape) n *= d;
    const int64_t bytes = n * streamedBytesPerElement(f.dtype);  // as PopTorch streams it
    m.inputBytes += bytes;
    if (intFeatures.count(f.name) && (f.dtype == DType::I64 || f.dtype == DType::I32)) {
      m.inputIntegerFeatureBytes += bytes;
      m.inputIntegerFeatureElements += n;
    }
  }
  std::map<std::string, size_t> index;
  for (const BlockRecord& b : r.blocks) {
    index[b.name] = m.blocks.size();
    BlockProfile p;
    p.name = b.name;
    p.parameters = b.parameters;
    p.parameterTensors = b.parameterTensors;
    p.parameterSizes = b.parameterSizes;
    p.outputBytes = b.outputBytes;
    p.inputBytes = m.blocks.empty() ? 0 : m.blocks.back().outputBytes;
    m.blocks.push_back(std::move(p));
  }
  auto blockOf = [&](const char* name) -> BlockProfile* {
    auto it = index.find(name);
    if (it != index.end()) return &m.blocks[it->second];
    return m.blocks.empty() ? nullptr : &m.blocks.front();  // ops outside every block: the first block's
  };
  for (const OpRecord& op : r.ops) {
    if (!training && op.pass != Pass::Forward) continue;  // an inference program runs the forward only
    BlockProfile* b = blockOf(op.block);
    if (!b) continue;
    OpCost c;
    c.name = op.name;
    c.cls = classifyOp(c.name);
    c.flops = op.flops;
    if (op.pass == Pass::Forward && c.cls == OpClass::Exchange) exchangeRows(op, r, c);
    if (op.pass == Pass::Forward) {
      c.bytes = op.bytesRead + op.bytesWritten;
      c.savedBytes = op.savedBytes;
      c.floating = op.dtype == DType::F32 || op.dtype == DType::F64 || op.dtype == DType::F16;
      b->forwardFlops += c.flops;
      b->savedBytes += c.savedBytes;
      b->forward.push_back(std::move(c));
    } else {
      c.backward = true;
      b->backwardFlops += c.flops;
      b->backward.push_back(std::move(c));
    }
  }
  // Backward bytes: twice the bytes of the forward op each differentiates, matched by name from the end.
  for (BlockProfile& b : m.blocks) {
    std::map<std::string, std::vector<const OpCost*>> byName;
    for (const OpCost& f : b.forward) byName[f.name].push_back(&f);
    for (OpCost& g : b.backward) {
      auto& v = byName[g.name];
      if (v.empty()) continue;
      g.bytes = 2 * v.back()->bytes;
      g.floating = v.back()->floating;
      g.indices = v.back()->indices;
      g.tableRows = v.back()->tableRows;
      v.pop_back();
    }
  }
  if (!m.blocks.empty()) m.outputBytes = m.blocks.back().outputBytes;
  return m;
}

int64_t ModelProfile::parameters() const {
  int64_t n = 0;
  for (const BlockProfile& b : blocks) n += b.parameters;
  return n;
}

std::vector<std::string> ModelProfile::blockNames() const {
  std::vector<std::string> names;
  for (const BlockProfile& b : blocks) names.push_back(b.name);
  return names;
}

ModelProfile ModelProfile::scaled(double f) const {
  ModelProfile m = *this;
  m.batchScale = batchScale * f;
  auto s = [f](int64_t v) { return static_cast<int64_t>(static_cast<double>(v) * f + 0.5); };
  m.inputBytes = s(inputBytes);
  m.inputIntegerFeatureBytes = s(inputIntegerFeatureBytes);
  m.inputIntegerFeatureElements = s(inputIntegerFeatureElements);
  m.outputBytes = s(outputBytes);
  m.graphSlots = std::max<int64_t>(1, s(graphSlots));
  // knnGraph's [N, N] distance matrix grows with the square of the micro-batch.
  auto s2 = [f](int64_t v) { return static_cast<int64_t>(static_cast<double>(v) * f * f + 0.5); };
  for (BlockProfile& b : m.blocks) {
    b.inputBytes = s(b.inputBytes);
    b.outputBytes = s(b.outputBytes);
    b.savedBytes = s(b.savedBytes);
    b.forwardFlops = s(b.forwardFlops);
    for (const OpCost& c : b.forward)
      if (c.name == "knnGraph") b.forwardFlops += s2(c.flops) - s(c.flops);
    b.backwardFlops = s(b.backwardFlops);
    for (auto* ops : {&b.forward, &b.backward})
      for (OpCost& c : *ops) {
        const bool square = c.name == "knnGraph";
        c.flops = square ? s2(c.flops) : s(c.flops);
        c.bytes = square ? s2(c.bytes) : s(c.bytes);
        c.savedBytes = s(c.savedBytes);
        c.indices = s(c.indices);
        c.tableRows = s(c.tableRows);
      }
  }
  return m;
}

}  // namespace gnn
