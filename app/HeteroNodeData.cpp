#include "app/HeteroNodeData.h"

#include <algorithm>
#include <cstdio>

#include "app/HeapTuning.h"
#include "app/Program.h"
#include "data/GzLineReader.h"
#include "data/NeighbourMeanFeatures.h"
#include "gnn/system/Check.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/SystemInfo.h"
#include "gnn/tensor/BufferPool.h"

namespace gnn::app {

namespace {

std::string typeList(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The labelled type to classify: --target-type, or the only labelled type.
std::string chooseTargetType(const HeteroGraph& g, const std::string& asked) {
  std::vector<std::string> labelled;
  for (const std::string& type : g.nodeTypes())
    if (g.node(type).y.defined()) labelled.push_back(type);
  if (!asked.empty()) {
    for (const std::string& type : labelled)
      if (type == asked) return type;
    throw UsageError("--target-type " + asked + ": " +
                     (g.hasNodeType(asked) ? "that node type has no labels" : "no such node type") +
                     "; the labelled node types are " + typeList(labelled));
  }
  if (labelled.size() > 1)
    throw UsageError("several node types have labels (" + typeList(labelled) +
                     "): name the one to classify with --target-type");
  GNN_CHECK_ARG(!labelled.empty(), "no node type has labels");  // OgbHeteroDataset::load refuses such a folder
  return labelled.front();
}

// A type's labels as int64 [N] (OGB's [N, 1] is one column of the same values).
Tensor labelVector(const Tensor& y) {
  Tensor out = Tensor::empty({y.dim(0)}, DType::I64);
  std::copy(y.data<int64_t>(), y.data<int64_t>() + y.dim(0), out.data<int64_t>());
  return out;
}

}  // namespace

bool heteroDataGiven(const NodeSettings& s) { return !s.data.empty() && isOgbHeteroLayout(s.data); }

HeteroNodeData readHeteroNodeData(const NodeSettings& s) {
  HeteroNodeData d;
  // Full-batch training allocates buffers of many sizes, each once a step: the buffer pool, which recycles buffers
  // of equal size only, would hold all of them beside the ones in use (R-GCN, 100k-paper ogbn-mag-shaped graph:
  // 2.53 GB peak after 3 epochs against 1.85 GB without it, for epochs ~20% faster). The large ones are mapped
  // and returned (HeapTuning.h).
  BufferPool::setCapacity(0);
  mapLargeBlocksForFullBatchTraining();
  Stopwatch loadTime;
  OgbHeteroOptions o;
  o.normalization = *parseFeatureNormalization(s.normalizeFeatures);  // checked by checkNodeFlags
  o.addInverseEdges = *parseAddInverseEdges(s.addInverseEdges);      // likewise
  o.additionalNodeFiles = s.nodeFiles();
  o.toUndirected = true;  // PyG's T.ToUndirected(): rev_ relations, same-type ones merged
  d.dataset = OgbHeteroDataset::load(s.data, o);
  if (s.featureless == "mean") d.meanFilledTypes = fillFeaturelessByNeighbourMean(d.dataset.graph);
  const HeteroGraph& g = d.dataset.graph;
  d.targetType = chooseTargetType(g, s.targetType);
  const NodeStore& target = g.node(d.targetType);
  if (!target.hasSplit || target.trainIdx.empty())
    throw InputError(s.data + "/split", 0,
                     "node type '" + d.targetType + "' has labels but no training nodes in the split to learn from");
  ToHomogeneousOptions ho;
  ho.nodeAttrs = std::vector<std::string>{};  // each type's features are read on their own (HeteroRGCN)
  ho.edgeAttrs = std::vector<std::string>{};
  d.graph = toHomogeneous(g, ho);
  d.targetOffset = d.graph.nodeOffset(d.targetType);
  d.targetNodes = target.numNodes;
  d.numClasses = d.dataset.numClasses.at(d.targetType);
  for (const std::string& type : d.graph.nodeTypeNames) d.features.push_back(g.node(type).x);
  d.y = labelVector(target.y);
  d.trainMask = Tensor::zeros({d.targetNodes}, DType::U8);
  for (int64_t i : target.trainIdx) d.trainMask.data<uint8_t>()[i] = 1;
  d.trainIdx = target.trainIdx;
  d.validIdx = target.validIdx;
  d.testIdx = target.testIdx;
  d.loadMs = loadTime.ms();
  return d;
}

void printHeteroNodeData(const HeteroNodeData& d, const NodeSettings& s) {
  if (s.training.quiet) return;
  const HeteroGraph& g = d.dataset.graph;
  std::string types;
  for (const std::string& type : d.graph.nodeTypeNames) {
    const NodeStore& n = g.node(type);
    const bool mean = std::count(d.meanFilledTypes.begin(), d.meanFilledTypes.end(), type) > 0;
    types += (types.empty() ? "" : ", ") + type + " " + std::to_string(n.numNodes) +
             (n.x.defined() ? " (" + std::to_string(n.x.dim(1)) + (mean ? " neighbour-mean" : "") + " features)"
                            : " (embedded)");
  }
  std::fprintf(stderr,
               "%s: heterogeneous, %lld nodes [%s], %lld edges of %zu relations (with PyG's ToUndirected), target "
               "'%s': %lld classes, split %zu/%zu/%zu, loaded in %.0f ms, %d threads\n",
               d.dataset.name.c_str(), static_cast<long long>(d.graph.numNodes), types.c_str(),
               static_cast<long long>(g.numEdges()), d.graph.edgeTypeNames.size(), d.targetType.c_str(),
               static_cast<long long>(d.numClasses), d.trainIdx.size(), d.validIdx.size(), d.testIdx.size(),
               d.loadMs, numThreads());
}

void addHeteroNodeDataJson(nlohmann::json& j, const HeteroNodeData& d) {
  const HeteroGraph& g = d.dataset.graph;
  j["dataset"] = d.dataset.name;
  j["heterogeneous"] = true;
  j["target_type"] = d.targetType;
  j["num_classes"] = d.numClasses;
  j["num_nodes"] = d.graph.numNodes;
  j["num_edges"] = g.numEdges();
  j["node_types"] = nlohmann::json::object();
  for (const std::string& type : d.graph.nodeTypeNames) {
    const NodeStore& n = g.node(type);
    j["node_types"][type] = {{"num_nodes", n.numNodes}, {"num_features", n.x.defined() ? n.x.dim(1) : 0}};
  }
  j["neighbour_mean_features"] = d.meanFilledTypes;  // --featureless mean: the types given them
  for (const EdgeType& t : d.graph.edgeTypeNames) j["edge_types"].push_back(t.str());
  j["num_relations"] = d.graph.edgeTypeNames.size();
  j["inverse_edges_added"] = d.dataset.inverseEdgesAdded;
  // As a homogeneous run's: the normalisation of the classified nodes' features ("none" for a target type without
  // features); every featured type's beside it.
  const auto target = d.dataset.normalization.find(d.targetType);
  j["normalize_features"] =
      target == d.dataset.normalization.end() ? "none" : featureNormalizationName(target->second);
  j["normalize_features_by_type"] = nlohmann::json::object();
  for (const auto& [type, n] : d.dataset.normalization)
    j["normalize_features_by_type"][type] = featureNormalizationName(n);
  j["feature_layout"] = "dense";
  j["node_files"] = nlohmann::json::object();  // OGB's additional node files read (node_year): width and range
  for (const std::string& type : d.graph.nodeTypeNames)
    for (const auto& [name, t] : g.node(type).nodeFiles) {
      const auto v = t.flat<int64_t>();
      j["node_files"][type + "/" + name] = {{"width", t.dim(1)}, {"min", v.minCoeff()}, {"max", v.maxCoeff()}};
    }
  j["load_ms"] = d.loadMs;
}

}  // namespace gnn::app
