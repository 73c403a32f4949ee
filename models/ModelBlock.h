// ModelBlock: one named step of a model, (state, batch) -> state: "input" (the encoders), "layers/3", "head".
// A device cuts a model into pipeline stages between blocks and charges each block's ops to its stage.
//
// A block is a name and a function rather than a virtual class: the model that owns the layers stays the one
// Module (its parameter names, checkpoints and clone() do not change), and a block is a few lines that call
// its layers, written where the model is built. The function captures the model it belongs to, so blocks are
// made by the model's constructor and never copied to another model (a clone builds its own).
//
//   addBlock("layers/" + std::to_string(l), [this, l](BlockState s, const Batch& b) {
//     s.set("h", relu(convs_[l]->forward(s.get("h"), b.edgeIndex)));
//     return s;
//   });
#pragma once
#include <functional>
#include <string>

#include "loaders/Batch.h"
#include "models/BlockState.h"

namespace gnn {

struct ModelBlock {
  using Fn = std::function<BlockState(BlockState, const Batch&)>;
  std::string name;
  Fn run;
};

}  // namespace gnn
