// BlockState: what flows from one block of a model to the next: named Variables, in the order they were
// first set. Names used by the library's models: "h" node embeddings [numNodes, hidden] and "out" the
// model's output; a model adds what its later blocks need (an attention bias, interatomic distances and
// filters), and a device hands every entry of the state across a stage boundary. A model's last block
// returns a fresh state holding only "out" (BlockModel::outputState).
//
//   BlockState s;
//   s.set("h", encoder.forward(batch.x));
//   Variable h = s.get("h");                               // throws, listing the names present, if missing
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "gnn/autograd/Variable.h"

namespace gnn {

class BlockState {
 public:
  /// Sets (or replaces) the entry `name`.
  void set(const std::string& name, Variable value);
  /// The entry `name`; throws std::invalid_argument naming it and the entries present when it is missing.
  const Variable& get(const std::string& name) const;
  bool has(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::vector<std::pair<std::string, Variable>>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  // A handful of entries: a vector keeps their order stable (the order a device sends them in).
  std::vector<std::pair<std::string, Variable>> entries_;
};

}  // namespace gnn
