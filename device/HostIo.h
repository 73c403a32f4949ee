// HostIo: what crosses the host link into the device, and how many bytes. PopTorch streams 64-bit values as
// 32-bit; with --eight-bit-io the integer features cross as uint8 (checked, widened again on the device); with
// fp16 the float inputs cross as half (rounded in copies: the caller's request is left as it was).
//
//   int64_t bytes = sendOverHostLink(microBatches, real, request, options.eightBitIo, fp16);
#pragma once
#include <cstdint>
#include <vector>

#include "loaders/Batch.h"

namespace gnn {

struct MicroBatchRun;

/// Bytes of a batch on the host link, as PopTorch streams them (streamedBytes: 64-bit values as 32-bit).
int64_t hostLinkBytes(const Batch& b);

/// --eight-bit-io: `b`'s integer features through the host link as uint8 (every value checked, throwing
/// std::invalid_argument naming the field, micro-batch `microBatch` and the value when one does not fit), widened
/// again to the field's type; returns the bytes that crossed the link.
int64_t narrowIntegerFeatures(Batch& b, int64_t microBatch);

/// fp16: `b`'s float inputs rounded to half (in copies; targets keep fp32); returns the bytes saved on the link.
int64_t roundInputsToHalf(Batch& b);

/// The first `real` micro-batches of `all` (this process's: the others' have no graphs) over the host link;
/// returns the bytes that crossed it (the request's own bytes when neither option changes them).
int64_t sendOverHostLink(std::vector<MicroBatchRun>& all, int64_t real, const Batch& request, bool eightBitIo,
                         bool fp16);

}  // namespace gnn
