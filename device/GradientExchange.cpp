#include "device/GradientExchange.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace gnn {

namespace {

constexpr uint8_t kNone = 255;  // no gradient for this parameter

void put(std::string& out, const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }
template <class T>
void put(std::string& out, T v) {
  static_assert(std::is_trivially_copyable_v<T>);
  put(out, &v, sizeof v);
}

// Reads a header, naming the collective and the rank when it ends early.
class Reader {
 public:
  Reader(const std::string& in, const std::string& what, int rank) : in_(in), what_(what), rank_(rank) {}
  template <class T>
  T get() {
    if (in_.size() - at_ < sizeof(T))
      throw ProcessGroupError(what_ + ": rank " + std::to_string(rank_) + "'s header ended early (processes of different builds?)");
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  void expectEnd() const {
    if (at_ != in_.size())
      throw ProcessGroupError(what_ + ": rank " + std::to_string(rank_) + "'s header has " + std::to_string(in_.size() - at_) +
                              " bytes left over");
  }

 private:
  const std::string& in_;
  const std::string& what_;
  int rank_;
  size_t at_ = 0;
};

std::string layoutText(uint8_t dtype, const Shape& shape) {
  return std::string(dtypeName(static_cast<DType>(dtype))) + " " + shapeString(shape);
}

// acc (+)= src over n elements of the dtype, as one process sums two replicas' gradients: the first copied,
// each next one added element by element in the dtype (ExecutionProgram's reduction, acc + g).
void foldInto(void* acc, bool& accDefined, const void* src, int64_t n, DType dtype) {
  const size_t bytes = static_cast<size_t>(n) * dtypeSize(dtype);
  if (!accDefined) {
    std::memcpy(acc, src, bytes);
    accDefined = true;
    return;
  }
  dispatchFloat(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    // A piece of a received message sits wherever the pieces before it ended: unaligned when float32 and
    // float64 gradients are mixed, so it is copied to aligned memory first.
    std::vector<T> aligned;
    const T* s = static_cast<const T*>(src);
    if (reinterpret_cast<uintptr_t>(src) % alignof(T) != 0) {
      aligned.resize(static_cast<size_t>(n));
      std::memcpy(aligned.data(), src, bytes);
      s = aligned.data();
    }
    VectorMap<T>(static_cast<T*>(acc), n) += ConstVectorMap<T>(s, n);
  });
}

// One process's part of the job, as its header tells every process.
struct Part {
  int64_t firstReplica = 0, replicas = 0;
  std::vector<uint8_t> dtype;  // per parameter, kNone when none of its gradients has one
  std::vector<Shape> shape;
  // Per gradient it sends (the pre-summed prefix on rank 0, else one per (replica, stage)): which parameters.
  std::vector<std::vector<uint8_t>> has;
};

// This process's gradients in the order of the sum: (replica, stage).
using Gradients = std::vector<const std::vector<Tensor>*>;

// One call of sum(): the process count, this process's rank, the update's name for errors and the bytes moved.
struct Round {
  int n, me;
  const std::string& what;
  int64_t sent = 0, received = 0;
};

// `local` in the order of the sum, once every replica is known to have the first one's stage and parameter counts.
Gradients orderOfSum(const std::vector<std::vector<std::vector<Tensor>>>& local, int64_t firstReplica,
                     const std::string& what) {
  if (local.empty() || local.front().empty())
    throw std::invalid_argument(what + ": this process holds no replica (or no stage) to exchange gradients of");
  const size_t stages = local.front().size(), params = local.front().front().size();
  Gradients mine;
  for (size_t r = 0; r < local.size(); ++r) {
    if (local[r].size() != stages)
      throw std::invalid_argument(what + ": replica " + std::to_string(firstReplica + static_cast<int64_t>(r)) + " has " +
                                  std::to_string(local[r].size()) + " stages, replica " + std::to_string(firstReplica) +
                                  " " + std::to_string(stages));
    for (size_t s = 0; s < stages; ++s) {
      if (local[r][s].size() != params)
        throw std::invalid_argument(what + ": replica " + std::to_string(firstReplica + static_cast<int64_t>(r)) +
                                    " stage " + std::to_string(s) + " has " + std::to_string(local[r][s].size()) +
                                    " parameters' gradients, replica " + std::to_string(firstReplica) + " stage 0 " +
                                    std::to_string(params));
      mine.push_back(&local[r][s]);
    }
  }
  return mine;
}

// This process's part: the parameters' dtypes and shapes, and which parameters each gradient it sends has (the
// prefix process sends one, the fold of its own gradients).
Part ownPart(const Gradients& mine, int64_t firstReplica, int64_t replicas, size_t params, bool prefix,
             const std::string& what) {
  Part self;
  self.firstReplica = firstReplica;
  self.replicas = replicas;
  self.dtype.assign(params, kNone);
  self.shape.assign(params, Shape());
  for (const std::vector<Tensor>* g : mine) {
    std::vector<uint8_t> has(params, 0);
    for (size_t i = 0; i < params; ++i) {
      const Tensor& t = (*g)[i];
      if (!t.defined()) continue;
      if (t.dtype() != DType::F32 && t.dtype() != DType::F64)
        throw std::invalid_argument(what + ": the gradient of parameter " + std::to_string(i) + " is " + dtypeName(t.dtype()) +
                                    " (float32 or float64 are summed)");
      if (self.dtype[i] == kNone) {
        self.dtype[i] = static_cast<uint8_t>(t.dtype());
        self.shape[i] = t.shape();
      } else if (self.dtype[i] != static_cast<uint8_t>(t.dtype()) || self.shape[i] != t.shape()) {
        throw std::invalid_argument(what + ": the gradients of parameter " + std::to_string(i) + " are " +
                                    layoutText(self.dtype[i], self.shape[i]) + " and " +
                                    layoutText(static_cast<uint8_t>(t.dtype()), t.shape()) + " on this process");
      }
      has[i] = 1;
    }
    if (prefix && !self.has.empty()) {
      for (size_t i = 0; i < params; ++i) self.has.front()[i] |= has[i];
    } else {
      self.has.push_back(std::move(has));
    }
  }
  return self;
}

std::string encodeHeader(const Part& self, size_t stages, size_t params) {
  std::string header;
  put<int64_t>(header, self.firstReplica);
  put<int64_t>(header, self.replicas);
  put<int64_t>(header, static_cast<int64_t>(stages));
  put<int64_t>(header, static_cast<int64_t>(params));
  put<int64_t>(header, static_cast<int64_t>(self.has.size()));
  for (size_t i = 0; i < params; ++i) {
    put<uint8_t>(header, self.dtype[i]);
    if (self.dtype[i] == kNone) continue;
    put<uint8_t>(header, static_cast<uint8_t>(self.shape[i].size()));
    for (int64_t d : self.shape[i]) put<int64_t>(header, d);
  }
  for (const std::vector<uint8_t>& h : self.has) put(header, h.data(), h.size());
  return header;
}

// What every process's header says, and the dtype and shape of each parameter the processes agree on.
struct Layout {
  std::vector<Part> parts;     // per rank
  std::vector<uint8_t> dtype;  // per parameter, kNone when no process has a gradient for it
  std::vector<Shape> shape;
  std::vector<int> shapeFrom;  // the first rank that sent the parameter's dtype and shape
};

// Reads rank p's header into layout.parts[p], checking it against this process's stage and parameter counts,
// the replicas of the ranks before it (expectFirst on) and the dtypes and shapes they sent.
void readHeader(const std::string& h, int p, size_t stages, size_t params, const Round& round, int64_t& expectFirst,
                Layout& layout) {
  const std::string& what = round.what;
  Reader in(h, what, p);
  Part& part = layout.parts[static_cast<size_t>(p)];
  part.firstReplica = in.get<int64_t>();
  part.replicas = in.get<int64_t>();
  const auto st = in.get<int64_t>(), np = in.get<int64_t>(), count = in.get<int64_t>();
  const std::string who = "rank " + std::to_string(p);
  if (part.firstReplica != expectFirst || part.replicas < 1)
    throw ProcessGroupError(what + ": " + who + " holds replicas " + std::to_string(part.firstReplica) + " to " +
                            std::to_string(part.firstReplica + part.replicas - 1) + ", expected " +
                            std::to_string(expectFirst) + " on (the ranks' replicas must follow each other in rank order)");
  expectFirst += part.replicas;
  if (st != static_cast<int64_t>(stages) || np != static_cast<int64_t>(params))
    throw ProcessGroupError(what + ": " + who + " has " + std::to_string(st) + " stages and " + std::to_string(np) +
                            " parameters, rank " + std::to_string(round.me) + " " + std::to_string(stages) + " and " +
                            std::to_string(params));
  if (count != (part.firstReplica == 0 ? 1 : part.replicas * st))
    throw ProcessGroupError(what + ": " + who + " sends " + std::to_string(count) + " gradients for its " +
                            std::to_string(part.replicas) + " replicas");
  part.dtype.assign(params, kNone);
  part.shape.assign(params, Shape());
  for (size_t i = 0; i < params; ++i) {
    part.dtype[i] = in.get<uint8_t>();
    if (part.dtype[i] == kNone) continue;
    if (part.dtype[i] != static_cast<uint8_t>(DType::F32) && part.dtype[i] != static_cast<uint8_t>(DType::F64))
      throw ProcessGroupError(what + ": " + who + " sends parameter " + std::to_string(i) + "'s gradient as dtype " +
                              std::to_string(part.dtype[i]));
    part.shape[i].resize(in.get<uint8_t>());
    for (int64_t& d : part.shape[i]) d = in.get<int64_t>();
    if (layout.dtype[i] == kNone) {
      layout.dtype[i] = part.dtype[i];
      layout.shape[i] = part.shape[i];
      layout.shapeFrom[i] = p;
    } else if (layout.dtype[i] != part.dtype[i] || layout.shape[i] != part.shape[i]) {
      throw ProcessGroupError(what + ": the gradient of parameter " + std::to_string(i) + " is " +
                              layoutText(layout.dtype[i], layout.shape[i]) + " on rank " +
                              std::to_string(layout.shapeFrom[i]) + " but " + layoutText(part.dtype[i], part.shape[i]) +
                              " on " + who);
    }
  }
  part.has.assign(static_cast<size_t>(count), std::vector<uint8_t>(params));
  for (std::vector<uint8_t>& has : part.has)
    for (size_t i = 0; i < params; ++i) {
      has[i] = in.get<uint8_t>();
      if (has[i] && part.dtype[i] == kNone)
        throw ProcessGroupError(what + ": " + who + " sends a gradient of parameter " + std::to_string(i) + " it has no shape for");
    }
  in.expectEnd();
}

// Every process reads every header the same way, so a disagreement is raised on all of them alike.
Layout readHeaders(const std::vector<std::string>& headers, size_t stages, size_t params, Round& round) {
  Layout layout;
  layout.parts.resize(static_cast<size_t>(round.n));
  layout.dtype.assign(params, kNone);
  layout.shape.resize(params);
  layout.shapeFrom.assign(params, -1);
  int64_t expectFirst = 0;
  for (int p = 0; p < round.n; ++p) {
    const std::string& h = headers[static_cast<size_t>(p)];
    if (p != round.me) round.received += static_cast<int64_t>(h.size());
    readHeader(h, p, stages, params, round, expectFirst, layout);
  }
  return layout;
}

// The parameters that have a gradient anywhere, one after the other, cut into n ranges balanced by elements:
// rank k sums slice k.
class Slices {
 public:
  Slices(const Layout& layout, int n) : dtype_(layout.dtype), n_(n) {
    const size_t params = layout.dtype.size();
    offset_.assign(params, 0);
    numel_.assign(params, 0);
    for (size_t i = 0; i < params; ++i) {
      offset_[i] = total_;
      if (layout.dtype[i] != kNone) numel_[i] = shapeNumel(layout.shape[i]);
      total_ += numel_[i];
    }
  }

