#include "gnn/Module.h"

namespace gnn {

Variable& Module::registerParameter(const std::string& name, Tensor value) {
  for (auto& [n, v] : params_) GNN_CHECK_ARG(n != name, "Module: parameter '", name, "' registered twice");
  params_.emplace_back(name, Variable(std::move(value), true));
  return params_.back().second;
}

void Module::registerModule(const std::string& name, Module& child) { children_.emplace_back(name, &child); }

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Variable>>& out) const {
  for (const auto& [n, v] : params_) out.emplace_back(prefix + n, v);
  for (const auto& [n, c] : children_) c->collect(prefix + n + ".", out);
}

std::vector<std::pair<std::string, Variable>> Module::namedParameters() const {
  std::vector<std::pair<std::string, Variable>> out;
  collect("", out);
  return out;
}

std::vector<Variable> Module::parameters() const {
  std::vector<Variable> out;
  for (auto& [n, v] : namedParameters()) out.push_back(v);
  return out;
}

int64_t Module::numParameters() const {
  int64_t n = 0;
  for (const auto& v : parameters()) n += v.value().numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, c] : children_) c->train(on);
}

void Module::zeroGrad() {
  for (auto& v : parameters()) v.zeroGrad();
}

}  // namespace gnn
