// BlockModel: a model made of named blocks (models/ModelBlock.h) run in order on a BlockState. forward(batch)
// runs them all, each under a BlockScope with its name, so every op carries its block (OpEvent::block); a
// device runs a range of blocks per pipeline stage with runBlocks() and passes the state between stages.
//
//   GIN model(opts, gen);
//   model.blockNames();                                    // input, layers/0 .. layers/4, head
//   Variable pred = model.forward(batch);                  // all blocks; the state's "out"
//   BlockState s = model.runBlocks({}, batch, 0, 3);       // stage 1: input, layers/0, layers/1
//   Variable same = model.runBlocks(s, batch, 3, model.numBlocks()).get("out");
#pragma once
#include <string>
#include <vector>

#include "gnn/nn/Module.h"
#include "models/ModelBlock.h"

namespace gnn {

class BlockModel : public Module {
 public:
  /// Runs every block from an empty state and returns the state's "out".
  Variable forward(const Batch& batch);
  /// Runs blocks [first, last) in order on `state`, each under BlockScope(its name).
  BlockState runBlocks(BlockState state, const Batch& batch, size_t first, size_t last);
  const std::vector<ModelBlock>& blocks() const { return blocks_; }
  std::vector<std::string> blockNames() const;
  size_t numBlocks() const { return blocks_.size(); }
  /// Position of the block called `name`; throws naming the blocks there are.
  size_t blockIndex(const std::string& name) const;

 protected:
  /// Appends a block; names are unique.
  void addBlock(std::string name, ModelBlock::Fn run);
  /// What the last block returns: a fresh state holding only "out" (what forward() returns), so no entry of
  /// the earlier blocks moves on with the output (to the loss, or out of a device's last stage).
  static BlockState outputState(Variable out);

 private:
  std::vector<ModelBlock> blocks_;
};

}  // namespace gnn
