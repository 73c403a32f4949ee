// The molecule programs' feature caches ($TMPDIR/gnn_molecules_<hash>.npz, one per input, flags and program
// build) kept within a total size: without a bound, every rebuilt program and every new --limit left one more
// file behind for good.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gnn::app {

/// The caches' total size allowed: GNN_FEATURE_CACHE_MB (a whole number >= 0) or 4096 MB. A malformed value
/// is an error naming the variable.
uintmax_t featureCacheCapBytes();

/// Marks a cache as used now (its modification time, which the bound orders by).
void markFeatureCacheUsed(const std::string& path);

/// Removes the least recently used feature caches in the folder of `keep` (never `keep` itself, never other
/// files) until the caches there total at most `capBytes`. Returns the paths removed. Removal races with other
/// runs are harmless: a file already gone is skipped, and a run that has a cache mapped keeps reading it.
std::vector<std::string> boundFeatureCaches(const std::string& keep, uintmax_t capBytes);

}  // namespace gnn::app