  // Parameter i's elements within slice k, [first, first + count) of the parameter; returns count.
  int64_t overlap(size_t i, int k, int64_t& first) const {
    const int64_t lo = std::max(offset_[i], start(k)), hi = std::min(offset_[i] + numel_[i], start(k + 1));
    first = lo - offset_[i];
    return std::max<int64_t>(0, hi - lo);
  }
  DType dtype(size_t i) const { return static_cast<DType>(dtype_[i]); }
  int64_t elementBytes(size_t i) const { return static_cast<int64_t>(dtypeSize(dtype(i))); }
  const char* bytesAt(const Tensor& t, int64_t first, size_t i) const {
    return static_cast<const char*>(t.raw()) + first * elementBytes(i);
  }

 private:
  int64_t start(int k) const { return k * (total_ / n_) + std::min<int64_t>(k, total_ % n_); }

  const std::vector<uint8_t>& dtype_;
  int n_;
  std::vector<int64_t> offset_, numel_;
  int64_t total_ = 0;
};

// The reduce-scatter's messages: slice k of each gradient this process sends goes to rank k (the prefix process
// sends its own gradients' fold), laid out parameter by parameter and, within one, gradient by gradient in order.
std::vector<std::string> sliceMessages(const Gradients& mine, const Slices& slices, size_t params, bool prefix,
                                       Round& round) {
  std::vector<std::string> out(static_cast<size_t>(round.n));
  for (int k = 0; k < round.n; ++k) {
    if (k == round.me) continue;
    std::string& m = out[static_cast<size_t>(k)];
    for (size_t i = 0; i < params; ++i) {
      int64_t first = 0;
      const int64_t count = slices.overlap(i, k, first);
      if (count == 0) continue;
      if (prefix) {
        bool defined = false;
        std::vector<char> acc(static_cast<size_t>(count * slices.elementBytes(i)));
        for (const std::vector<Tensor>* g : mine)
          if ((*g)[i].defined()) foldInto(acc.data(), defined, slices.bytesAt((*g)[i], first, i), count, slices.dtype(i));
        if (defined) put(m, acc.data(), acc.size());
      } else {
        for (const std::vector<Tensor>* g : mine)
          if ((*g)[i].defined())
            put(m, slices.bytesAt((*g)[i], first, i), static_cast<size_t>(count * slices.elementBytes(i)));
      }
    }
    round.sent += static_cast<int64_t>(m.size());
  }
  return out;
}

// Every other rank's message must hold this process's slice of each gradient its header says it sends.
void checkSliceSizes(const std::vector<std::string>& in, const Layout& layout, const Slices& slices, size_t params,
                     Round& round) {
  for (int p = 0; p < round.n; ++p) {
    if (p == round.me) continue;
    round.received += static_cast<int64_t>(in[static_cast<size_t>(p)].size());
    int64_t expected = 0;
    for (size_t i = 0; i < params; ++i) {
      int64_t first = 0;
      const int64_t count = slices.overlap(i, round.me, first);
      for (const std::vector<uint8_t>& has : layout.parts[static_cast<size_t>(p)].has)
        if (has[i]) expected += count * slices.elementBytes(i);
    }
    if (static_cast<int64_t>(in[static_cast<size_t>(p)].size()) != expected)
      throw ProcessGroupError(round.what + ": rank " + std::to_string(p) + " sent " +
                              std::to_string(in[static_cast<size_t>(p)].size()) + " bytes of rank " +
                              std::to_string(round.me) + "'s slice, expected " + std::to_string(expected));
  }
}

// This process's slice of each parameter, and whether any gradient had it.
struct SummedSlice {
  std::vector<Tensor> acc;
  std::vector<bool> defined;
};

// This process's slice, summed over every gradient of every process in (rank, replica, stage) order.
SummedSlice sumOwnSlice(const Gradients& mine, const std::vector<std::string>& in, const Layout& layout,
                        const Slices& slices, size_t params, const Round& round) {
  SummedSlice own{std::vector<Tensor>(params), std::vector<bool>(params, false)};
  std::vector<size_t> at(static_cast<size_t>(round.n), 0);
  for (size_t i = 0; i < params; ++i) {
    int64_t first = 0;
    const int64_t count = slices.overlap(i, round.me, first);
    if (count == 0) continue;
    const DType dt = slices.dtype(i);
    const size_t bytes = static_cast<size_t>(count * slices.elementBytes(i));
    own.acc[i] = Tensor::empty({count}, dt);
    bool defined = false;
    for (int p = 0; p < round.n; ++p) {
      if (p == round.me) {
        for (const std::vector<Tensor>* g : mine)
          if ((*g)[i].defined()) foldInto(own.acc[i].raw(), defined, slices.bytesAt((*g)[i], first, i), count, dt);
        continue;
      }
      const std::string& m = in[static_cast<size_t>(p)];
      for (const std::vector<uint8_t>& has : layout.parts[static_cast<size_t>(p)].has) {
        if (!has[i]) continue;
        foldInto(own.acc[i].raw(), defined, m.data() + at[static_cast<size_t>(p)], count, dt);
        at[static_cast<size_t>(p)] += bytes;
      }
    }
    own.defined[i] = defined;
  }
  return own;
}

// The summed gradient, put together from every rank's summed slice (`summedSlices[k]`: rank k's).
std::vector<Tensor> assemble(const std::vector<std::string>& summedSlices, const Layout& layout, const Slices& slices,
                             size_t params, Round& round) {
  std::vector<Tensor> result(params);
  for (size_t i = 0; i < params; ++i)
    if (layout.dtype[i] != kNone) result[i] = Tensor::empty(layout.shape[i], static_cast<DType>(layout.dtype[i]));
  for (int k = 0; k < round.n; ++k) {
    const std::string& m = summedSlices[static_cast<size_t>(k)];
    if (k != round.me) round.received += static_cast<int64_t>(m.size());
    size_t pos = 0;
    for (size_t i = 0; i < params; ++i) {
      int64_t first = 0;
      const int64_t count = slices.overlap(i, k, first);
      if (count == 0) continue;
      const auto bytes = static_cast<size_t>(count * slices.elementBytes(i));
      if (m.size() - pos < bytes)
        throw ProcessGroupError(round.what + ": rank " + std::to_string(k) + "'s summed slice has " +
                                std::to_string(m.size()) + " bytes, fewer than its parameters need");
      std::memcpy(static_cast<char*>(result[i].raw()) + first * slices.elementBytes(i), m.data() + pos, bytes);
      pos += bytes;
    }
    if (pos != m.size())
      throw ProcessGroupError(round.what + ": rank " + std::to_string(k) + "'s summed slice has " +
                              std::to_string(m.size() - pos) + " bytes left over");
  }
  return result;
}

}  // namespace

