#include "device/StageSplit.h"

#include "gnn/system/Check.h"

namespace gnn {

StageBlocks stageRanges(const std::vector<std::string>& blockNames, const std::vector<std::string>& splits) {
  std::string names;
  for (const std::string& n : blockNames) names += (names.empty() ? "" : ", ") + n;
  std::vector<int64_t> starts{0};
  for (const std::string& split : splits) {
    int64_t i = -1;
    for (size_t b = 0; b < blockNames.size() && i < 0; ++b)
      if (blockNames[b] == split) i = static_cast<int64_t>(b);
    GNN_CHECK_ARG(i >= 0, "the model has no block '", split, "' (blocks: ", names, ")");
    GNN_CHECK_ARG(i > 0, "pipeline split '", split, "' is the model's first block, which would leave an empty first "
                  "stage; split at a later block (blocks in order: ", names, ")");
    GNN_CHECK_ARG(i > starts.back(), "pipeline split '", split, "' is out of order or repeated: splits must name "
                  "blocks in model order (blocks in order: ", names, ")");
    starts.push_back(i);
  }
  StageBlocks out;
  for (size_t i = 0; i < starts.size(); ++i)
    out.push_back({starts[i], i + 1 < starts.size() ? starts[i + 1] : static_cast<int64_t>(blockNames.size())});
  return out;
}

std::string stageLabel(const std::vector<std::string>& blockNames, int64_t first, int64_t last) {
  std::string s = blockNames[static_cast<size_t>(first)];
  if (last - first > 1) s += ".." + blockNames[static_cast<size_t>(last - 1)];
  return s;
}

}  // namespace gnn
