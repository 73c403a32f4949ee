// ReplicaWeights: the weights each of this process's replicas runs on, and the optimizer's master copy. In fp32
// the first replica runs on the compiled model itself and the others on clones; in fp16 every replica is a clone
// holding the master's weights rounded to half, and the compiled model keeps the fp32 master weights the
// optimizer updates. Parameters are listed in the optimizer's order, matched by position in parameters().
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "gnn/autograd/Variable.h"
#include "gnn/nn/Module.h"
#include "gnn/optim/Optimizer.h"
#include "models/BlockModel.h"

namespace gnn {

class ReplicaWeights {
 public:
  /// `optimizer` null: an inference program (the model's own parameter order).
  ReplicaWeights(BlockModel& master, const Optimizer* optimizer, int64_t localReplicas, bool fp16);

  /// The models of this process's replicas, from its first.
  const std::vector<BlockModel*>& models() const { return models_; }
  /// Replica `local`'s parameters (counted from this process's first replica), in the optimizer's order.
  std::vector<Variable>& params(int64_t local) { return params_[static_cast<size_t>(local)]; }
  std::vector<std::vector<Variable>>& params() { return params_; }
  /// The optimizer's (fp32 master) parameters.
  std::vector<Variable>& master() { return master_; }
  const std::vector<Variable>& master() const { return master_; }
  /// Bytes of one copy of the parameters.
  int64_t bytes() const;
  /// Every replica's weights from the master's (fp16: rounded to half).
  void sync();

 private:
  bool fp16_;
  std::vector<std::unique_ptr<Module>> clones_;  // the replicas after the first (fp16: every one)
  std::vector<BlockModel*> models_;
  std::vector<std::vector<Variable>> params_;
  std::vector<Variable> master_;
};

}  // namespace gnn
