// MLP: PyG 2.3.1's torch_geometric.nn.models.MLP, a stack of Linear layers with, between them, a normalisation,
// an activation (after the norm, or before it with act_first) and dropout; with plain_last (the default) the
// last Linear is left plain. Parameters named as PyG's state_dict: "lins.{i}.weight", "lins.{i}.bias" and the
// norms' own under "norms.{i}." (norm=None: PyG's Identity, no keys). The norms see the batch (NormBatch), so
// per-graph norms and fixed-size padding work as in the library's other models.
//
//   auto mlp = MLP::fromPyG({{"channel_list", {16, 32, 8}}, {"norm", nullptr}}, gen);
//   Variable h = mlp->forward(x);                        // x [N, 16] -> [N, 8]
//   Variable h = mlp->forward(x, {b.batch, b.numGraphs, b.nodesMask});
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/nn/Activation.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/norm/Normalization.h"

namespace gnn {

/// PyG's MLP arguments, resolved: one entry per layer where PyG takes a number or a list.
struct MLPOptions {
  /// Input, hidden and output widths: channelList.size() - 1 layers (at least one).
  std::vector<int64_t> channelList;
  /// Dropout after each layer (PyG's list form); with a single float, PyG gives the last layer 0 when plain_last.
  std::vector<double> dropout;
  nlohmann::json act = "relu";
  nlohmann::json actKwargs = nullptr;
  bool actFirst = false;
  /// PyG's name of the norm (null: none, PyG's Identity) and its keyword arguments.
  nlohmann::json norm = "batch_norm";
  nlohmann::json normKwargs = nullptr;
  bool plainLast = true;
  /// Whether each Linear has a bias.
  std::vector<bool> bias;
  DType dtype = DType::F32;
};

class MLP : public Module {
 public:
  /// dropout and bias may be empty (0 and true for every layer), else one value per layer.
  MLP(MLPOptions options, Generator& gen);
  /// From PyG's keyword arguments: channel_list (a list, or an int = in_channels), in_channels,
  /// hidden_channels, out_channels, num_layers, dropout (float or list), act, act_first, act_kwargs, norm,
  /// norm_kwargs, plain_last, bias (bool or list). PyG's deprecated relu_first / batch_norm /
  /// batch_norm_kwargs and a callable act or norm are refused (std::invalid_argument).
  static std::unique_ptr<MLP> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in] -> [N, out]; dropout only in training. b tells the norms which graph each row is in and which
  /// rows are real.
  Variable forward(const Variable& x, const NormBatch& b = {});
  /// The rest of forward() from the first Linear's output h0 [N, channelList[1]] on: for a caller that computes
  /// that product another way (EdgeConv splits it over the two halves of its input).
  Variable forwardAfterFirstLinear(const Variable& h0, const NormBatch& b = {});
  /// The input of the last Linear (every layer before it, with its norm, act and dropout) when the MLP ends in a
  /// plain Linear with no dropout after it in this mode (endsInPlainLinear()): forward(x) is then
  /// lin(numLayers() - 1).forward(forwardBeforeLastLinear(x)), for a caller that folds that product into its own.
  Variable forwardBeforeLastLinear(const Variable& x, const NormBatch& b = {});
  /// Whether the MLP ends in a plain Linear (plain_last, at least two layers) with no dropout after it now.
  bool endsInPlainLinear() const;
  std::unique_ptr<Module> clone() const override;

  int64_t inChannels() const { return opt_.channelList.front(); }
  int64_t outChannels() const { return opt_.channelList.back(); }
  int64_t numLayers() const { return static_cast<int64_t>(lins_.size()); }
  const MLPOptions& options() const { return opt_; }
  Linear& lin(int64_t i) { return *lins_.at(static_cast<size_t>(i)); }
  /// Layer i's norm, nullptr for none (PyG's Identity).
  Normalization* norm(int64_t i) { return norms_.at(static_cast<size_t>(i)).get(); }

 private:
  /// Every layer with a norm (all but a plain last one) from the first Linear's output h0: Linear (but the first),
  /// act and norm in PyG's order, dropout.
  Variable hiddenLayers(const Variable& h0, const NormBatch& b);

  MLPOptions opt_;
  Activation act_;
  std::vector<std::unique_ptr<Linear>> lins_;
  std::vector<std::unique_ptr<Normalization>> norms_;  // one per non-plain layer; nullptr = Identity
};

/// The MLP a PyG layer takes as its module argument (GINConv's and EdgeConv's `nn`), described as
/// {"class": "MLP", "args": {PyG's MLP keywords}}; std::invalid_argument naming `owner` for anything else
/// (torch.nn.Sequential and other modules have no JSON form here).
std::unique_ptr<MLP> mlpFromPyGSpec(const nlohmann::json& spec, const std::string& owner, Generator& gen,
                                    DType dtype = DType::F32);

}  // namespace gnn
