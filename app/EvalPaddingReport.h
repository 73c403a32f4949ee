// EvalPaddingReport: the padding of a molecule run's evaluation batches, per evaluated set ("valid", "test"): the
// batch shapes of each set (--eval-buckets, chosen once from its molecules' sizes), the padding of its last pass,
// and that padding in the results beside what one shape gives the same molecules.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "data/Dataset.h"
#include "loaders/FixedSizeOptions.h"
#include "loaders/PaddingReport.h"
#include "loaders/ShapeBuckets.h"

namespace gnn::app {

/// A batch shape as the run's configuration and results record it (num_nodes, num_edges, num_graphs,
/// max_nodes_per_graph).
nlohmann::json fixedToJson(const FixedSizeOptions& f);

class EvalPaddingReport {
 public:
  /// The sets are molecules of `dataset` batched within `evalFixed` (every molecule fits it) in at most
  /// `maxBuckets` shapes (--eval-buckets); `nodePairs`: the model reads node-pair blocks (Graphormer), whose
  /// padding is counted and which the shapes minimise. `program` begins the lines of text.
  EvalPaddingReport(std::shared_ptr<const Dataset> dataset, const FixedSizeOptions& evalFixed, int64_t maxBuckets,
                    bool nodePairs, std::string program);

  /// The shapes of `set`, whose molecules are those at `positions`: chosen the first time, the same ever after.
  const ShapeBuckets& bucketsFor(const std::string& set, const std::vector<int64_t>& positions);
  /// `padding`, that of a pass over `set`, as the set's last; the first time, the line describe() gives (to
  /// show once per set), else nothing.
  std::optional<std::string> note(const std::string& set, const std::vector<int64_t>& positions,
                                  const PaddingReport& padding);
  /// `padding`, that of `set`'s batches, kept as the set's padding and its JSON (with the shapes, the molecules
  /// each holds, and one shape's planned padding), and as one line of text.
  std::string describe(const std::string& set, const std::vector<int64_t>& positions, const PaddingReport& padding);
  /// The results' keys: eval_buckets, eval_padding (each set's JSON), and the efficiencies over every set's last
  /// pass (eval_node_efficiency, eval_edge_efficiency, eval_node_pair_efficiency with node-pair blocks).
  void addTo(nlohmann::json& results) const;

 private:
  std::shared_ptr<const Dataset> dataset_;
  FixedSizeOptions evalFixed_;
  int64_t maxBuckets_;
  bool nodePairs_;
  std::string program_;
  std::map<std::string, ShapeBuckets> buckets_;
  std::map<std::string, PaddingReport> padding_;
  nlohmann::json json_ = nlohmann::json::object();
};

}  // namespace gnn::app
