#include "device/CompileRecord.h"

#include "gnn/system/Check.h"
#include "loaders/BatchFields.h"

namespace gnn {

int64_t streamedBytesPerElement(DType dtype) {
  if (dtype == DType::I64 || dtype == DType::F64) return 4;
  return static_cast<int64_t>(dtypeSize(dtype));
}

int64_t streamedBytes(const Tensor& t) { return t.numel() * streamedBytesPerElement(t.dtype()); }

std::vector<FieldShape> CompileRecord::shapesOf(const Batch& b) {
  std::vector<FieldShape> out;
  auto add = [&](const char* name, const Tensor& t) {
    FieldShape f;
    f.name = name;
    f.defined = t.defined();
    if (t.defined()) {
      f.shape = t.shape();
      f.dtype = t.dtype();
    }
    out.push_back(std::move(f));
  };
  for (const BatchField& f : batchFields()) add(f.name, b.*f.inBatch);
  for (const CollatorField& f : collatorFields()) add(f.name, b.*f.inBatch);
  return out;
}

void CompileRecord::checkShapes(const Batch& b, const std::string& what) const {
  const std::vector<FieldShape> now = shapesOf(b);
  GNN_CHECK_ARG(now.size() == fields.size(), what, ": batch layout differs from the compiled one");
  for (size_t i = 0; i < now.size(); ++i) {
    const FieldShape &c = fields[i], &n = now[i];
    if (c.defined != n.defined)
      invalidArgument(what, ": field '", c.name, "' is ", n.defined ? "present" : "missing",
                      " but the program was compiled ", c.defined ? "with" : "without",
                      " it; a device program runs one set of shapes: build another program for these batches");
    if (c.defined && (c.shape != n.shape || c.dtype != n.dtype))
      invalidArgument(what, ": field '", c.name, "' has shape ", shapeString(n.shape), " (", dtypeName(n.dtype),
                      ") but the program was compiled for ", shapeString(c.shape), " (", dtypeName(c.dtype),
                      "); a device program runs one set of shapes: batch to the compiled fixed size");
  }
}

int64_t CompileRecord::blockIndex(const std::string& name) const {
  for (size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].name == name) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace gnn
