#include "device/HostIo.h"

#include <string>
#include <utility>

#include "device/CompileRecord.h"
#include "device/ExecutionProgramParts.h"
#include "gnn/system/Check.h"
#include "gnn/tensor/HalfPrecision.h"
#include "loaders/BatchFields.h"

namespace gnn {

int64_t hostLinkBytes(const Batch& b) {
  int64_t n = 0;
  for (const BatchField& f : batchFields())
    if ((b.*f.inBatch).defined()) n += streamedBytes(b.*f.inBatch);
  for (const CollatorField& f : collatorFields())
    if ((b.*f.inBatch).defined()) n += streamedBytes(b.*f.inBatch);
  return n;
}

int64_t narrowIntegerFeatures(Batch& b, int64_t microBatch) {
  int64_t bytes = 0;
  for (const BatchField& f : batchFields()) {
    Tensor& t = b.*f.inBatch;
    if (!t.defined()) continue;
    // Integer features only: node ids (edge_index) and targets keep their width.
    const bool integer = t.dtype() == DType::I64 || t.dtype() == DType::I32;
    if (!integer || f.nodeIds || f.target) {
      bytes += streamedBytes(t);
      continue;
    }
    // Node-pair fields (spatial_pos, edge_input) mark padding and unreachable pairs with -1: they cross biased
    // by one (-1..254); every other integer feature as is (0..255). A field's column offsets (edge_input's 512
    // per bond feature) stay on the device, and its sentinel (spatial_pos: 510, unreachable) crosses as 255.
    const int64_t bias = f.level == FieldLevel::NodePair ? 1 : 0;
    const bool sentinel = f.wireSentinel != BatchField::kNoSentinel;
    const int64_t top = (sentinel ? 254 : 255) - bias;
    const int64_t cols = t.rank() > 1 && f.columnOffset != 0 ? t.dim(t.rank() - 1) : 1;
    Tensor narrow(t.shape(), DType::U8);
    uint8_t* out = narrow.data<uint8_t>();
    auto check = [&](int64_t v, int64_t i) -> uint8_t {
      if (sentinel && v == f.wireSentinel) return 255;
      const int64_t offset = v >= 0 ? f.columnOffset * (i % cols) : 0;
      const int64_t w = v - offset;
      GNN_CHECK_ARG((v < 0 || w >= 0) && w + bias >= 0 && w <= top, "--eight-bit-io: field '", f.name,
                    "' of micro-batch ", microBatch, " of the host request holds ", v, " (element ", i, "), outside ",
                    -bias, "..", top, offset ? " after its column offset " + std::to_string(offset) : std::string(),
                    sentinel ? " or " + std::to_string(f.wireSentinel) : std::string(),
                    "; run without --eight-bit-io or remap that feature");
      return static_cast<uint8_t>(w + bias);
    };
    if (t.dtype() == DType::I64) {
      const int64_t* in = std::as_const(t).data<int64_t>();
      for (int64_t i = 0; i < t.numel(); ++i) out[i] = check(in[i], i);
    } else {
      const int32_t* in = std::as_const(t).data<int32_t>();
      for (int64_t i = 0; i < t.numel(); ++i) out[i] = check(in[i], i);
    }
    bytes += static_cast<int64_t>(narrow.nbytes());
    // On the device: widened back to the field's own type, offsets and sentinel restored.
    auto widen = [&](uint8_t n, int64_t i) -> int64_t {
      if (sentinel && n == 255) return f.wireSentinel;
      const int64_t v = static_cast<int64_t>(n) - bias;
      return v >= 0 ? v + f.columnOffset * (i % cols) : v;
    };
    Tensor wide(t.shape(), t.dtype());
    const uint8_t* nv = std::as_const(narrow).data<uint8_t>();
    if (t.dtype() == DType::I64) {
      int64_t* w = wide.data<int64_t>();
      for (int64_t i = 0; i < t.numel(); ++i) w[i] = widen(nv[i], i);
    } else {
      int32_t* w = wide.data<int32_t>();
      for (int64_t i = 0; i < t.numel(); ++i) w[i] = static_cast<int32_t>(widen(nv[i], i));
    }
    t = std::move(wide);
  }
  for (const CollatorField& f : collatorFields())
    if ((b.*f.inBatch).defined()) bytes += streamedBytes(b.*f.inBatch);
  return bytes;
}

int64_t roundInputsToHalf(Batch& b) {
  int64_t saved = 0;
  for (const BatchField& f : batchFields()) {
    Tensor& t = b.*f.inBatch;
    if (!t.defined() || (t.dtype() != DType::F32 && t.dtype() != DType::F64)) continue;
    t = t.clone();
    if (!f.target) {
      roundTensorToHalf(t, Rounding::Half);
      saved += streamedBytes(t) / 2;  // sent as half
    }
  }
  return saved;
}

int64_t sendOverHostLink(std::vector<MicroBatchRun>& all, int64_t real, const Batch& request, bool eightBitIo,
                         bool fp16) {
  if (!eightBitIo && !fp16) return hostLinkBytes(request);
  int64_t bytes = 0;
  for (int64_t m = 0; m < real; ++m) {
    Batch& b = all[static_cast<size_t>(m)].batch;
    if (b.numGraphs == 0) continue;  // another process's
    bytes += eightBitIo ? narrowIntegerFeatures(b, m) : hostLinkBytes(b);
    if (fp16) bytes -= roundInputsToHalf(b);
  }
  return bytes;
}

}  // namespace gnn
