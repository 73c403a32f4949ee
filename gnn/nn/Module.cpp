#include "gnn/nn/Module.h"

#include <cxxabi.h>

#include <cstdlib>
#include <typeinfo>

namespace gnn {

namespace {
// "gnn::GIN" rather than the mangled "N3gnn3GINE", for messages.
std::string className(const Module& m) {
  const char* mangled = typeid(m).name();
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && readable ? readable : mangled;
  std::free(readable);
  return name;
}
}  // namespace

Variable& Module::registerParameter(const std::string& name, Tensor value) {
  for (auto& [n, v] : params_) GNN_CHECK_ARG(n != name, "Module: parameter '", name, "' registered twice");
  params_.emplace_back(name, Variable(std::move(value), true));
  return params_.back().second;
}

Variable& Module::registerBuffer(const std::string& name, Tensor value) {
  Variable& v = registerParameter(name, std::move(value));
  v.setRequiresGrad(false);
  return v;
}

void Module::registerModule(const std::string& name, Module& child) { children_.emplace_back(name, &child); }

void Module::registerAlias(const std::string& alias, const std::string& target) {
  aliases_.emplace_back(alias, target);
}

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Variable>>& out,
                     bool withAliases) const {
  const size_t first = out.size();
  for (const auto& [n, v] : params_) out.emplace_back(prefix + n, v);
  for (const auto& [n, c] : children_) c->collect(n.empty() ? prefix : prefix + n + ".", out, withAliases);
  if (!withAliases) return;
  // An alias names a parameter of this module or of a child ("lin_src.weight"), found among this subtree's.
  for (const auto& [alias, target] : aliases_) {
    size_t k = first;
    while (k < out.size() && out[k].first != prefix + target) ++k;
    GNN_ASSERT(k < out.size(), "alias '", prefix + alias, "' names no parameter '", prefix + target, "'");
    Variable v = out[k].second;
    out.emplace_back(prefix + alias, v);
  }
}

std::vector<std::pair<std::string, Variable>> Module::namedStateEntries() const {
  std::vector<std::pair<std::string, Variable>> out;
  collect("", out, /*withAliases=*/true);
  return out;
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

std::unique_ptr<Module> Module::clone() const {
  invalidArgument(className(*this), " does not implement clone(): build a fresh instance from its options and "
                  "return cloneInto(std::move(fresh)) (see gnn/nn/Module.h)");
}

void Module::copyStateFrom(const Module& other) {
  // A subclass that does not override clone() would get a copy of its base class: refuse it.
  GNN_CHECK_ARG(typeid(*this) == typeid(other), "clone: a copy of ", className(other), " was built as a ",
                className(*this), " (", className(other), " must override clone())");
  auto mine = namedParameters(), theirs = other.namedParameters();
  GNN_CHECK_ARG(mine.size() == theirs.size(), "clone of ", className(other), ": the fresh instance has ",
                mine.size(), " parameters, the original ", theirs.size(), " (built from other options?)");
  for (size_t i = 0; i < mine.size(); ++i) {
    const auto& [name, src] = theirs[i];
    Variable dst = mine[i].second;
    GNN_CHECK_ARG(mine[i].first == name && dst.shape() == src.shape() && dst.dtype() == src.dtype(), "clone of ",
                  className(other), ": parameter ", i, " is '", name, "' ", shapeString(src.shape()), " ",
                  dtypeName(src.dtype()), " in the original but '", mine[i].first, "' ", shapeString(dst.shape()),
                  " ", dtypeName(dst.dtype()), " in the fresh instance");
    dst.value() = src.value().clone();
    dst.setRequiresGrad(src.requiresGrad());
  }
  copyTrainingFlags(other);
}

void Module::copyTrainingFlags(const Module& other) {
  training_ = other.training_;
  GNN_ASSERT(children_.size() == other.children_.size(), "clone: module trees differ");
  for (size_t i = 0; i < children_.size(); ++i) {
    GNN_ASSERT(children_[i].first == other.children_[i].first, "clone: child '", children_[i].first, "' vs '",
               other.children_[i].first, "'");
    children_[i].second->copyTrainingFlags(*other.children_[i].second);
  }
}

}  // namespace gnn
