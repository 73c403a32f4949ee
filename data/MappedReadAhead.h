// MappedReadAhead: page-cache advice for an NpzDataset read in runs of molecules (loaders/ChunkShuffle.h), so
// that a file larger than memory is read ahead in large sequential pieces and its pages are not held by the
// process once read. Items are molecules as a loader numbers them: item i is dataset graph positions[i] (a
// split's sorted positions; empty: item i is graph i). For a run of items it advises every per-molecule array
// of the file (atoms, bonds, pairs, labels, SMILES) over the bytes those molecules occupy:
//
//   willNeed(begin, end)  MADV_WILLNEED: the kernel starts reading them now (read-ahead, from the loader thread)
//   release(begin, end)   MADV_COLD (reclaimed first; Linux >= 5.4) and MADV_DONTNEED: unmapped from this
//                         process (a later read faults them back in from the page cache, the same bytes)
//   releaseAll()          MADV_DONTNEED on every per-molecule array (after the open-time checks, between epochs)
//   setRandom(true)       MADV_RANDOM: no read-around on a fault (a full shuffle reads a few hundred bytes at a time)
//
// Advice never changes what is read: graphs are the same bits with or without it. The offsets (node_ptr, ...)
// are left alone (every read uses them). Only bytes of the file's own mapping are advised: an array NpzFile
// copied into memory of its own (a misaligned NumPy file) is skipped, as is everything when the mapping is not
// registered with MappedFileGuard (which tells where it lies).
//
//   auto ra = std::make_shared<MappedReadAhead>(dataset, split.train);
//   ra->releaseAll();                       // the pages the CRC and structure checks touched
//   ra->willNeed(0, 16384);  ...  ra->release(0, 16384);
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/NpzDataset.h"

namespace gnn {

class MappedReadAhead {
 public:
  MappedReadAhead(std::shared_ptr<const NpzDataset> dataset, std::vector<int64_t> positions = {});

  /// Items the advice covers (positions.size(), or the dataset's size).
  int64_t size() const;
  void willNeed(int64_t begin, int64_t end) const;
  void release(int64_t begin, int64_t end) const;
  void releaseAll() const;
  void setRandom(bool random) const;
  /// Whether any array can be advised (false: every call does nothing).
  bool active() const { return !arrays_.empty(); }

  /// Bytes advised so far, rounded out to pages (tests, reports).
  int64_t willNeedBytes() const { return willNeedBytes_.load(); }
  int64_t releasedBytes() const { return releasedBytes_.load(); }

 private:
  enum class Unit { Graph, Node, Edge, Pair, Smiles };
  struct Advised {
    std::string name;
    const unsigned char* data;
    uint64_t bytes;
    Unit unit;
    uint64_t rowBytes;  // bytes per unit (edge_index: per unit of each of its two rows)
    int parts;          // edge_index: 2 rows [2, E]; else 1
  };
  // Dataset graphs [g0, g1) holding items [begin, end).
  void graphsOf(int64_t begin, int64_t end, int64_t& g0, int64_t& g1) const;
  void advise(int64_t begin, int64_t end, int advice, std::atomic<int64_t>& counter) const;
  int64_t unitAt(Unit u, int64_t g) const;

  std::shared_ptr<const NpzDataset> dataset_;
  std::vector<int64_t> positions_;
  std::vector<Advised> arrays_;
  const unsigned char* nodePtr_ = nullptr;
  const unsigned char* edgePtr_ = nullptr;
  const unsigned char* pairPtr_ = nullptr;
  const unsigned char* smilesPtr_ = nullptr;
  int64_t totalEdges_ = 0;
  mutable std::atomic<int64_t> willNeedBytes_{0}, releasedBytes_{0};
};

}  // namespace gnn
