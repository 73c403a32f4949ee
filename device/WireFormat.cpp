#include "device/WireFormat.h"

#include <cstdint>
#include <stdexcept>

#include "device/Device.h"

namespace gnn {

void ByteWriter::putString(const std::string& v) {
  put<int64_t>(static_cast<int64_t>(v.size()));
  out_ += v;
}

void ByteWriter::putTensor(const Tensor& t) {
  put<uint8_t>(t.defined() ? 1 : 0);
  if (!t.defined()) return;
  put<uint8_t>(static_cast<uint8_t>(t.dtype()));
  put<int64_t>(static_cast<int64_t>(t.shape().size()));
  for (int64_t d : t.shape()) put<int64_t>(d);
  out_.append(static_cast<const char*>(t.raw()), t.nbytes());
}

std::string ByteReader::getString() {
  const auto n = get<int64_t>();
  need(static_cast<size_t>(n));
  std::string v = in_.substr(at_, static_cast<size_t>(n));
  at_ += static_cast<size_t>(n);
  return v;
}

Tensor ByteReader::getTensor() {
  if (get<uint8_t>() == 0) return Tensor();
  const auto code = get<uint8_t>();
  if (code > static_cast<uint8_t>(DType::BF16))
    throw ProcessGroupError(what_ + ": a tensor of unknown dtype " + std::to_string(code));
  const auto dtype = static_cast<DType>(code);
  const auto rank = get<int64_t>();
  // Checked against the bytes the message holds before anything is allocated: a corrupt message is an error,
  // never a huge allocation.
  if (rank < 0 || rank > 64) throw ProcessGroupError(what_ + ": a tensor of rank " + std::to_string(rank));
  Shape shape(static_cast<size_t>(rank));
  uint64_t bytes = dtypeSize(dtype);
  for (int64_t& d : shape) {
    d = get<int64_t>();
    if (d < 0) throw ProcessGroupError(what_ + ": a tensor dimension of " + std::to_string(d));
    const auto n = static_cast<uint64_t>(d);
    bytes = n == 0 ? 0 : bytes > UINT64_MAX / n ? UINT64_MAX : bytes * n;  // saturated: need() refuses it
  }
  need(static_cast<size_t>(bytes));
  Tensor t = Tensor::empty(shape, dtype);
  std::memcpy(t.raw(), in_.data() + at_, t.nbytes());
  at_ += t.nbytes();
  return t;
}

void ByteReader::expectEnd() const {
  if (at_ != in_.size()) throw ProcessGroupError(what_ + ": " + std::to_string(in_.size() - at_) + " bytes left over");
}

void ByteReader::need(size_t n) const {
  if (in_.size() - at_ < n) throw ProcessGroupError(what_ + ": the message ended early (processes of different builds?)");
}

void putError(ByteWriter& w, std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const NonFiniteLoss& x) {
    w.put<uint8_t>(1);
    w.put<double>(x.value());
    w.put<int64_t>(x.microBatch());
    w.putString(x.where());
  } catch (const std::exception& x) {
    w.put<uint8_t>(2);
    w.putString(x.what());
  } catch (...) {
    w.put<uint8_t>(2);
    w.putString("an unknown exception");
  }
}

void throwError(ByteReader& r, int rank) {
  const auto kind = r.get<uint8_t>();
  if (kind == 1) {
    const double value = r.get<double>();
    const int64_t mb = r.get<int64_t>();
    throw NonFiniteLoss(value, mb, r.getString() + " on MPI rank " + std::to_string(rank));
  }
  throw std::runtime_error("MPI rank " + std::to_string(rank) + ": " + r.getString());
}

std::vector<std::string> gatherOrRaise(ProcessGroup& g, const std::string& what, std::exception_ptr error,
                                       std::string payload) {
  ByteWriter w;
  w.put<uint8_t>(error ? 1 : 0);
  if (error) putError(w, error);
  else w.bytes() += payload;
  payload.clear();
  std::vector<std::string> got = g.allGather(w.bytes(), what);
  for (int p = 0; p < g.size(); ++p) {
    ByteReader r(got[static_cast<size_t>(p)], what);
    if (r.get<uint8_t>() == 0) continue;
    if (p == g.rank()) std::rethrow_exception(error);
    throwError(r, p);
  }
  return got;
}

}  // namespace gnn
