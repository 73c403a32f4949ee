#include "app/HeteroNodeTraining.h"

#include <cmath>
#include <memory>
#include <utility>

#include "app/HeteroNodeBatches.h"
#include "app/HeteroNodeDevice.h"
#include "app/HeteroNodeModel.h"
#include "app/Trainer.h"
#include "device/Device.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/SystemInfo.h"

namespace gnn::app {

namespace {

// Accuracy of argmax(logits) over the target type's nodes in idx (its own ids); also every node's prediction.
double targetAccuracy(const Tensor& logits, const Tensor& y, const std::vector<int64_t>& idx,
                      std::vector<int64_t>* pred) {
  auto l = logits.matrix<float>();
  const int64_t* yl = y.data<int64_t>();
  auto argmax = [&](int64_t i) {
    Eigen::Index arg;
    l.row(i).maxCoeff(&arg);
    return static_cast<int64_t>(arg);
  };
  int64_t correct = 0;
  for (int64_t i : idx) correct += argmax(i) == yl[i];
  if (pred) {
    pred->resize(static_cast<size_t>(l.rows()));
    for (int64_t i = 0; i < l.rows(); ++i) (*pred)[static_cast<size_t>(i)] = argmax(i);
  }
  return idx.empty() ? 0 : static_cast<double>(correct) / static_cast<double>(idx.size());
}

/// One seed's run: the model, its optimizer and Trainer, built in that order.
class HeteroSeedRun {
 public:
  HeteroSeedRun(const HeteroNodeRunInputs& in, uint64_t seed);
  NodeRunResult run();

 private:
  std::unique_ptr<HeteroNodeModel> buildModel() const;
  Variable targetLogits();
  Tensor infer();
  Trainer::Hooks hooks();
  void trainEpoch(int64_t epoch, int64_t skip);
  void compileForDevice();
  void finish();

