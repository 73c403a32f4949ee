// HeapTuning: glibc malloc settings for the two memory patterns of the programs. One home for them, so the
// thresholds (and the reasons) are stated once.
#pragma once

namespace gnn::app {

/// Training and inference loops: every step allocates the same activation sizes, so freed blocks stay in the
/// heap instead of going back to the kernel, which would zero fresh pages on every step (~12% of a step in perf
/// on a 2-core machine). Peak memory is unchanged: the same sizes are reused.
void keepFreedMemoryInHeap();

/// Streaming builds (build_dataset): a fixed mmap threshold of 256 KiB. glibc otherwise raises the threshold
/// after freeing a large block, and the large per-molecule buffers of big molecules (Graphormer's N^2 arrays)
/// then fragment the heap, so peak RSS would creep up with the input's length; with it, big buffers go
/// straight back to the system when freed.
void returnLargeBlocksToSystem();

}  // namespace gnn::app
