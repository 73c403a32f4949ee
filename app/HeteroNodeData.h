// HeteroNodeData: node_property's heterogeneous graph as it trains on it: the folder in OGB's heterogeneous raw
// layout (data/OgbHeteroDataset.h) read with each featured type's features normalised, PyG's T.ToUndirected()
// applied (a rev_ relation beside every relation between two types, so that authors also receive their papers'
// messages), laid out as one typed graph (data/HeteroToHomogeneous.h), and the node type it classifies: the one
// with labels, or --target-type's among several.
//
//   app::HeteroNodeData data = app::readHeteroNodeData(settings);   // settings.data: the folder
//   data.graph.edgeIndex;  data.graph.edgeType;                       // every relation, offsets applied
//   data.y;  data.trainIdx;                                           // the target type's own ids
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/NodeFlags.h"
#include "data/HeteroToHomogeneous.h"
#include "data/OgbHeteroDataset.h"
#include "loaders/HeteroClusterData.h"
#include "loaders/HeteroNeighborSampler.h"

namespace gnn::app {

struct HeteroNodeData {
  OgbHeteroDataset dataset;  ///< after toUndirected
  HomogeneousGraph graph;    ///< the typed layout (no combined features: each type's are read on their own)
  std::string targetType;
  /// The target type's rows in the layout are [targetOffset, targetOffset + targetNodes).
  int64_t targetOffset = 0, targetNodes = 0, numClasses = 0;
  /// Per node type, in the layout's order: its features float32 [N_t, F_t], undefined for a type without.
  std::vector<Tensor> features;
  /// The featureless types given their neighbours' mean features (--featureless mean), in the order filled.
  std::vector<std::string> meanFilledTypes;
  /// The target type's labels int64 [N_t], its training nodes as a uint8 mask, its split's ids (its own).
  Tensor y, trainMask;
  std::vector<int64_t> trainIdx, validIdx, testIdx;
  double loadMs = 0;
  /// --loader neighbor: every edge type's incoming edges indexed once for all seeds (app/HeteroNodeBatches.h).
  std::shared_ptr<const HeteroNeighborSampler> sampler;
  double samplerMs = 0;
  /// --loader cluster: the METIS clusters of every node of every type, made once for all seeds.
  std::shared_ptr<const HeteroClusterData> clusters;
  double partitionMs = 0;
};

/// Whether --data names a folder in OGB's heterogeneous layout (an empty --data is the shipped Cora: no).
bool heteroDataGiven(const NodeSettings& s);
/// Reads --data; the target type from its labelled types and --target-type (UsageError listing them when
/// --target-type names another type, or is missing among several); InputError for a target without a split.
HeteroNodeData readHeteroNodeData(const NodeSettings& s);
/// The dataset's line on stderr (unless --quiet): types, relations, target, classes, split, load time, threads.
void printHeteroNodeData(const HeteroNodeData& data, const NodeSettings& s);
/// The data's keys of --json: dataset, heterogeneous, target_type, num_classes, num_nodes, num_edges, node_types
/// (nodes and features of each), edge_types, num_relations, inverse_edges_added, normalize_features (the target
/// type's) and normalize_features_by_type, feature_layout, node_files ("<type>/<name>"), load_ms.
void addHeteroNodeDataJson(nlohmann::json& j, const HeteroNodeData& data);

}  // namespace gnn::app
