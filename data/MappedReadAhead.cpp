#include "data/MappedReadAhead.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "data/MappedFileGuard.h"
#include "gnn/system/Check.h"

namespace gnn {

namespace {
int64_t at(const unsigned char* ptr, int64_t i) {
  int64_t v;
  std::memcpy(&v, ptr + i * 8, 8);
  return v;
}
uintptr_t pageSize() {
  static const uintptr_t size = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  return size;
}
}  // namespace

MappedReadAhead::MappedReadAhead(std::shared_ptr<const NpzDataset> dataset, std::vector<int64_t> positions)
    : dataset_(std::move(dataset)), positions_(std::move(positions)) {
  GNN_CHECK_ARG(dataset_ != nullptr, "MappedReadAhead: no dataset");
  const NpzFile& file = dataset_->file();
  const int64_t graphs = static_cast<int64_t>(dataset_->size());
  for (int64_t p : positions_)
    GNN_CHECK_ARG(p >= 0 && p < graphs, "MappedReadAhead: position ", p, " is not a graph of ", file.path());
  nodePtr_ = file.get("node_ptr").data;
  edgePtr_ = file.get("edge_ptr").data;
  if (file.has("pair_ptr")) pairPtr_ = file.get("pair_ptr").data;
  if (file.has("smiles_ptr")) smilesPtr_ = file.get("smiles_ptr").data;
  const int64_t N = at(nodePtr_, graphs), E = at(edgePtr_, graphs);
  const int64_t P = pairPtr_ ? at(pairPtr_, graphs) : 0, S = smilesPtr_ ? at(smilesPtr_, graphs) : 0;
  totalEdges_ = E;
  // What each per-molecule array is indexed by (docs/datasets.md); the rest (offsets, splits, metadata) is not
  // advised.
  const std::pair<const char*, Unit> table[] = {
      {"x", Unit::Node},          {"pos", Unit::Node},         {"z", Unit::Node},
      {"in_degree", Unit::Node},  {"edge_index", Unit::Edge},  {"edge_attr", Unit::Edge},
      {"spatial_pos", Unit::Pair}, {"path_via", Unit::Pair},   {"edge_input", Unit::Pair},
      {"y", Unit::Graph},         {"y_mask", Unit::Graph},     {"source_index", Unit::Graph},
      {"source_line", Unit::Graph}, {"smiles", Unit::Smiles}};
  for (const auto& [name, unit] : table) {
    if (!file.has(name)) continue;
    const NpzFile::Array& a = file.get(name);
    if (a.bytes == 0) continue;
    // Only the file's own mapping: an array copied into aligned memory must not be advised (MADV_DONTNEED
    // would zero it).
    const std::string where = MappedFileGuard::pathAt(a.data);
    if (where != file.path() || MappedFileGuard::pathAt(a.data + a.bytes - 1) != file.path()) continue;
    const int64_t units = unit == Unit::Node ? N : unit == Unit::Edge ? E : unit == Unit::Pair ? P
                          : unit == Unit::Smiles ? S : graphs;
    const int parts = std::string(name) == "edge_index" ? 2 : 1;
    if (units <= 0) continue;
    arrays_.push_back({name, a.data, a.bytes, unit, a.bytes / static_cast<uint64_t>(units * parts), parts});
  }
}

int64_t MappedReadAhead::size() const {
  return positions_.empty() ? static_cast<int64_t>(dataset_->size()) : static_cast<int64_t>(positions_.size());
}

void MappedReadAhead::graphsOf(int64_t begin, int64_t end, int64_t& g0, int64_t& g1) const {
  if (positions_.empty()) {
    g0 = begin;
    g1 = end;
    return;
  }
  // Splits are sorted, so the run's first and last molecules bound it; any order is covered all the same.
  g0 = positions_[static_cast<size_t>(begin)];
  g1 = positions_[static_cast<size_t>(end - 1)] + 1;
  if (g1 <= g0 || end - begin > 2) {
    for (int64_t i = begin; i < end; ++i) {
      g0 = std::min(g0, positions_[static_cast<size_t>(i)]);
      g1 = std::max(g1, positions_[static_cast<size_t>(i)] + 1);
    }
  }
}

int64_t MappedReadAhead::unitAt(Unit u, int64_t g) const {
  switch (u) {
    case Unit::Node: return at(nodePtr_, g);
    case Unit::Edge: return at(edgePtr_, g);
    case Unit::Pair: return at(pairPtr_, g);
    case Unit::Smiles: return at(smilesPtr_, g);
    case Unit::Graph: break;
  }
  return g;
}

void MappedReadAhead::advise(int64_t begin, int64_t end, int advice, std::atomic<int64_t>& counter) const {
  begin = std::max<int64_t>(begin, 0);
  end = std::min(end, size());
  if (begin >= end || arrays_.empty()) return;
  int64_t g0 = 0, g1 = 0;
  graphsOf(begin, end, g0, g1);
  const uintptr_t page = pageSize();
  for (const Advised& a : arrays_) {
    const uint64_t u0 = static_cast<uint64_t>(unitAt(a.unit, g0)), u1 = static_cast<uint64_t>(unitAt(a.unit, g1));
    const uint64_t rowUnits = a.bytes / a.rowBytes / static_cast<uint64_t>(a.parts);
    for (int part = 0; part < a.parts; ++part) {
      const uint64_t first = (static_cast<uint64_t>(part) * rowUnits + u0) * a.rowBytes;
      const uint64_t last = (static_cast<uint64_t>(part) * rowUnits + u1) * a.rowBytes;
      if (last <= first) continue;
      // Whole pages: the mapping starts on a page and ends on one (mmap rounds its length up), so the rounded
      // range stays inside it.
      const uintptr_t b = reinterpret_cast<uintptr_t>(a.data + first) & ~(page - 1);
      const uintptr_t e = (reinterpret_cast<uintptr_t>(a.data + last) + page - 1) & ~(page - 1);
      if (advice == MADV_DONTNEED) {
#ifdef MADV_COLD
        ::madvise(reinterpret_cast<void*>(b), e - b, MADV_COLD);  // EINVAL before Linux 5.4: the hint is skipped
#endif
      }
      if (::madvise(reinterpret_cast<void*>(b), e - b, advice) == 0) counter += static_cast<int64_t>(e - b);
    }
  }
}

void MappedReadAhead::willNeed(int64_t begin, int64_t end) const { advise(begin, end, MADV_WILLNEED, willNeedBytes_); }

void MappedReadAhead::release(int64_t begin, int64_t end) const { advise(begin, end, MADV_DONTNEED, releasedBytes_); }

void MappedReadAhead::releaseAll() const {
  const uintptr_t page = pageSize();
  for (const Advised& a : arrays_) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(a.data) & ~(page - 1);
    const uintptr_t e = (reinterpret_cast<uintptr_t>(a.data + a.bytes) + page - 1) & ~(page - 1);
    if (::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED) == 0) releasedBytes_ += static_cast<int64_t>(e - b);
  }
}

void MappedReadAhead::setRandom(bool random) const {
  const uintptr_t page = pageSize();
  for (const Advised& a : arrays_) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(a.data) & ~(page - 1);
    const uintptr_t e = (reinterpret_cast<uintptr_t>(a.data + a.bytes) + page - 1) & ~(page - 1);
    ::madvise(reinterpret_cast<void*>(b), e - b, random ? MADV_RANDOM : MADV_NORMAL);
  }
}

}  // namespace gnn
