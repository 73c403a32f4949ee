#include "app/NodeTraining.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <utility>

#include "app/NodeModel.h"
#include "app/Trainer.h"
#include "device/Device.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/SystemInfo.h"
#include "loaders/ClusterLoader.h"
#include "loaders/FixedSizeNeighborLoader.h"
#include "loaders/LayerwiseInference.h"
#include "loaders/PresampledLoader.h"

namespace gnn::app {

namespace {

// Accuracy of argmax(logits) over the nodes in idx; also returns every node's prediction.
double accuracy(const Tensor& logits, const Tensor& y, const std::vector<int64_t>& idx, std::vector<int64_t>* pred) {
  auto l = logits.matrix<float>();
  const int64_t* yl = y.data<int64_t>();
  int64_t correct = 0;
  for (int64_t i : idx) {
    Eigen::Index arg;
    l.row(i).maxCoeff(&arg);
    correct += arg == yl[i];
  }
  if (pred) {
    pred->resize(static_cast<size_t>(l.rows()));
    for (int64_t i = 0; i < l.rows(); ++i) {
      Eigen::Index arg;
      l.row(i).maxCoeff(&arg);
      (*pred)[static_cast<size_t>(i)] = arg;
    }
  }
  return idx.empty() ? 0 : static_cast<double>(correct) / static_cast<double>(idx.size());
}

/// The loss over a batch's labelled training rows; a neighbour batch trimmed to each layer gives the seeds' rows
/// only, the batch's first.
Variable batchLoss(const Variable& out, const Batch& b) {
  if (out.dim(0) == b.numNodes) return crossEntropy(out, b.y, b.trainMask);
  return crossEntropy(out, b.y.slice(0, out.dim(0)), b.trainMask.slice(0, out.dim(0)));
}

/// The whole graph as one micro-batch of dense features: one graph, nothing padded.
Batch wholeGraphBatch(const OgbNodeDataset& ds) {
  Batch full;
  full.numNodes = full.numRealNodes = ds.graph.numNodes;
  full.numEdges = full.numRealEdges = ds.graph.numEdges();
  full.numGraphs = full.numRealGraphs = 1;
  full.x = ds.graph.x;
  full.edgeIndex = ds.graph.edgeIndex;
  full.y = ds.graph.y;
  full.trainMask = ds.graph.trainMask;
  full.validMask = ds.graph.validMask;
  full.testMask = ds.graph.testMask;
  full.batch = Tensor::zeros({full.numNodes}, DType::I64);
  full.ptr = Tensor::zeros({2}, DType::I64);
  full.ptr.data<int64_t>()[1] = full.numNodes;
  full.edgePtr = Tensor::zeros({2}, DType::I64);
  full.edgePtr.data<int64_t>()[1] = full.numEdges;
  full.graphsMask = Tensor::full({1}, 1, DType::U8);
  full.nodesMask = Tensor::full({full.numNodes}, 1, DType::U8);
  full.edgesMask = Tensor::full({full.numEdges}, 1, DType::U8);
  return full;
}

/// One seed's run: the model, its loader, optimizer and Trainer, built in that order.
class SeedRun {
 public:
  SeedRun(const NodeRunInputs& in, uint64_t seed);
  NodeRunResult run();

 private:
  std::unique_ptr<NodeModel> buildModel() const;
  std::unique_ptr<NodeBatchLoader> buildLoader();
  std::unique_ptr<NodeBatchLoader> buildSampler();
  Variable forwardAll();
  Tensor infer();
  void compileForDevice();
  Trainer::Hooks hooks();
  void trainEpoch(int64_t epoch, int64_t skip);
  void trainWholeGraphOnDevice(const RequestShard& shard);
  void trainBatchesOnDevice(int64_t epoch, int64_t skip, const RequestShard& shard);
  void trainBatches(int64_t epoch, int64_t skip);
  bool nextBatch(Batch& b);
  void finish();

