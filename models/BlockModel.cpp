#include "models/BlockModel.h"

#include "gnn/autograd/Block.h"

namespace gnn {

Variable BlockModel::forward(const Batch& batch) { return runBlocks(BlockState(), batch, 0, blocks_.size()).get("out"); }

BlockState BlockModel::runBlocks(BlockState state, const Batch& batch, size_t first, size_t last) {
  GNN_CHECK_ARG(first <= last && last <= blocks_.size(), "runBlocks: range [", first, ", ", last,
                ") outside the model's ", blocks_.size(), " blocks");
  for (size_t i = first; i < last; ++i) {
    BlockScope scope(blocks_[i].name);
    state = blocks_[i].run(std::move(state), batch);
  }
  return state;
}

std::vector<std::string> BlockModel::blockNames() const {
  std::vector<std::string> out;
  for (const auto& b : blocks_) out.push_back(b.name);
  return out;
}

size_t BlockModel::blockIndex(const std::string& name) const {
  std::string names;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    if (blocks_[i].name == name) return i;
    names += (i ? ", " : "") + blocks_[i].name;
  }
  invalidArgument("the model has no block '", name, "' (blocks: ", names, ")");
}

BlockState BlockModel::outputState(Variable out) {
  BlockState s;
  s.set("out", std::move(out));
  return s;
}

void BlockModel::addBlock(std::string name, ModelBlock::Fn run) {
  for (const auto& b : blocks_) GNN_CHECK_ARG(b.name != name, "block '", name, "' added twice");
  blocks_.push_back({std::move(name), std::move(run)});
}

}  // namespace gnn
