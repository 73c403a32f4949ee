#include "app/FeatureCacheBound.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace gnn::app {
namespace fs = std::filesystem;

namespace {
bool isFeatureCache(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.rfind("gnn_molecules_", 0) == 0 && p.extension() == ".npz";
}
}  // namespace

uintmax_t featureCacheCapBytes() {
  constexpr uintmax_t kDefaultMb = 4096;
  const char* v = std::getenv("GNN_FEATURE_CACHE_MB");
  if (!v || !*v) return kDefaultMb << 20;
  const std::string s(v);
  if (s.find_first_not_of("0123456789") != std::string::npos || s.size() > 12)
    throw std::runtime_error("GNN_FEATURE_CACHE_MB=" + s + ": must be a whole number of megabytes (0 keeps only "
                             "the cache in use; default " + std::to_string(kDefaultMb) + ")");
  return static_cast<uintmax_t>(std::stoull(s)) << 20;
}

void markFeatureCacheUsed(const std::string& path) {
  std::error_code ec;  // a read-only cache folder still serves the run
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
}

std::vector<std::string> boundFeatureCaches(const std::string& keep, uintmax_t capBytes) {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uintmax_t bytes;
  };
  std::vector<Entry> others;
  std::error_code ec;
  uintmax_t total = fs::file_size(keep, ec);
  if (ec) total = 0;
  const fs::path folder = fs::path(keep).parent_path();
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    std::error_code e;
    if (!isFeatureCache(p) || fs::equivalent(p, keep, e) || !it->is_regular_file(e)) continue;
    Entry x{p, it->last_write_time(e), it->file_size(e)};
    if (e) continue;  // gone meanwhile
    total += x.bytes;
    others.push_back(std::move(x));
  }
  // Oldest use first; the name breaks ties so the order does not depend on the folder's listing.
  std::sort(others.begin(), others.end(), [](const Entry& a, const Entry& b) {
    return a.used != b.used ? a.used < b.used : a.path < b.path;
  });
  std::vector<std::string> removed;
  for (const Entry& x : others) {
    if (total <= capBytes) break;
    std::error_code e;
    if (fs::remove(x.path, e)) removed.push_back(x.path.string());
    total -= x.bytes;  // removed now or by another run: either way no longer counted
  }
  return removed;
}

}  // namespace gnn::app
