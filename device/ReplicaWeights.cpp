#include "device/ReplicaWeights.h"

#include <cstring>
#include <utility>

#include "gnn/system/Check.h"
#include "gnn/tensor/HalfPrecision.h"

namespace gnn {

ReplicaWeights::ReplicaWeights(BlockModel& master, const Optimizer* optimizer, int64_t localReplicas, bool fp16)
    : fp16_(fp16) {
  if (!fp16_) models_.push_back(&master);
  for (int64_t r = fp16_ ? 0 : 1; r < localReplicas; ++r) {
    std::unique_ptr<Module> c = master.clone();
    auto* bm = dynamic_cast<BlockModel*>(c.get());
    GNN_ASSERT(bm, "clone() of a BlockModel returned another kind of module");
    models_.push_back(bm);
    clones_.push_back(std::move(c));
  }
  const std::vector<Variable> mp = master.parameters();
  const std::vector<Variable> order = optimizer ? optimizer->parameters() : mp;
  std::vector<size_t> pos;
  for (const Variable& p : order) {
    size_t i = 0;
    while (i < mp.size() && &mp[i].value() != &p.value()) ++i;
    GNN_CHECK_ARG(i < mp.size(), "compile: the optimizer updates a tensor that is not a parameter of the model");
    pos.push_back(i);
  }
  for (BlockModel* m : models_) {
    const std::vector<Variable> rp = m->parameters();
    std::vector<Variable> v;
    for (size_t i : pos) v.push_back(rp[i]);
    params_.push_back(std::move(v));
  }
  for (size_t i : pos) master_.push_back(mp[i]);
}

int64_t ReplicaWeights::bytes() const {
  int64_t b = 0;
  for (const Variable& p : master_) b += static_cast<int64_t>(p.value().nbytes());
  return b;
}

void ReplicaWeights::sync() {
  for (auto& replica : params_)
    for (size_t i = 0; i < master_.size(); ++i) {
      const Tensor& src = std::as_const(master_[i]).value();
      Tensor& dst = replica[i].value();
      if (dst.storageId() == src.storageId()) continue;  // replica 0 in fp32 is the master
      std::memcpy(dst.raw(), src.raw(), src.nbytes());
      if (fp16_) roundTensorToHalf(dst, Rounding::Half);
    }
}

}  // namespace gnn
