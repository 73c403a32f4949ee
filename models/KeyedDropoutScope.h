// KeyedDropoutScope: Monte Carlo dropout passes whose masks follow the molecule, not the batch. Inside the
// scope, every dropout a model applies through layerDropout() is keyedDropout() (gnn/ops/KeyedDropout.h) at the
// model's rate, whether the model is training or not, with
//   - the stream key keyedDropoutStream(seed, sample, site), site = the index of the dropout among those the
//     forward pass has applied since the scope opened (the same for every batch: the models' dropouts do not
//     depend on the batch), and
//   - each row's key keyedDropoutRow(its graph's key, the row's index inside its graph): node rows by `ptr`,
//     edge rows by `edgePtr`, graph rows by graph; padding graphs get keys of their own, and their rows reach
//     no real graph's output.
// So a molecule's sampled output depends on (seed, sample, the molecule's key) only: the same bits in any batch,
// at any position, with any padding. Outside every scope, layerDropout() is dropout(a, p, training): training
// keeps its masks and bits.
//
//   for (uint64_t k = 0; k < samples; ++k) {
//     KeyedDropoutScope mc(batch, graphKeys, seed, k);       // graphKeys: one per real graph of the batch
//     Tensor y = model.forward(batch).value();               // model in eval mode, no tape
//   }
#pragma once
#include <cstdint>
#include <vector>

#include "gnn/autograd/Variable.h"
#include "loaders/Batch.h"

namespace gnn {

/// What a dropout's rows are: the batch's nodes (atoms), edges (directed bonds) or graphs (molecules).
enum class RowLevel { Node, Edge, Graph };

class KeyedDropoutScope {
 public:
  /// `graphKeys`: one key per real graph of `batch`, in its order. The batch must outlive the scope.
  KeyedDropoutScope(const Batch& batch, std::vector<uint64_t> graphKeys, uint64_t seed, uint64_t sample);
  ~KeyedDropoutScope();
  KeyedDropoutScope(const KeyedDropoutScope&) = delete;
  KeyedDropoutScope& operator=(const KeyedDropoutScope&) = delete;

  /// The scope open on this thread (the innermost), or nullptr.
  static KeyedDropoutScope* current();
  /// keyedDropout of `a`, whose rows are the batch's rows of `level`, at the next site.
  Variable apply(const Variable& a, double p, RowLevel level);
  /// Dropouts applied since the scope opened.
  uint64_t sites() const { return site_; }

 private:
  const std::vector<uint64_t>& rowKeys(RowLevel level);

  const Batch& batch_;
  std::vector<uint64_t> graphKeys_;  // every graph of the batch, padding graphs included
  uint64_t seed_, sample_, site_ = 0;
  std::vector<uint64_t> keys_[3];    // per level, built when first used
  KeyedDropoutScope* previous_;
};

/// The dropout of the models' layers: keyed (above) inside a KeyedDropoutScope, else dropout(a, p, training).
Variable layerDropout(const Variable& a, double p, bool training, RowLevel level);

}  // namespace gnn
