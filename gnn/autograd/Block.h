// Block: a named part of a model ("input", "layers/3", "head"). Ops recorded inside a BlockScope carry its
// name (OpEvent::block), so a profile can be read per block and a device can cut a model into pipeline stages
// at block boundaries and charge each block's ops to the stage that runs it. Scopes nest; the innermost
// name wins.
//
//   { BlockScope layer("layers/3"); h = conv.forward(h, b.edgeIndex, b.edgeAttr); }
#pragma once
#include <string>

namespace gnn {

class BlockScope {
 public:
  explicit BlockScope(const std::string& name);
  ~BlockScope();
  BlockScope(const BlockScope&) = delete;
  BlockScope& operator=(const BlockScope&) = delete;

 private:
  const char* previous_;
};

/// A stable C string equal to `name` (the same pointer for equal names), alive until the process ends.
const char* internName(const std::string& name);

}  // namespace gnn