  const HeteroNodeRunInputs& in_;
  const NodeSettings& s_;
  const HeteroNodeData& d_;
  const uint64_t seed_;
  const HeteroNodeModelSpec spec_;
  std::unique_ptr<HeteroNodeModel> model_;
  std::unique_ptr<Optimizer> opt_;
  Trainer trainer_;
  std::unique_ptr<HeteroNodeBatches> batches_;  // --loader neighbor or cluster
  std::unique_ptr<HeteroNodeDevice> device_;    // --device ipu: the steps on the simulated IPUs
  NodeRunResult r_;
};

HeteroSeedRun::HeteroSeedRun(const HeteroNodeRunInputs& in, uint64_t seed)
    : in_(in),
      s_(in.settings),
      d_(in.data),
      seed_(seed),
      spec_(heteroModelSpec(s_, d_)),
      model_(buildModel()),
      opt_(s_.training.makeOptimizer({{model_->module().parameters(), s_.training.weightDecay}})),
      trainer_(in.prog, s_.training, model_->module(), *opt_, in.config, {"acc", /*higherIsBetter=*/true}, "nodes") {
  trainer_.setSeed(seed);
  if (s_.neighborLoader() || s_.clusterLoader()) batches_ = std::make_unique<HeteroNodeBatches>(s_, d_, seed);
  // The dataset's own relations (the typed edges split by relation, in the same order: data/HeteroToHomogeneous.h),
  // shared, not copied, for the forward without typed edges (dropTypedEdgesUnread).
  std::vector<std::pair<EdgeType, Tensor>> relations;
  for (const EdgeType& t : d_.graph.edgeTypeNames) relations.emplace_back(t, d_.dataset.graph.edge(t).edgeIndex);
  model_->setWholeGraphRelations(std::move(relations));
}

std::unique_ptr<HeteroNodeModel> HeteroSeedRun::buildModel() const {
  Generator initGen(seed_);
  return makeHeteroNodeModel(spec_, initGen);
}

// Full batch: the whole graph each step; the model gives the target type's logits.
Variable HeteroSeedRun::targetLogits() {
  return model_->forward(d_.features, d_.graph.edgeIndex, d_.graph.edgeType);
}

Tensor HeteroSeedRun::infer() {
  NoGradGuard ng;
  model_->module().eval();
  Stopwatch sw;
  Tensor out = targetLogits().value();
  r_.inferMs.push_back(sw.ms());
  model_->module().train();
  return out;
}

Trainer::Hooks HeteroSeedRun::hooks() {
  Trainer::Hooks hooks;
  hooks.stepsPerEpoch = [this] {
    return device_ ? device_->updatesPerEpoch() : batches_ ? batches_->numBatches() : int64_t{1};
  };
  hooks.trainEpoch = [this](int64_t epoch, int64_t skip) { trainEpoch(epoch, skip); };
  hooks.validate = [this] {
    Tensor out = infer();
    Evaluation e;
    e.metric = targetAccuracy(out, d_.y, d_.validIdx, nullptr);
    e.details = {{"train_acc", targetAccuracy(out, d_.y, d_.trainIdx, nullptr)}};
    return e;
  };
  hooks.test = [this] {
    Evaluation e;
    e.metric = targetAccuracy(infer(), d_.y, d_.testIdx, nullptr);
    return e;
  };
  return hooks;
}

// Full batch: one step over every node; with --loader neighbor or cluster, a step per batch, the loss over its seeds
// only.
// `skip`: the steps trained before an interrupt.
void HeteroSeedRun::trainEpoch(int64_t epoch, int64_t skip) {
  Stopwatch sw;
  model_->module().train();
  if (device_) {
    device_->trainEpoch(trainer_, epoch, skip);
  } else if (!batches_) {
    if (skip > 0) return;
    trainer_.step([&] { return crossEntropy(targetLogits(), d_.y, d_.trainMask); },
                  static_cast<int64_t>(d_.trainIdx.size()));
  } else {
    batches_->startEpoch(epoch);
    for (HeteroNodeStep st; batches_->next(st);) {
      if (skip > 0) {
        --skip;
        continue;
      }
      const auto loss = [&] {
        return crossEntropy(model_->forward(st.features, st.nodeIds, st.edgeIndex, st.edgeType, st.targetRows),
                            st.y, st.seedMask);
      };
      if (!trainer_.step(loss, st.numSeeds)) break;  // --time-budget spent
    }
  }
  r_.epochMs.push_back(sw.ms());
}

void HeteroSeedRun::finish() {
  r_.summary = trainer_.summary();
  if (batches_) r_.loader = batches_->json();
  if (device_) r_.device = device_->finish(in_.prog.name());
  r_.valAcc = trainer_.bestValid();
  r_.testAcc = trainer_.bestTest().value("metric", NAN);
  r_.bestEpoch = trainer_.bestEpoch();
  r_.paramL2 = paramL2(model_->module());
  r_.paramChecksum = paramChecksum(model_->module());
  // The final weights' test accuracy (beside the one at the best validation epoch) and the target type's
  // predictions, in its own numbering.
  std::vector<int64_t> pred;
  r_.finalTestAcc = targetAccuracy(infer(), d_.y, d_.testIdx, &pred);
  r_.predChecksum.add(pred.data(), pred.size() * sizeof(int64_t));
}

// --device ipu: the whole graph as one micro-batch, or the neighbour batches, on the simulated IPUs
// (app/HeteroNodeDevice.h), the caller's weights updated by every request; evaluation stays on the host, as for
// homogeneous graphs.
void HeteroSeedRun::compileForDevice() {
  device_ = std::make_unique<HeteroNodeDevice>(HeteroDeviceInputs{in_.prog, s_, d_, spec_}, *model_, opt_.get(),
                                               batches_.get());
}

NodeRunResult HeteroSeedRun::run() {
  trainer_.logRunStart({{"data", s_.data}, {"seed", seed_}, {"target_type", d_.targetType},
                        {"split", {{"kind", "source"}, {"train", d_.trainIdx.size()}, {"valid", d_.validIdx.size()},
                                   {"test", d_.testIdx.size()}}}});
  if (s_.device.simulated()) compileForDevice();
  trainer_.run(hooks());
  finish();
  return std::move(r_);
}

}  // namespace

HeteroNodeModelSpec heteroModelSpec(const NodeSettings& s, const HeteroNodeData& data) {
  HeteroNodeModelSpec spec;
  spec.name = s.model;
  for (size_t t = 0; t < data.graph.nodeTypeNames.size(); ++t) {
    const Tensor& x = data.features[t];
    spec.nodeTypes.push_back({data.graph.nodeTypeNames[t],
                              data.graph.nodeSlices[t + 1] - data.graph.nodeSlices[t], x.defined() ? x.dim(1) : 0});
  }
  spec.edgeTypes = data.graph.edgeTypeNames;
  spec.targetType = data.graph.nodeTypeIndex(data.targetType);
  spec.numRelations = static_cast<int64_t>(data.graph.edgeTypeNames.size());
  spec.numEdges = data.dataset.graph.numEdges();  // the typed graph's, which may have been dropped
  spec.hidden = s.hidden;
  spec.numClasses = data.numClasses;
  spec.layers = s.layers;
  spec.numBases = s.numBases;
  spec.heads = s.heads;
  spec.dropout = s.dropout;
  spec.norm = s.norm;
  return spec;
}

NodeRunResult trainHeteroNodeRun(const HeteroNodeRunInputs& in, uint64_t seed) {
  return HeteroSeedRun(in, seed).run();
}

}  // namespace gnn::app
