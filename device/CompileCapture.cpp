#include "device/CompileCapture.h"

#include "device/HostIo.h"
#include "gnn/autograd/GradientSink.h"
#include "gnn/system/Check.h"

namespace gnn {

void Recorder::onOp(const OpEvent& e) {
  if (next) next->onOp(e);
  OpRecord r;
  r.name = e.info->name;
  r.block = e.block;
  r.stage = stage;
  r.pass = e.pass;
  if (e.output) {
    r.shape = e.output->shape();
    r.dtype = e.output->dtype();
  }
  r.flops = e.flops;
  if (e.pass == Pass::Forward) {
    r.bytesRead = e.info->bytesRead;
    r.bytesWritten = e.info->bytesWritten;
  } else {
    r.bytesRead = e.bytes;
  }
  r.savedBytes = e.savedBytes;
  r.seconds = e.seconds;
  ops.push_back(std::move(r));
}

void startRecord(CompileRecord& record, const Batch& shapes, const std::vector<std::string>& blockNames,
                 const StageBlocks& stages, const PipelineSchedule& schedule) {
  record.fields = CompileRecord::shapesOf(shapes);
  record.numNodes = shapes.numNodes;
  record.numEdges = shapes.numEdges;
  record.numGraphs = shapes.numGraphs;
  record.maxNodesPerGraph = shapes.maxNodesPerGraph;
  GNN_CHECK_ARG(shapes.numGraphs >= 1, "compile: the example micro-batch has no graphs");
  record.inputBytes = hostLinkBytes(shapes);
  for (const std::string& n : blockNames) {
    BlockRecord b;
    b.name = n;
    record.blocks.push_back(std::move(b));
  }
  for (size_t s = 0; s < stages.size(); ++s) {
    StageRecord st;
    st.firstBlock = stages[s].first;
    st.lastBlock = stages[s].second;
    st.name = stageLabel(blockNames, st.firstBlock, st.lastBlock);
    st.maxStashed = schedule.maxStashed(static_cast<int64_t>(s));
    record.stages.push_back(st);
  }
}

int64_t stateBytes(const BlockState& state) {
  int64_t bytes = 0;
  for (const auto& entry : state.entries()) bytes += static_cast<int64_t>(entry.second.value().nbytes());
  return bytes;
}

int64_t addTaskOps(CompileRecord& record, int64_t stage, const std::vector<OpRecord>& ops) {
  int64_t flops = 0;
  StageRecord& sr = record.stages[static_cast<size_t>(stage)];
  for (const auto& op : ops) {
    flops += op.flops;
    if (op.pass == Pass::Forward) {
      ++sr.forwardOps;
      sr.forwardFlops += op.flops;
      sr.savedBytes += op.savedBytes;
    } else {
      ++sr.backwardOps;
      sr.backwardFlops += op.flops;
    }
  }
  record.ops.insert(record.ops.end(), ops.begin(), ops.end());
  return flops;
}

void recordStageParameters(CompileRecord& record, const std::vector<Variable>& params,
                           const std::function<const GradientSink&(int64_t stage)>& sinkOf) {
  for (size_t s = 0; s < record.stages.size(); ++s) {
    StageRecord& sr = record.stages[s];
    const GradientSink& sink = sinkOf(static_cast<int64_t>(s));
    for (const Variable& p : params)
      if (sink.grad(p).defined()) {
        ++sr.parameterTensors;
        sr.parameters += p.value().numel();
        int64_t b = record.blockIndex(sink.blockOf(p));
        if (b < sr.firstBlock || b >= sr.lastBlock) b = sr.firstBlock;
        BlockRecord& block = record.blocks[static_cast<size_t>(b)];
        ++block.parameterTensors;
        block.parameters += p.value().numel();
        block.parameterSizes.push_back(p.value().numel());
      }
  }
}

void discardCapture(CompileRecord& record) {
  record.ops.clear();
  for (StageRecord& st : record.stages) {
    st.parameters = st.parameterTensors = st.forwardOps = st.backwardOps = 0;
    st.forwardFlops = st.backwardFlops = st.savedBytes = st.activationBytes = 0;
  }
  for (BlockRecord& b : record.blocks) {
    b.parameters = b.parameterTensors = b.outputBytes = 0;
    b.parameterSizes.clear();
  }
}

}  // namespace gnn