  const NodeRunInputs& in_;
  const NodeSettings& s_;
  const DeviceFlags& df_;
  const OgbNodeDataset& ds_;
  const std::shared_ptr<const ClusterData>& clusters_;
  const uint64_t seed_;
  std::unique_ptr<NodeModel> model_;
  // (Before loader_: buildLoader() sets them while loader_ is initialised.)
  FixedSizeOptions loaderSizes_;
  double loaderWaitMs_ = 0;  // the steps' time blocked on the loader (last epoch)
  PresampledLoader* presampled_ = nullptr;  // loader_ with --presample
  std::unique_ptr<NodeBatchLoader> loader_;
  std::shared_ptr<const NeighborSampler> sampler_;  // layer-wise inference's in-edge index
  std::unique_ptr<Optimizer> opt_;
  Trainer trainer_;
  NodeRunResult r_;
  // The whole graph's features as kept: sparse (bag-of-words, in_.data), else this dense matrix.
  const Variable denseFeatures_;
  // With --device ipu the steps run on simulated IPUs: the whole graph as one micro-batch of dense features
  // (repeated for every micro-batch of a request: each sees the same graph, so the update is the full-batch
  // one), or the cluster batches stacked into host requests. --device cpu keeps the sparse-feature path.
  std::unique_ptr<DeviceProgram> program_;
  Batch full_;
  const int64_t perRequest_;
};

SeedRun::SeedRun(const NodeRunInputs& in, uint64_t seed)
    : in_(in),
      s_(in.settings),
      df_(in.settings.device),
      ds_(in.data.dataset),
      clusters_(in.data.clusters),
      seed_(seed),
      model_(buildModel()),
      loader_(buildLoader()),
      opt_(s_.training.makeOptimizer(model_->parameterGroups(s_.training.weightDecay))),
      trainer_(in.prog, s_.training, model_->module(), *opt_, in.config, {"acc", /*higherIsBetter=*/true}, "nodes"),
      denseFeatures_(ds_.graph.x),
      perRequest_(df_.microBatchesPerRequest()) {
  trainer_.setSeed(seed);
  if (in.resumeFrom) trainer_.resume(*in.resumeFrom, in.resumePath);
}

std::unique_ptr<NodeModel> SeedRun::buildModel() const {
  Generator initGen(seed_);
  NodeModelSpec spec = s_.modelSpec(ds_.graph.x.dim(1), ds_.numClasses);
  // Cluster-GCN and neighbour batches: every step sees another subgraph, so no batch's normalised adjacency is
  // kept past its forward; the whole graph's, which every evaluation comes back to, may be (--keep-adjacency).
  spec.cached = clusters_ == nullptr && !s_.neighborLoader();
  if (spec.basicGnn && spec.name == "pna")
    spec.degreeHistogram = in_.data.edgesReleased ? in_.data.inDegreeHistogram
                                                  : inDegreeHistogram(ds_.graph.edgeIndex, ds_.graph.numNodes);
  std::unique_ptr<NodeModel> model = makeNodeModel(spec, initGen);
  model->setTrimToLayer(s_.trimToLayer == "on");
  if (clusters_ && s_.keepsAdjacency(ds_.graph.edgeIndex.dim(1)))
    model->keepAdjacencyOf(ds_.graph.edgeIndex, ds_.graph.numNodes);
  return model;
}

// The loader, and with --presample the same loader's epochs made before their steps.
std::unique_ptr<NodeBatchLoader> SeedRun::buildLoader() {
  std::unique_ptr<NodeBatchLoader> loader = buildSampler();
  if (!loader || !s_.presample) return loader;
  auto presampled = std::make_unique<PresampledLoader>(std::move(loader));
  presampled_ = presampled.get();
  return presampled;
}

std::unique_ptr<NodeBatchLoader> SeedRun::buildSampler() {
  // The batch's normalised adjacency is built on the loader's thread, off the step's path (the devices run copies
  // of the model, with caches of their own). One batch cut ahead overlaps the loader with the step (which keeps
  // the cores busy itself); each further one only holds memory: ~80 MB a batch of 4 of 16 clusters at 245k nodes.
  NodeModel* model = model_.get();
  std::function<void(const Batch&)> prepare;
  if (!df_.simulated()) prepare = [model](const Batch& b) { model->prepare(b); };
  if (s_.neighborLoader()) {
    const NodeData& d = in_.data;
    FixedSizeNeighborLoader::Options lo;
    lo.numNeighbors = s_.fanouts();
    lo.batchSize = s_.batchSize;
    lo.seed = seed_;
    lo.prefetch = 1;
    lo.prepare = prepare;
    Stopwatch sw;
    loaderSizes_ = s_.fixedSizes == "worst"
                       ? FixedSizeNeighborLoader::worstCase(*d.sampler, lo)
                       : FixedSizeNeighborLoader::fromLoader(*d.sampler, ds_.trainIdx, lo, 1000, s_.sizeMargin);
    if (!s_.training.quiet)
      std::fprintf(stderr, "neighbour batches: %s (%s, %.0f ms)\n", loaderSizes_.toString().c_str(),
                   s_.fixedSizes == "worst" ? "the worst case" : "epoch 0's largest batch + margin", sw.ms());
    return std::make_unique<FixedSizeNeighborLoader>(d.graph, d.sampler, ds_.trainIdx, lo, loaderSizes_);
  }
  if (!clusters_) return nullptr;
  ClusterLoader::Options lo;
  lo.clustersPerBatch = static_cast<int>(s_.clustersPerBatch);
  lo.seed = seed_;
  lo.prefetch = 1;
  lo.prepare = prepare;
  loaderSizes_ = clusters_->worstCaseOptions(lo.clustersPerBatch);
  return std::make_unique<ClusterLoader>(clusters_, loaderSizes_, lo);
}

// The whole graph's logits from its features as kept.
Variable SeedRun::forwardAll() {
  const SparseMatrix* sparse = in_.data.sparseFeaturesOrNull();
  return sparse ? model_->forward(*sparse, ds_.graph.edgeIndex) : model_->forward(denseFeatures_, ds_.graph.edgeIndex);
}

Tensor SeedRun::infer() {
  NoGradGuard ng;
  model_->module().eval();
  Stopwatch sw;
  // Neighbour sampling: evaluation in the memory training takes, a layer at a time over batches of nodes with
  // all their neighbours, where the model can run so (PyG's BasicGNN.inference); else the whole graph at once.
  BasicGNN* layerwise = s_.layerwiseInference() ? model_->basicGnn() : nullptr;
  if (layerwise && layerwiseInferenceRefusal(*layerwise).empty()) {
    if (!sampler_) sampler_ = in_.data.sampler ? in_.data.sampler
                                               : std::make_shared<const NeighborSampler>(ds_.graph.edgeIndex,
                                                                                         ds_.graph.numNodes);
    Tensor out = layerwiseInference(*layerwise, ds_.graph.x, *sampler_, s_.evalBatchSize);
    r_.layerwiseInference = true;
    r_.inferMs.push_back(sw.ms());
    model_->module().train();
    return out;
  }
  Tensor out = forwardAll().value();
  r_.inferMs.push_back(sw.ms());
  model_->module().train();
  return out;
}

void SeedRun::compileForDevice() {
  LossFn lossFn{[](const Variable& out, const Batch& b) { return crossEntropy(out, b.y, b.trainMask); },
                [](const Batch& b) { return labelCount(b.trainMask, 0); }};
  if (!loader_) full_ = wholeGraphBatch(ds_);
  Batch shapes = full_;
  if (loader_) {
    loader_->startEpoch(0);
    loader_->next(shapes);
  }
  program_ = df_.compile(in_.prog, model_->module(), lossFn, opt_.get(), shapes, 1.0, s_.training.quiet);
  if (!df_.trace.empty() || !df_.traceSvg.empty()) program_->enableTrace(df_.traceRequests);
}

Trainer::Hooks SeedRun::hooks() {
  Trainer::Hooks hooks;
  hooks.stepsPerEpoch = [this]() -> int64_t {
    const int64_t batches = loader_ ? loader_->numBatches() : perRequest_;
    return program_ ? program_->updatesFor(batches) : batches;
  };
  hooks.trainEpoch = [this](int64_t epoch, int64_t skip) { trainEpoch(epoch, skip); };
  hooks.validate = [this] {
    Tensor out = infer();
    Evaluation e;
    e.metric = accuracy(out, ds_.graph.y, ds_.validIdx, nullptr);
    e.details = {{"train_acc", accuracy(out, ds_.graph.y, ds_.trainIdx, nullptr)}};
    return e;
  };
  hooks.test = [this] {
    Tensor out = infer();
    Evaluation e;
    e.metric = accuracy(out, ds_.graph.y, ds_.testIdx, nullptr);
    return e;
  };
  return hooks;
}

void SeedRun::trainEpoch(int64_t epoch, int64_t skip) {
  Stopwatch sw;
  model_->module().train();
  // Under mpirun each rank sends only its replicas' micro-batches (RequestShard: the device's mapping).
  const RequestShard shard = df_.options.shard(/*training=*/true);
  loaderWaitMs_ = 0;
  if (program_ && !loader_) {
    trainWholeGraphOnDevice(shard);
  } else if (program_) {
    trainBatchesOnDevice(epoch, skip, shard);
  } else if (loader_) {
    trainBatches(epoch, skip);
  } else {
    trainer_.step([&] { return crossEntropy(forwardAll(), ds_.graph.y, ds_.graph.trainMask); },
                  static_cast<int64_t>(ds_.trainIdx.size()));
  }
  // --presample: the steps alone (the batches were made at the epoch's start).
  r_.epochMs.push_back(sw.ms() - (presampled_ ? presampled_->lastPresampleMs() : 0.0));
}

// The loader's next batch, the wait for it counted.
bool SeedRun::nextBatch(Batch& b) {
  Stopwatch sw;
  const bool more = loader_->next(b);
  loaderWaitMs_ += sw.ms();
  return more;
}

void SeedRun::trainWholeGraphOnDevice(const RequestShard& shard) {
  int64_t mine = 0;
  for (int64_t m = 0; m < perRequest_; ++m) mine += shard.owns(m) ? 1 : 0;
  std::vector<Batch> copies(static_cast<size_t>(mine), full_);
  trainer_.step(*program_, mine == 1 ? full_ : stackMicroBatches(copies));
}

// Cluster or neighbour batches stacked into host requests (those without a labelled node weigh 0).
void SeedRun::trainBatchesOnDevice(int64_t epoch, int64_t skip, const RequestShard& shard) {
  loader_->startEpoch(epoch);
  std::vector<Batch> parts;
  auto flush = [&] {
    if (parts.empty()) return true;
    const int64_t updates = program_->updatesFor(static_cast<int64_t>(parts.size()));
    const Batch req = ownedRequest(parts, shard);
    if (skip > 0) {
      skip -= updates;
      return true;
    }
    return trainer_.step(*program_, req);
  };
  bool more = true;
  for (Batch b; more && nextBatch(b);) {
    parts.push_back(std::move(b));
    if (static_cast<int64_t>(parts.size()) == perRequest_) more = flush();
  }
  if (more) flush();
}

// One step per fixed-size cluster or neighbour batch (the loss over its trainMask: a neighbour batch's seeds);
// batches without a labelled node give no gradient.
void SeedRun::trainBatches(int64_t epoch, int64_t skip) {
  loader_->startEpoch(epoch);
  for (Batch b; nextBatch(b);) {
    if (b.trainMask.flat<uint8_t>().maxCoeff() == 0) continue;
    if (skip > 0) {
      --skip;
      continue;
    }
    if (!trainer_.step([&] { return batchLoss(model_->forward(b), b); },
                       b.trainMask.flat<uint8_t>().cast<int64_t>().sum()))
      break;  // --time-budget spent
  }
}

void SeedRun::finish() {
  r_.summary = trainer_.summary();
  if (loader_) {
    r_.loader = {{"fixed_num_nodes", loaderSizes_.numNodes},
                 {"fixed_num_edges", loaderSizes_.numEdges},
                 {"batches_per_epoch", loader_->numBatches()},
                 {"last_epoch", loader_->report().toJson()},
                 {"last_epoch_wait_ms", loaderWaitMs_}};
    if (presampled_) r_.loader["last_epoch_presample_ms"] = presampled_->lastPresampleMs();
  }
  r_.valAcc = trainer_.bestValid();
  r_.testAcc = trainer_.bestTest().value("metric", NAN);
  r_.bestEpoch = trainer_.bestEpoch();
  r_.paramL2 = paramL2(model_->module());
  r_.paramChecksum = paramChecksum(model_->module());
  if (program_) {
    df_.writeTraces(*program_, in_.prog.name());
    r_.device = df_.toJson(*program_);
    const nlohmann::json planJson = df_.planJson(*program_);  // items() must not outlive the json it iterates
    for (const auto& [k, v] : planJson.items()) r_.device[k] = v;
    if (!s_.training.quiet) std::cerr << "stages (per micro-batch):\n" << program_->stageTable();
  }
  // The final weights' test accuracy (beside the one at the best validation epoch) and predictions.
  std::vector<int64_t> pred;
  Tensor out = infer();
  r_.finalTestAcc = accuracy(out, ds_.graph.y, ds_.testIdx, &pred);
  const std::vector<int64_t>& nodeOrder = in_.data.order;
  if (!nodeOrder.empty()) {  // back to the dataset's own numbering
    std::vector<int64_t> original(pred.size());
    for (size_t i = 0; i < pred.size(); ++i) original[static_cast<size_t>(nodeOrder[i])] = pred[i];
    pred = std::move(original);
  }
  r_.predChecksum.add(pred.data(), pred.size() * sizeof(int64_t));
}

NodeRunResult SeedRun::run() {
  trainer_.logRunStart({{"data", s_.data}, {"seed", seed_},
                        {"split", {{"kind", "source"}, {"train", ds_.trainIdx.size()}, {"valid", ds_.validIdx.size()},
                                   {"test", ds_.testIdx.size()}}}});
  if (df_.simulated()) compileForDevice();
  trainer_.run(hooks());
  finish();
  return std::move(r_);
}

}  // namespace

NodeRunResult trainNodeRun(const NodeRunInputs& in, uint64_t seed) { return SeedRun(in, seed).run(); }

}  // namespace gnn::app
