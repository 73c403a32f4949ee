// EpochOrderFlags: how the molecule programs read a training set stored in a memory-mapped .npz: the epoch order
// (--epoch-order: a full shuffle, or shuffled chunks of consecutive molecules, loaders/ChunkShuffle.h) and the
// page-cache advice (--read-ahead: data/MappedReadAhead.h). "auto" takes chunks when the file is larger than
// half of this machine's memory, where a full shuffle would read it from disk a page at a time; smaller files
// (every shipped set) keep the full shuffle, so their runs are the same bits as before. The choice is made once
// per run and kept in its checkpoints (RunConfig::deriveOnce).
//
//   app::EpochOrderFlags order;
//   order.addTo(prog.group("Batches"));
//   order.bind(config);
//   loaderOptions.chunks = order.chunks(order.resolve(file.fileBytes()));
#pragma once
#include <cstdint>
#include <string>

#include "app/Program.h"
#include "app/RunConfig.h"
#include "loaders/ChunkShuffle.h"

namespace gnn::app {

struct EpochOrderFlags {
  std::string order = "auto";  // --epoch-order auto | shuffle | chunks
  int64_t chunk = 1024;        // --shuffle-chunk: molecules per chunk
  int64_t window = 64;         // --shuffle-window: chunks shuffled together
  std::string readAhead = "on";  // --read-ahead on | off

  void addTo(po::options_description& group);
  /// Batching flags: kept by checkpoints, changeable by an evaluation-only run (RunConfig::bindOutsideModel).
  void bind(RunConfig& config);
  /// UsageError naming the flag for a value out of range.
  void check() const;
  /// "shuffle" or "chunks" for a training set read from a file of `fileBytes` (0: not a mapped file) on a machine
  /// with `memoryBytes` of memory.
  std::string resolve(uint64_t fileBytes, double memoryBytes) const;
  /// The loader's chunks for a resolved order (no chunks for "shuffle").
  ChunkShuffle chunks(const std::string& resolved) const;
  bool advise() const { return readAhead == "on"; }
};

}  // namespace gnn::app
