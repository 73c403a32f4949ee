// Tensor: a contiguous, row-major, reference-counted n-d array (rank <= 4) of float32/float64 values,
// float16 storage, or int32/int64 indices. Copies share storage (like torch.Tensor); clone() makes a deep copy.
// Each buffer carries a version, bumped by every access that may write it (non-const data(), raw(), fill), so
// caches key on (storage, version) and see in-place overwrites; and it is charged to the MemoryAccount of the
// ExecutionContext it was allocated under.
//
//   Tensor x = Tensor::zeros({2708, 16});          // float32
//   Tensor idx = Tensor::fromVector<int64_t>({0, 5, 7}, {3});
//   x.matrix<float>().row(0).setOnes();            // Eigen view of a rank-2 tensor
#pragma once
#include <Eigen/Core>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "gnn/system/Check.h"
#include "gnn/system/MemoryAccount.h"

namespace gnn {

// F16 is the simulated IPU's storage type; BF16 holds matrix-product inputs rounded once for the bfloat16
// products (gnn/ops/MatmulPrecision.h), never arithmetic.
enum class DType : uint8_t { F32 = 0, F64 = 1, I32 = 2, I64 = 3, U8 = 4, F16 = 5, BF16 = 6 };

const char* dtypeName(DType d);
size_t dtypeSize(DType d);
template <class T>
constexpr DType dtypeOf();
template <>
constexpr DType dtypeOf<float>() { return DType::F32; }
template <>
constexpr DType dtypeOf<double>() { return DType::F64; }
template <>
constexpr DType dtypeOf<int32_t>() { return DType::I32; }
template <>
constexpr DType dtypeOf<int64_t>() { return DType::I64; }
template <>
constexpr DType dtypeOf<uint8_t>() { return DType::U8; }
template <>
constexpr DType dtypeOf<Eigen::half>() { return DType::F16; }
template <>
constexpr DType dtypeOf<Eigen::bfloat16>() { return DType::BF16; }

using Shape = std::vector<int64_t>;
std::string shapeString(const Shape& s);
int64_t shapeNumel(const Shape& s);

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatrixMap = Eigen::Map<RowMatrix<T>>;
template <class T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>>;
template <class T>
using VectorMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstVectorMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

class Tensor {
 public:
  Tensor() = default;
  /// Zero-initialised tensor of the given shape.
  explicit Tensor(Shape shape, DType dtype = DType::F32);

  static Tensor zeros(Shape shape, DType dtype = DType::F32) { return Tensor(std::move(shape), dtype); }
  /// Uninitialised tensor, for outputs an op overwrites completely (saves zeroing large buffers).
  static Tensor empty(Shape shape, DType dtype = DType::F32);
  static Tensor full(Shape shape, double value, DType dtype = DType::F32);
  static Tensor scalar(double value, DType dtype = DType::F32) { return full({}, value, dtype); }
  template <class T>
  static Tensor fromVector(const std::vector<T>& values, Shape shape);
  template <class T>
  static Tensor fromVector(const std::vector<T>& values) {
    return fromVector(values, Shape{static_cast<int64_t>(values.size())});
  }

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  /// Size of dimension i; negative i counts from the end.
  int64_t dim(int i) const;
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtypeSize(dtype_); }
  bool isFloating() const { return dtype_ == DType::F32 || dtype_ == DType::F64 || dtype_ == DType::F16; }

  template <class T>
  T* data() {
    checkDtype(dtypeOf<T>());
    return reinterpret_cast<T*>(raw());
  }

  template <class T>
  const T* data() const {
    checkDtype(dtypeOf<T>());
    return reinterpret_cast<const T*>(raw());
  }
  void* raw() {
    if (!storage_) return nullptr;
    storage_->version.fetch_add(1, std::memory_order_relaxed);
    return storage_->data + offset_;
  }
  const void* raw() const { return storage_ ? storage_->data + offset_ : nullptr; }

