#include "loaders/ChunkShuffle.h"

#include <algorithm>
#include <numeric>

#include "gnn/system/Check.h"
#include "loaders/EpochSampler.h"

namespace gnn {

std::vector<int64_t> ChunkShuffle::Epoch::windowChunks(size_t w) const {
  const size_t first = w * static_cast<size_t>(window);
  const size_t last = std::min(chunks.size(), first + static_cast<size_t>(window));
  return first < last ? std::vector<int64_t>(chunks.begin() + static_cast<std::ptrdiff_t>(first),
                                             chunks.begin() + static_cast<std::ptrdiff_t>(last))
                      : std::vector<int64_t>();
}

size_t ChunkShuffle::Epoch::windowOf(int64_t p) const {
  auto it = std::upper_bound(windowStarts.begin(), windowStarts.end(), p);
  return static_cast<size_t>(std::max<std::ptrdiff_t>(0, it - windowStarts.begin() - 1));
}

ChunkShuffle::Epoch ChunkShuffle::plan(int64_t n, Generator& g, bool shuffle) const {
  GNN_CHECK_ARG(chunk >= 1 && window >= 1, "ChunkShuffle: chunk (", chunk, ") and window (", window,
                ") must be >= 1");
  Epoch e;
  e.window = window;
  e.chunks.resize(static_cast<size_t>(numChunks(n)));
  std::iota(e.chunks.begin(), e.chunks.end(), int64_t{0});
  // The chunk order first, then each window's items, all from the one stream: the epoch depends on (g, n,
  // chunk, window) only.
  if (shuffle) shuffleInPlace(e.chunks, g);
  e.order.reserve(static_cast<size_t>(n));
  for (size_t first = 0; first < e.chunks.size(); first += static_cast<size_t>(window)) {
    e.windowStarts.push_back(static_cast<int64_t>(e.order.size()));
    const size_t begin = e.order.size();
    for (size_t k = first; k < std::min(e.chunks.size(), first + static_cast<size_t>(window)); ++k)
      for (int64_t i = chunkBegin(e.chunks[k]); i < chunkEnd(e.chunks[k], n); ++i) e.order.push_back(i);
    if (shuffle) {
      std::vector<int64_t> items(e.order.begin() + static_cast<std::ptrdiff_t>(begin), e.order.end());
      shuffleInPlace(items, g);
      std::copy(items.begin(), items.end(), e.order.begin() + static_cast<std::ptrdiff_t>(begin));
    }
  }
  e.windowStarts.push_back(n);
  return e;
}

}  // namespace gnn
