#include "app/NodeData.h"

#include <malloc.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

#include "gnn/io/Fnv1a.h"
#include "gnn/nn/models/BasicGNN.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/SystemInfo.h"
#include "gnn/tensor/BufferPool.h"

namespace gnn::app {

namespace {

// Cluster-GCN's memory. Each batch's subgraph is cut at its own size before it is padded, so the buffer pool,
// which recycles buffers of equal size only, would keep every one of them (up to its 1 GiB) for requests that
// never come: ~20 MB a step at 245k nodes, 640 MB peak on a 24.5k-node graph of 30 MB. The heap reuses freed
// blocks of any size instead: no pool, and one heap for all threads (glibc gives the loader's thread an arena
// of its own, whose peak then adds to the main one's: 1,053 MB against 847 MB for 8 epochs at 245k nodes,
// batches of 4 of 16 clusters). Called before the dataset is read.
void boundClusterLoaderMemory() {
  BufferPool::setCapacity(0);
  mallopt(M_ARENA_MAX, 1);
}

// Once the graph is partitioned: what METIS and the renumbering freed (more than the graph itself) goes back to
// the system, and from then on freed blocks under 32 MB stay in the heap (no trimming), so each step's buffers
// reuse the last step's memory instead of faulting in fresh pages (~20% of an epoch at 245k nodes). Larger
// blocks (a batch's edge list, the whole graph's arrays in evaluation) are mapped and returned when freed: in
// the heap they left holes the next, differently sized, ones did not fit, and the peak crept up from epoch to
// epoch (by ~130 MB over 20 epochs at 245k nodes, batches of 4 of 16 clusters; app::keepFreedMemoryInHeap's
// 1 GiB threshold). Kept from the start, the heap would also hold the reader's chunks through METIS.
void keepTrainingMemoryInHeap() {
  malloc_trim(0);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

// Cluster-GCN: METIS on the graph as read, then its nodes renumbered cluster by cluster
// (ClusterData::clusterOrder): the batches are the same bits, and the whole-graph evaluation reads its
// neighbours' rows from a cluster's block instead of from anywhere in the graph. order maps back.
void partitionByCluster(NodeData& d, const NodeSettings& s) {
  OgbNodeDataset& ds = d.dataset;
  requireRange("--clusters", static_cast<double>(s.clusters), 1, static_cast<double>(ds.graph.numNodes));
  Stopwatch metis;
  // The features and the edge list wait in temporary files while METIS runs (its own memory is about 40
  // bytes per edge): at ogbn-products' size the peak went from 8.6 GB to the partition's own.
  d.partition = ClusterData::partition(ds.graph.numNodes, ds.graph.edgeIndex, s.clusters, s.training.seed,
                                       &d.edgeCut, {&ds.graph.x, &ds.graph.edgeIndex}, &d.metisSpilledBytes);
  d.partitionMs = metis.ms();
  d.order = ClusterData::clusterOrder(d.partition, s.clusters);
  ds.permuteNodes(d.order);
  std::vector<int64_t> renumbered(d.order.size());
  for (size_t i = 0; i < d.order.size(); ++i) renumbered[i] = d.partition[static_cast<size_t>(d.order[i])];
  d.partition = std::move(renumbered);
  keepTrainingMemoryInHeap();
}

// Whether the model the flags name reads sparse features: the library's GCN does, and of PyG's models
// (node_property) the classes whose first layer takes them (BasicGNN::classTakesSparseInput; not PNA, EdgeCNN).
bool modelTakesSparseFeatures(const NodeSettings& s) {
  return !s.basicGnn || BasicGNN::classTakesSparseInput(s.modelSpec(1, 1).basicGnnSpec()["class"].get<std::string>());
}

}  // namespace

NodeData readNodeData(const NodeSettings& s) {
  // Neighbour batches vary in size from step to step as cluster batches do: the same memory policy.
  const bool batchesVary = s.clusterLoader() || s.neighborLoader();
  if (batchesVary) boundClusterLoaderMemory();  // before the dataset's buffers and any thread
  NodeData d;
  Stopwatch loadTime;
  OgbNodeOptions loadOptions;
  loadOptions.normalization = *parseFeatureNormalization(s.normalizeFeatures);  // checked by checkNodeFlags
  loadOptions.addInverseEdges = *parseAddInverseEdges(s.addInverseEdges);      // likewise
  loadOptions.additionalNodeFiles = s.nodeFiles();
  d.dataset = OgbNodeDataset::load(s.data, loadOptions);
  d.loadMs = loadTime.ms();
  d.numEdges = d.dataset.graph.numEdges();
  if (s.clusterLoader()) partitionByCluster(d, s);
  // (keepFreedMemoryInHeap instead: epochs 1.6x faster at 245k nodes, but the batches' varying sizes fragment the
  // heap: 2.4 GB peak against 1.5.)
  if (s.neighborLoader()) keepTrainingMemoryInHeap();
  d.density = d.dataset.featureDensity();
  // Of PyG's models (node_property), PNA and EdgeCNN read dense features only (checkNodeFlags refuses
  // --feature-layout sparse for them).
  d.sparse = modelTakesSparseFeatures(s) &&
             (s.featureLayout == "sparse" ||
              (s.featureLayout == "auto" && d.density < OgbNodeDataset::kSparseFeatureDensity));
  if (d.sparse) d.sparseFeatures = d.dataset.sparseFeatures();
  return d;
}

void recordNodeData(const NodeData& data, const std::string& dataFlag, RunConfig& config,
                    const Checkpoint* checkpoint, const std::string& checkpointPath) {
  const OgbNodeDataset& ds = data.dataset;
  nlohmann::json dataId = {{"dataset", ds.name}, {"num_features", ds.graph.x.dim(1)}, {"num_classes", ds.numClasses}};
  if (checkpoint && config.derived.contains("data") && config.derived["data"] != dataId)
    throw UsageError("--data " + dataFlag + " (" + dataId.dump() + ") is not the dataset " + checkpointPath +
                     " was trained on (" + config.derived["data"].dump() + ")");
  config.derived["data"] = dataId;
  // The normalisation the features got. Under `auto` it depends on the data, and `standard` on the training
  // split's statistics: those are recomputed from the data on resume (deterministic: fixed order, double) and
  // their checksum is kept, so a resumed run sees the features the checkpoint was trained on bit for bit, or
  // is refused.
  nlohmann::json norm = {{"normalization", featureNormalizationName(ds.normalization)}};
  if (ds.normalization == FeatureNormalization::Standard) {
    Fnv1a h;
    h.add(ds.featureMean.data(), ds.featureMean.size() * sizeof(double));
    h.add(ds.featureStd.data(), ds.featureStd.size() * sizeof(double));
    norm["mean_std_checksum"] = h.hex();
  }
  // A checkpoint without the record predates the choice: its run normalised rows.
  const nlohmann::json saved = !checkpoint                           ? norm
                               : config.derived.contains("features") ? config.derived["features"]
                                                                     : nlohmann::json{{"normalization", "row"}};
  if (saved != norm)
    throw UsageError("--data " + dataFlag + " gives features normalised as " + norm.dump() + ", but " +
                     checkpointPath + " was trained on features normalised as " + saved.dump() +
                     " (the features or the training split changed)");
  config.derived["features"] = norm;
}

void printNodeData(const NodeData& data, const NodeSettings& s) {
  if (s.training.quiet) return;
  const OgbNodeDataset& ds = data.dataset;
  std::fprintf(stderr,
               "%s: %lld nodes, %lld edges%s, %lld features (%.1f%% non-zero, kept %s, normalized: %s%s), "
               "%lld classes, split %zu/%zu/%zu, loaded in %.0f ms, %d threads\n",
               ds.name.c_str(), static_cast<long long>(ds.graph.numNodes), static_cast<long long>(ds.graph.numEdges()),
               ds.inverseEdgesAdded ? " (edge.csv's and their inverses)" : "",
               static_cast<long long>(ds.graph.x.dim(1)), 100.0 * data.density, data.sparse ? "sparse" : "dense",
               featureNormalizationName(ds.normalization), s.normalizeFeatures == "auto" ? " (auto)" : "",
               static_cast<long long>(ds.numClasses), ds.trainIdx.size(), ds.validIdx.size(), ds.testIdx.size(),
               data.loadMs, numThreads());
}

void buildClusters(NodeData& data, const NodeSettings& s) {
  if (!s.clusterLoader()) return;
  std::shared_ptr<const ClusterData> clusters =
      std::make_shared<ClusterData>(data.dataset.graph, std::move(data.partition), s.clusters, data.edgeCut);
  data.clusters = clusters;
  FixedSizeOptions fo = clusters->worstCaseOptions(static_cast<int>(s.clustersPerBatch));
  if (!s.training.quiet)
    std::fprintf(stderr, "METIS: %lld clusters in %.0f ms (edge cut %lld); batches of %lld clusters, %s\n",
                 static_cast<long long>(s.clusters), data.partitionMs, static_cast<long long>(clusters->edgeCut()),
                 static_cast<long long>(s.clustersPerBatch), fo.toString().c_str());
}

void buildNeighborSampler(NodeData& data, const NodeSettings& s, bool releaseEdges) {
  if (!s.neighborLoader()) return;
  Stopwatch sw;
  Graph& g = data.dataset.graph;
  data.sampler = std::make_shared<const NeighborSampler>(g.edgeIndex, g.numNodes);
  data.graph = std::shared_ptr<const Graph>(&g, [](const Graph*) {});  // owned by data.dataset
  data.samplerMs = sw.ms();
  if (releaseEdges) {
    for (int64_t v = 0; v < g.numNodes; ++v) {
      const size_t d = static_cast<size_t>(data.sampler->inDegree(v));
      if (data.inDegreeHistogram.size() <= d) data.inDegreeHistogram.resize(d + 1, 0);
      ++data.inDegreeHistogram[d];
    }
    g.edgeIndex = Tensor();
    data.edgesReleased = true;
    malloc_trim(0);
  }
  if (!s.training.quiet)
    std::fprintf(stderr,
                 "neighbour sampling: %s neighbours per hop, batches of %lld seeds; in-edge index in %.0f ms%s\n",
                 s.numNeighbors.c_str(), static_cast<long long>(s.batchSize), data.samplerMs,
                 releaseEdges ? " (the edge list released: evaluation is layer-wise)" : "");
}

}  // namespace gnn::app