  /// Rows x columns Eigen view: rank 2 as is, rank 1 as one column, rank > 2 as [dim0, rest].
  template <class T>
  MatrixMap<T> matrix() {
    return MatrixMap<T>(data<T>(), rows(), cols());
  }
  template <class T>
  ConstMatrixMap<T> matrix() const {
    return ConstMatrixMap<T>(data<T>(), rows(), cols());
  }
  template <class T>
  VectorMap<T> flat() {
    return VectorMap<T>(data<T>(), numel_);
  }
  template <class T>
  ConstVectorMap<T> flat() const {
    return ConstVectorMap<T>(data<T>(), numel_);
  }
  int64_t rows() const { return rank() == 0 ? 1 : shape_[0]; }
  /// Elements per row: the product of the dimensions after the first (also when there are no rows, [0, C]).
  int64_t cols() const {
    int64_t c = 1;
    for (int i = 1; i < rank(); ++i) c *= shape_[i];
    return c;
  }

  /// Value of a one-element tensor, converted to double.
  double item() const;
  /// Element i of the flattened tensor, converted to double (any dtype; for tests and I/O, not hot loops).
  double at(int64_t i) const;

  Tensor clone() const;
  /// Same storage, new shape (numel must match).
  Tensor reshape(Shape shape) const;
  /// Rows [begin, end) of dimension 0, sharing storage.
  Tensor slice(int64_t begin, int64_t end) const;
  /// Converted copy (float <-> double <-> index types).
  Tensor to(DType dtype) const;
  void fill(double value);
  void setZero();
  /// True when no other tensor shares this one's storage (so it may be updated in place unseen).
  bool uniquelyOwned() const { return storage_ && storage_.use_count() == 1; }
  /// True when dtype, shape and every byte are equal.
  bool bitEqual(const Tensor& other) const;

  /// Identity of the buffer (shared by every view of it) and its size in bytes: for counting memory once.
  const void* storageId() const { return storage_.get(); }
  size_t storageBytes() const { return storage_ ? storage_->size : 0; }
  /// Writes seen so far by the buffer (every non-const data access counts as one): with storageId(), a key
  /// that changes whenever the contents may have changed.
  uint64_t version() const { return storage_ ? storage_->version.load(std::memory_order_relaxed) : 0; }
  /// Marks the buffer as written (for code that wrote through a pointer taken earlier).
  void bumpVersion() {
    if (storage_) storage_->version.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  struct Storage {
    explicit Storage(size_t n, bool zero);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
    unsigned char* data;
    size_t size;
    std::atomic<uint64_t> version{0};
    std::shared_ptr<MemoryAccount> account;
  };
  Tensor(Shape shape, DType dtype, bool zero);
  void checkDtype(DType d) const;
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;
  Shape shape_;
  int64_t numel_ = 0;
  DType dtype_ = DType::F32;
};

template <class T>
Tensor Tensor::fromVector(const std::vector<T>& values, Shape shape) {
  GNN_CHECK_ARG(static_cast<int64_t>(values.size()) == shapeNumel(shape), "Tensor::fromVector: ", values.size(),
                " values do not fill shape ", shapeString(shape));
  Tensor t(std::move(shape), dtypeOf<T>());
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

/// Calls f with a typed null pointer for the tensor's floating dtype (float or double): the one place where
/// ops turn a runtime dtype into a template argument.
template <class F>
decltype(auto) dispatchFloat(DType d, F&& f) {
  switch (d) {
    case DType::F32:
      return f(static_cast<float*>(nullptr));
    case DType::F64:
      return f(static_cast<double*>(nullptr));
    case DType::F16:
      invalidArgument("float16 is a storage type here: cast to float32 for arithmetic (gnn::cast)");
    case DType::BF16:
      invalidArgument("bfloat16 holds matrix-product inputs only: cast to float32 for arithmetic");
    default:
      invalidArgument("expected a float32 or float64 tensor, got ", dtypeName(d));
  }
}
/// Same for index dtypes (int32 or int64).
template <class F>
decltype(auto) dispatchIndex(DType d, F&& f) {
  switch (d) {
    case DType::I32:
      return f(static_cast<int32_t*>(nullptr));
    case DType::I64:
      return f(static_cast<int64_t*>(nullptr));
    default:
      invalidArgument("expected an int32 or int64 index tensor, got ", dtypeName(d));
  }
}

}  // namespace gnn
