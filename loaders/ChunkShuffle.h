// ChunkShuffle: an epoch order for items read from a memory-mapped file larger than the memory that caches it.
// A full shuffle reads the file at random, a page fault (and from disk, a seek) for every few hundred bytes; a
// shuffle buffer reads it in order but keeps a sorted file's order (position in the epoch follows position in
// the file). Shuffled chunks sit between: the items are cut into chunks of `chunk` consecutive items, the chunks
// are visited in a seeded random order, and the items of `window` consecutive chunks of that order are shuffled
// together. Reads stay sequential within a chunk (a chunk of 1,024 PCQM4Mv2-like molecules is about 1 MB of
// each array), the chunks of a window can be read ahead as a whole and released once the window is done, and an
// item's place in the epoch is independent of its place in the file (docs/loaders.md gives the measurements).
//
//   ChunkShuffle cs{1024, 16};                      // chunks of 1,024 items, 16 chunks shuffled together
//   Generator g(seed);
//   ChunkShuffle::Epoch e = cs.plan(n, g);          // e.order: a permutation of 0..n-1
//   for (size_t w = 0; w + 1 < e.windowStarts.size(); ++w)
//     for (int64_t c : e.windowChunks(w)) ...       // chunk c holds items [c * 1024, min(n, (c + 1) * 1024))
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gnn/system/Random.h"

namespace gnn {

struct ChunkShuffle {
  /// Items per chunk; 0: no chunks (the loaders' full shuffle).
  int64_t chunk = 0;
  /// Chunks whose items are shuffled together (>= 1).
  int64_t window = 1;

  bool enabled() const { return chunk > 0; }
  /// Items in a window (the last one may hold fewer).
  int64_t windowItems() const { return chunk * window; }
  int64_t numChunks(int64_t n) const { return chunk > 0 ? (n + chunk - 1) / chunk : 0; }
  /// Items [begin, end) of chunk c of n items.
  int64_t chunkBegin(int64_t c) const { return c * chunk; }
  int64_t chunkEnd(int64_t c, int64_t n) const { return c * chunk + chunk < n ? c * chunk + chunk : n; }

  struct Epoch {
    std::vector<int64_t> order;         // a permutation of 0..n-1
    std::vector<int64_t> chunks;        // the chunks in the order they are visited
    std::vector<int64_t> windowStarts;  // window w is order[windowStarts[w], windowStarts[w + 1])
    int64_t window = 1;
    /// The chunks of window w.
    std::vector<int64_t> windowChunks(size_t w) const;
    /// The window holding order position p.
    size_t windowOf(int64_t p) const;
  };
  /// The epoch's order of n items, drawn from g (shuffle false: 0..n-1 in chunks and windows of the file's
  /// order, nothing drawn). Throws std::invalid_argument unless chunk >= 1 and window >= 1.
  Epoch plan(int64_t n, Generator& g, bool shuffle = true) const;
};

}  // namespace gnn
