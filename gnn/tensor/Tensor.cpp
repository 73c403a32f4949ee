#include "gnn/tensor/Tensor.h"

#include "gnn/system/ExecutionContext.h"
#include "gnn/tensor/BufferPool.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace gnn {

const char* dtypeName(DType d) {
  switch (d) {
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::U8: return "uint8";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
  }
  return "?";
}

size_t dtypeSize(DType d) {
  switch (d) {
    case DType::F32: return 4;
    case DType::F64: return 8;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::U8: return 1;
    case DType::F16: return 2;
    case DType::BF16: return 2;
  }
  return 0;
}

std::string shapeString(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t shapeNumel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    // A negative dimension or a product past 2^62 elements is never a real tensor (a corrupt file, an
    // arithmetic bug upstream): refuse it before anything is allocated.
    GNN_CHECK_ARG(d >= 0, "tensor shape ", shapeString(s), " has a negative dimension");
    GNN_CHECK_ARG(d == 0 || n <= (int64_t{1} << 62) / d, "tensor shape ", shapeString(s), " has too many elements");
    n *= d;
  }
  return n;
}

// Buffers come from the BufferPool (64-byte aligned, recycled by size across steps) and are charged to the
// current context's memory account until freed.
Tensor::Storage::Storage(size_t n, bool zero)
    : data(static_cast<unsigned char*>(BufferPool::acquire(n))),
      size(n),
      account(ExecutionContext::current().memoryAccount()) {
  account->charge(static_cast<int64_t>(n));
  if (zero) std::memset(data, 0, n);
}
Tensor::Storage::~Storage() {
  account->credit(static_cast<int64_t>(size));
  BufferPool::release(data, size);
}

Tensor Tensor::empty(Shape shape, DType dtype) { return Tensor(std::move(shape), dtype, false); }

Tensor::Tensor(Shape shape, DType dtype) : Tensor(std::move(shape), dtype, true) {}

Tensor::Tensor(Shape shape, DType dtype, bool zero) : shape_(std::move(shape)), dtype_(dtype) {
  GNN_CHECK_ARG(shape_.size() <= 4, "Tensor: rank ", shape_.size(), " > 4 is not supported (shape ",
                shapeString(shape_), ")");
  for (int64_t d : shape_) GNN_CHECK_ARG(d >= 0, "Tensor: negative dimension in shape ", shapeString(shape_));
  numel_ = shapeNumel(shape_);
  storage_ = std::make_shared<Storage>(static_cast<size_t>(numel_) * dtypeSize(dtype_), zero);
}

Tensor Tensor::full(Shape shape, double value, DType dtype) {
  Tensor t(std::move(shape), dtype);
  t.fill(value);
  return t;
}

int64_t Tensor::dim(int i) const {
  int r = rank();
  if (i < 0) i += r;
  GNN_CHECK_ARG(i >= 0 && i < r, "Tensor::dim(", i, ") out of range for shape ", shapeString(shape_));
  return shape_[i];
}

void Tensor::checkDtype(DType d) const {
  GNN_CHECK_ARG(storage_, "use of an undefined tensor");
  GNN_CHECK_ARG(d == dtype_, "tensor of dtype ", dtypeName(dtype_), " (shape ", shapeString(shape_),
                ") accessed as ", dtypeName(d));
}

double Tensor::item() const {
  GNN_CHECK_ARG(numel_ == 1, "Tensor::item on a tensor of shape ", shapeString(shape_));
  return at(0);
}

double Tensor::at(int64_t i) const {
  GNN_CHECK_ARG(i >= 0 && i < numel_, "Tensor::at(", i, ") out of range for shape ", shapeString(shape_));
  switch (dtype_) {
    case DType::F32: return data<float>()[i];
    case DType::F64: return data<double>()[i];
    case DType::I32: return data<int32_t>()[i];
    case DType::I64: return static_cast<double>(data<int64_t>()[i]);
    case DType::U8: return data<uint8_t>()[i];
    case DType::F16: return static_cast<float>(data<Eigen::half>()[i]);
    case DType::BF16: return static_cast<float>(data<Eigen::bfloat16>()[i]);
  }
  return 0;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor t = empty(shape_, dtype_);
  std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

Tensor Tensor::reshape(Shape shape) const {
  GNN_CHECK_ARG(shapeNumel(shape) == numel_, "Tensor::reshape from ", shapeString(shape_), " to ",
                shapeString(shape), ": element counts differ");
  GNN_CHECK_ARG(shape.size() <= 4, "Tensor::reshape: rank > 4");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::slice(int64_t begin, int64_t end) const {
  GNN_CHECK_ARG(rank() >= 1 && 0 <= begin && begin <= end && end <= shape_[0], "Tensor::slice(", begin, ", ",
                end, ") out of range for shape ", shapeString(shape_));
  Tensor t = *this;
  const int64_t rowElems = cols();
  t.offset_ += static_cast<size_t>(begin * rowElems) * dtypeSize(dtype_);
  t.shape_[0] = end - begin;
  t.numel_ = (end - begin) * rowElems;
  return t;
}

namespace {
template <class Src, class Dst>
void convertValues(const Src* s, Dst* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<Dst>(s[i]);
}
template <class Src>
void convertFrom(const Src* s, Tensor& out) {
  int64_t n = out.numel();
  switch (out.dtype()) {
    case DType::F32: convertValues(s, out.data<float>(), n); break;
    case DType::F64: convertValues(s, out.data<double>(), n); break;
    case DType::I32: convertValues(s, out.data<int32_t>(), n); break;
    case DType::I64: convertValues(s, out.data<int64_t>(), n); break;
    case DType::U8: convertValues(s, out.data<uint8_t>(), n); break;
    case DType::F16: convertValues(s, out.data<Eigen::half>(), n); break;
    case DType::BF16: convertValues(s, out.data<Eigen::bfloat16>(), n); break;
  }
}
}  // namespace

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return clone();
  Tensor out(shape_, dtype);
  switch (dtype_) {
    case DType::F32: convertFrom(data<float>(), out); break;
    case DType::F64: convertFrom(data<double>(), out); break;
    case DType::I32: convertFrom(data<int32_t>(), out); break;
    case DType::I64: convertFrom(data<int64_t>(), out); break;
    case DType::U8: convertFrom(data<uint8_t>(), out); break;
    case DType::F16: convertFrom(data<Eigen::half>(), out); break;
    case DType::BF16: convertFrom(data<Eigen::bfloat16>(), out); break;
  }
  return out;
}

void Tensor::fill(double value) {
  switch (dtype_) {
    case DType::F32: flat<float>().setConstant(static_cast<float>(value)); break;
    case DType::F64: flat<double>().setConstant(value); break;
    case DType::I32: flat<int32_t>().setConstant(static_cast<int32_t>(value)); break;
    case DType::I64: flat<int64_t>().setConstant(static_cast<int64_t>(value)); break;
    case DType::U8: flat<uint8_t>().setConstant(static_cast<uint8_t>(value)); break;
    case DType::F16: flat<Eigen::half>().setConstant(Eigen::half(static_cast<float>(value))); break;
    case DType::BF16: flat<Eigen::bfloat16>().setConstant(Eigen::bfloat16(static_cast<float>(value))); break;
  }
}

void Tensor::setZero() {
  if (defined()) std::memset(raw(), 0, nbytes());
}

bool Tensor::bitEqual(const Tensor& other) const {
  if (defined() != other.defined()) return false;
  if (!defined()) return true;
  return dtype_ == other.dtype_ && shape_ == other.shape_ && std::memcmp(raw(), other.raw(), nbytes()) == 0;
}

}  // namespace gnn
