#include "gnn/nn/conv/SelfLoopFill.h"

#include <stdexcept>

#include "gnn/ops/GraphAttention.h"

namespace gnn {

SelfLoopFill SelfLoopFill::fromPyG(const nlohmann::json& fillValue, const std::string& className) {
  SelfLoopFill f;
  if (fillValue.is_number() || fillValue.is_boolean()) {  // Python's True is the int 1 to PyG's isinstance
    f.reduce.clear();
    f.value = fillValue.is_boolean() ? (fillValue.get<bool>() ? 1.0 : 0.0) : fillValue.get<double>();
    return f;
  }
  if (fillValue.is_string()) {
    const std::string r = fillValue.get<std::string>();
    if (r == "mean" || r == "add" || r == "max" || r == "min") {
      f.reduce = r;
      return f;
    }
  }
  throw std::invalid_argument(className + ": fill_value=" + fillValue.dump() +
                              ": not supported (a number, or one of \"mean\", \"add\", \"max\", \"min\")");
}

Variable SelfLoopFill::loopAttr(const Variable& edgeAttr, const Tensor& edgeIndex, int64_t numNodes) const {
  if (reduce.empty()) return Variable(Tensor::full({numNodes, edgeAttr.dim(1)}, value, edgeAttr.dtype()));
  return selfLoopAttr(edgeAttr, edgeIndex, numNodes, reduce);
}

}  // namespace gnn
