#include "app/EvalPaddingReport.h"

#include <cstdio>
#include <sstream>
#include <utility>

#include "app/MoleculePredictions.h"

namespace gnn::app {

nlohmann::json fixedToJson(const FixedSizeOptions& f) {
  return {{"num_nodes", f.numNodes}, {"num_edges", f.numEdges}, {"num_graphs", f.numGraphs},
          {"max_nodes_per_graph", f.maxNodesPerGraph}};
}

EvalPaddingReport::EvalPaddingReport(std::shared_ptr<const Dataset> dataset, const FixedSizeOptions& evalFixed,
                                     int64_t maxBuckets, bool nodePairs, std::string program)
    : dataset_(std::move(dataset)),
      evalFixed_(evalFixed),
      maxBuckets_(maxBuckets),
      nodePairs_(nodePairs),
      program_(std::move(program)) {}

const ShapeBuckets& EvalPaddingReport::bucketsFor(const std::string& set, const std::vector<int64_t>& positions) {
  auto it = buckets_.find(set);
  if (it == buckets_.end())
    it = buckets_.emplace(set, inferenceBuckets(*dataset_, positions, evalFixed_, maxBuckets_, nodePairs_)).first;
  return it->second;
}

std::optional<std::string> EvalPaddingReport::note(const std::string& set, const std::vector<int64_t>& positions,
                                                   const PaddingReport& padding) {
  const bool first = padding_.count(set) == 0;
  padding_[set] = padding;
  if (!first) return std::nullopt;
  return describe(set, positions, padding);
}

std::string EvalPaddingReport::describe(const std::string& set, const std::vector<int64_t>& positions,
                                        const PaddingReport& padding) {
  padding_[set] = padding;
  const ShapeBuckets& buckets = bucketsFor(set, positions);
  // Planned, not run: the batches one shape would give the same molecules.
  const PaddingReport one = plannedPadding(dataset_, positions, ShapeBuckets::single(evalFixed_), nodePairs_);
  std::vector<int64_t> molecules(static_cast<size_t>(buckets.size()), 0);
  for (int64_t i : positions) {
    const int64_t k =
        buckets.bucketOf(dataset_->numNodes(static_cast<size_t>(i)), dataset_->numEdges(static_cast<size_t>(i)));
    if (k >= 0) ++molecules[static_cast<size_t>(k)];
  }
  nlohmann::json j = padding.toJson();
  j["shapes"] = nlohmann::json::array();
  for (size_t k = 0; k < molecules.size(); ++k) {
    nlohmann::json shape = fixedToJson(buckets.shapes()[k]);
    shape["molecules"] = molecules[k];
    j["shapes"].push_back(shape);
  }
  j["single_shape"] = fixedToJson(evalFixed_);
  j["single_shape_padding"] = one.toJson();
  json_[set] = j;
  auto efficiency = [this](const PaddingReport& q) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "atoms %.1f%% real", 100 * q.nodeEfficiency());
    std::string t = buf;
    if (nodePairs_ && q.totalNodePairs > 0) {
      std::snprintf(buf, sizeof buf, ", atom pairs %.1f%% real", 100 * q.nodePairEfficiency());
      t += buf;
    }
    return t;
  };
  std::ostringstream line;
  line << program_ << ": " << set << " batches (" << positions.size() << " molecules) in " << buckets.size()
       << (buckets.size() == 1 ? " shape" : " shapes") << " (--eval-buckets " << maxBuckets_
       << "): " << efficiency(padding);
  if (buckets.size() > 1) line << "; one shape: " << efficiency(one);
  return line.str();
}

void EvalPaddingReport::addTo(nlohmann::json& results) const {
  results["eval_buckets"] = maxBuckets_;
  results["eval_padding"] = json_;
  PaddingReport all;
  for (const auto& [set, r] : padding_) all.merge(r);
  results["eval_node_efficiency"] = all.nodeEfficiency();
  results["eval_edge_efficiency"] = all.edgeEfficiency();
  if (all.totalNodePairs > 0) results["eval_node_pair_efficiency"] = all.nodePairEfficiency();
}

}  // namespace gnn::app
