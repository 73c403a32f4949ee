#include "app/EpochOrderFlags.h"

namespace gnn::app {

void EpochOrderFlags::addTo(po::options_description& group) {
  group.add_options()(
      "epoch-order", value(&order, std::string("auto")),
      "training order: shuffle (every molecule at random) | chunks (--shuffle-chunk consecutive molecules per "
      "chunk, chunks in random order, --shuffle-window chunks shuffled together: a memory-mapped file is read in "
      "large sequential pieces) | auto (chunks when the dataset file is larger than half of this machine's memory)")(
      "shuffle-chunk", value(&chunk, int64_t{1024}), "--epoch-order chunks: molecules per chunk")(
      "shuffle-window", value(&window, int64_t{64}), "--epoch-order chunks: chunks whose molecules are shuffled together")(
      "read-ahead", value(&readAhead, std::string("on")),
      "on: page-cache advice for the memory-mapped training set (chunks: the next window is read ahead and each "
      "window released once read; shuffle: pages released every 16,384 molecules), so the file's pages are not "
      "held as the program's memory | off");
}

void EpochOrderFlags::bind(RunConfig& config) {
  config.bindOutsideModel("epoch-order", &order);
  config.bindOutsideModel("shuffle-chunk", &chunk);
  config.bindOutsideModel("shuffle-window", &window);
}

void EpochOrderFlags::check() const {
  requireOneOf("--epoch-order", order, {"auto", "shuffle", "chunks"});
  requireOneOf("--read-ahead", readAhead, {"on", "off"});
  requireAtLeast("--shuffle-chunk", static_cast<double>(chunk), 1);
  requireAtLeast("--shuffle-window", static_cast<double>(window), 1);
}

std::string EpochOrderFlags::resolve(uint64_t fileBytes, double memoryBytes) const {
  if (order != "auto") return order;
  return static_cast<double>(fileBytes) > memoryBytes / 2 ? "chunks" : "shuffle";
}

ChunkShuffle EpochOrderFlags::chunks(const std::string& resolved) const {
  if (resolved != "chunks") return {};
  return ChunkShuffle{chunk, window};
}

}  // namespace gnn::app
