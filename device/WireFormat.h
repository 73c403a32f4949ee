// WireFormat: the bytes one process of a distributed program sends the others (both ends run this code):
// trivially copyable values, strings and tensors in order, an error as the other processes rethrow it, and one
// all-gather that carries either a payload or the error a process hit.
//
//   ByteWriter w;  w.put<double>(loss);  w.putTensor(grad);
//   auto got = gatherOrRaise(group, "the gradients of update 3", error, std::move(w.bytes()));
//   ByteReader r(got[p], "the gradients of update 3", kPayload);  double loss = r.get<double>();
#pragma once
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "device/ProcessGroup.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

class ByteWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void putString(const std::string& v);
  void putTensor(const Tensor& t);
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

/// Reads what a ByteWriter wrote; a message that ends early or has bytes left over throws ProcessGroupError
/// naming `what`.
class ByteReader {
 public:
  ByteReader(const std::string& in, std::string what, size_t at = 0) : in_(in), what_(std::move(what)), at_(at) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string getString();
  Tensor getTensor();
  void expectEnd() const;

 private:
  void need(size_t n) const;
  const std::string& in_;
  std::string what_;
  size_t at_ = 0;
};

/// An error one process hit, as the others rethrow it: NonFiniteLoss keeps its kind (the training loop saves the
/// last good state for it), anything else becomes a runtime_error naming the rank.
void putError(ByteWriter& w, std::exception_ptr e);
[[noreturn]] void throwError(ByteReader& r, int rank);

/// Where a process's payload starts in the messages gatherOrRaise returns (after the status byte).
constexpr size_t kPayload = 1;
/// One exchange between the processes of a distributed program: a status byte, then this process's `payload`
/// (ok) or its error. Returns every process's message; when any process failed, raises the lowest failing
/// rank's error on every process instead (as itself on that rank).
std::vector<std::string> gatherOrRaise(ProcessGroup& g, const std::string& what, std::exception_ptr error,
                                       std::string payload);

}  // namespace gnn
