// Activation: an activation function chosen by PyG's name, as torch_geometric.nn.resolver.activation_resolver
// resolves `act="relu"` with `act_kwargs` ({"negative_slope": 0.2} for leaky_relu, {"alpha": 1.0} for elu).
//
//   Activation act = activationFromPyG("leaky_relu", {{"negative_slope", 0.2}});
//   Variable h = act(x);
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "gnn/autograd/Variable.h"

namespace gnn {

using Activation = std::function<Variable(const Variable&)>;

/// "relu", "elu", "leaky_relu", "gelu", "tanh", "sigmoid", "softplus", "identity" (PyG's names; case and
/// underscores ignored as PyG does, so "LeakyReLU" also works). A null name is the identity.
/// std::invalid_argument naming the unknown activation or keyword otherwise.
Activation activationFromPyG(const nlohmann::json& name, const nlohmann::json& kwargs = nullptr);

/// The names activationFromPyG knows, for --help and errors.
const std::vector<std::string>& activationNames();

}  // namespace gnn
