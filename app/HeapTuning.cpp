#include "app/HeapTuning.h"

#include <malloc.h>

namespace gnn::app {

void keepFreedMemoryInHeap() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

void returnLargeBlocksToSystem() { mallopt(M_MMAP_THRESHOLD, 256 * 1024); }

}  // namespace gnn::app
