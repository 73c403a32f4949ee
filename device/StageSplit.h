// StageSplit: a model's blocks cut into pipeline stages at named blocks, and a stage's label ("input..layers/1").
// The planner and the engine both split this way, so a split refused by one is refused by the other in the same
// words.
//
//   StageBlocks st = stageRanges({"input", "layers/0", "layers/1", "head"}, {"layers/1"});  // {{0, 2}, {2, 4}}
//   stageLabel(names, 0, 2);                                                            // "input..layers/0"
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gnn {

/// Stages as block ranges [first, last).
using StageBlocks = std::vector<std::pair<int64_t, int64_t>>;

/// Stages from block names: each split starts a new stage at that block. Throws std::invalid_argument naming the
/// split and listing the blocks when a split is not a block, is the first block, or is out of model order.
StageBlocks stageRanges(const std::vector<std::string>& blockNames, const std::vector<std::string>& splits);

/// "first" for a one-block stage, "first..last" otherwise (blocks [first, last)).
std::string stageLabel(const std::vector<std::string>& blockNames, int64_t first, int64_t last);

}  // namespace gnn
