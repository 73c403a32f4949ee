#include "models/KeyedDropoutScope.h"

#include <stdexcept>
#include <string>

#include "gnn/ops/KeyedDropout.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Random.h"

namespace gnn {

namespace {
thread_local KeyedDropoutScope* tCurrent = nullptr;

// Padding graph g's key: apart from any real molecule's only by chance, which changes nothing (its rows reach
// no real output).
uint64_t paddingGraphKey(int64_t g) { return Generator::mix64(0x70616464696e67ULL + static_cast<uint64_t>(g)); }

// Row keys of rows grouped by offsets [groups + 1] (ptr, edgePtr): keyedDropoutRow(group key, row - offset).
std::vector<uint64_t> groupedRowKeys(const Tensor& offsets, int64_t rows, const std::vector<uint64_t>& graphKeys,
                                     const char* what) {
  if (!offsets.defined() || offsets.numel() != static_cast<int64_t>(graphKeys.size()) + 1)
    throw std::invalid_argument(std::string("KeyedDropoutScope: the batch's ") + what + " offsets do not match its " +
                                std::to_string(graphKeys.size()) + " graphs");
  const int64_t* off = offsets.data<int64_t>();
  std::vector<uint64_t> keys(static_cast<size_t>(rows));
  for (size_t g = 0; g < graphKeys.size(); ++g)
    for (int64_t r = off[g]; r < off[g + 1] && r < rows; ++r)
      keys[static_cast<size_t>(r)] = keyedDropoutRow(graphKeys[g], static_cast<uint64_t>(r - off[g]));
  // Rows past the last offset (none in a well-formed batch) belong to no graph: keyed apart by their index.
  for (int64_t r = off[graphKeys.size()]; r < rows; ++r)
    keys[static_cast<size_t>(r)] = keyedDropoutRow(paddingGraphKey(-1), static_cast<uint64_t>(r));
  return keys;
}
}  // namespace

KeyedDropoutScope::KeyedDropoutScope(const Batch& batch, std::vector<uint64_t> graphKeys, uint64_t seed,
                                     uint64_t sample)
    : batch_(batch), graphKeys_(std::move(graphKeys)), seed_(seed), sample_(sample), previous_(tCurrent) {
  if (static_cast<int64_t>(graphKeys_.size()) != batch.numRealGraphs)
    throw std::invalid_argument("KeyedDropoutScope: " + std::to_string(graphKeys_.size()) + " graph keys for a batch of " +
                                std::to_string(batch.numRealGraphs) + " real graphs");
  for (int64_t g = batch.numRealGraphs; g < batch.numGraphs; ++g) graphKeys_.push_back(paddingGraphKey(g));
  tCurrent = this;
}

KeyedDropoutScope::~KeyedDropoutScope() { tCurrent = previous_; }

KeyedDropoutScope* KeyedDropoutScope::current() { return tCurrent; }

const std::vector<uint64_t>& KeyedDropoutScope::rowKeys(RowLevel level) {
  std::vector<uint64_t>& keys = keys_[static_cast<int>(level)];
  if (!keys.empty()) return keys;
  switch (level) {
    case RowLevel::Node: keys = groupedRowKeys(batch_.ptr, batch_.numNodes, graphKeys_, "node"); break;
    case RowLevel::Edge: keys = groupedRowKeys(batch_.edgePtr, batch_.numEdges, graphKeys_, "edge"); break;
    case RowLevel::Graph:
      for (uint64_t k : graphKeys_) keys.push_back(keyedDropoutRow(k, 0));
      break;
  }
  return keys;
}

Variable KeyedDropoutScope::apply(const Variable& a, double p, RowLevel level) {
  const uint64_t site = site_++;
  return keyedDropout(a, p, rowKeys(level), keyedDropoutStream(seed_, sample_, site));
}

Variable layerDropout(const Variable& a, double p, bool training, RowLevel level) {
  if (KeyedDropoutScope* mc = KeyedDropoutScope::current()) return mc->apply(a, p, level);
  return dropout(a, p, training);
}

}  // namespace gnn