std::vector<Tensor> GradientExchange::sum(const std::vector<std::vector<std::vector<Tensor>>>& local,
                                          int64_t firstReplica, const std::string& what) {
  Round round{group_.size(), group_.rank(), what};
  const Gradients mine = orderOfSum(local, firstReplica, what);
  const size_t stages = local.front().size(), params = local.front().front().size();
  // Only the process holding replica 0 may pre-sum: its gradients are the start of the fold.
  const bool prefix = firstReplica == 0;

  // 1. Headers: every process's replicas, the parameters' dtypes and shapes, and which parameters each gradient
  // it sends has (so a receiver knows every message's layout before it arrives).
  const Part self = ownPart(mine, firstReplica, static_cast<int64_t>(local.size()), params, prefix, what);
  const std::string header = encodeHeader(self, stages, params);
  const std::vector<std::string> headers = group_.allGather(header, what + " (layout)");
  round.sent += static_cast<int64_t>(header.size()) * (round.n - 1);
  const Layout layout = readHeaders(headers, stages, params, round);

  // 2. The slices: the parameters that have a gradient anywhere, one after the other, cut into n balanced ranges.
  const Slices slices(layout, round.n);

  // 3. Reduce-scatter: slice k of each gradient this process sends goes to rank k, which sums its slice.
  std::vector<std::string> out = sliceMessages(mine, slices, params, prefix, round);
  const std::vector<std::string> in = group_.allToAll(out, what + " (reduce-scatter)");
  out.clear();
  checkSliceSizes(in, layout, slices, params, round);
  const SummedSlice own = sumOwnSlice(mine, in, layout, slices, params, round);

  // 4. All-gather the summed slices: every parameter that has a gradient anywhere has one in every slice it
  // overlaps.
  std::string summed;
  for (size_t i = 0; i < params; ++i)
    if (own.defined[i]) put(summed, own.acc[i].raw(), own.acc[i].nbytes());
  const std::vector<std::string> summedSlices = group_.allGather(summed, what + " (all-gather)");
  round.sent += static_cast<int64_t>(summed.size()) * (round.n - 1);
  std::vector<Tensor> result = assemble(summedSlices, layout, slices, params, round);
  lastSent_ = round.sent;
  lastReceived_ = round.received;
  totalSent_ += round.sent;
  totalReceived_ += round.received;
  return result;
}

}  // namespace gnn
