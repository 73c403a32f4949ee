// JumpingKnowledge: PyTorch Geometric 2.3.1's layer aggregation (torch_geometric.nn.models.JumpingKnowledge, Xu et
// al. 2018, "Representation Learning on Graphs with Jumping Knowledge Networks") over a model's per-layer node
// outputs xs (L of them, [N, C] each): "cat" (side by side, [N, L C]), "max" (element-wise maximum) or "lstm"
// (sum_l alpha_l x_l with alpha a softmax over the layers of att(BiLSTM(x_1 .. x_L)) per node), plus "last"
// (the last output; BasicGNN's jk='last', which PyG handles without this class). "lstm" holds PyG's
// `lstm` = LSTM(C, (L C) / 2, bidirectional, batch_first) and `att` = Linear(2 ((L C) / 2), 1): state_dict keys
// lstm.weight_ih_l0, ..., lstm.bias_hh_l0_reverse, att.weight, att.bias.
//
//   JumpingKnowledge jk("lstm", 64, 3, gen);
//   Variable h = jk.forward({x1, x2, x3});  // [N, 64]
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gnn/nn/LSTM.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/Module.h"

namespace gnn {

class JumpingKnowledge : public Module {
 public:
  /// mode: "last", "cat", "max" or "lstm" (any case). channels and numLayers: the layers' width and count, needed
  /// by "lstm" only (its sizes), as PyG has it.
  JumpingKnowledge(std::string mode, int64_t channels, int64_t numLayers, Generator& gen, DType dtype = DType::F32);
  /// The aggregate of xs (every one [N, C], at least one): [N, C], or [N, L C] for "cat".
  Variable forward(const std::vector<Variable>& xs) const;
  /// PyG's reset_parameters (the LSTM's and att's torch defaults; nothing for the other modes).
  void resetParameters(Generator& gen);
  std::unique_ptr<Module> clone() const override;

  const std::string& mode() const { return mode_; }
  /// The output width for layers of `channels` each: numLayers x channels for "cat", channels otherwise.
  int64_t outChannels(int64_t channels) const { return mode_ == "cat" ? numLayers_ * channels : channels; }

 private:
  Variable lstmAttention(const std::vector<Variable>& xs) const;

  std::string mode_;
  int64_t channels_, numLayers_;
  std::unique_ptr<LSTM> lstm_;
  std::unique_ptr<Linear> att_;
};

}  // namespace gnn
