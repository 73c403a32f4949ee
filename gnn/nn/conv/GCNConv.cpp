#include "gnn/nn/conv/GCNConv.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "gnn/autograd/OpInfo.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/PyGArgs.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {

GCNConv::GCNConv(int64_t inChannels, int64_t outChannels, Generator& gen, GCNConvOptions options)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), opt_(options) {
  GNN_CHECK_ARG(inChannels > 0 && outChannels > 0, "GCNConv: channel counts must be positive");
  // PyG's names and layout ("lin.weight" [out, in], "bias" [out]), registered on the layer itself so that the
  // parameters keep their order (weight, then bias) and a PyG state_dict maps one to one.
  weight_ = &registerParameter("lin.weight", Tensor({out_, in_}, opt_.dtype));
  if (opt_.bias) bias_ = &registerParameter("bias", Tensor({out_}, opt_.dtype));
  resetParameters(gen);
}

std::unique_ptr<GCNConv> GCNConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "GCNConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"improved", false},
                                    {"cached", false}, {"add_self_loops", true}, {"normalize", true},
                                    {"bias", true}});
  if (a.get<bool>("improved")) throw a.invalidValue("improved", true, "not supported");
  GCNConvOptions o;
  o.dtype = dtype;
  o.cached = a.get<bool>("cached");
  o.addSelfLoops = a.get<bool>("add_self_loops");
  o.normalize = a.get<bool>("normalize");
  o.bias = a.get<bool>("bias");
  return std::make_unique<GCNConv>(a.get<int64_t>("in_channels"), a.get<int64_t>("out_channels"), gen, o);
}

std::unique_ptr<Module> GCNConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GCNConv>(in_, out_, unused, opt_));
}

void GCNConv::resetParameters(Generator& gen) {
  // Drawn in [in, out] order and stored transposed: a seed gives the same initial weights as it always has, so
  // runs keep their numbers (PyG's own values come from torch's generator, which no seed here reproduces).
  weight_->value() = transposed(init::glorotUniform({in_, out_}, in_, out_, gen, opt_.dtype));
  if (bias_) bias_->value() = Tensor({out_}, opt_.dtype);
}

namespace {

// The normalised adjacency built as CSR (row = target) in O(E): a counting sort of the edges by target, the row
// lengths giving the degrees, then each row's columns sorted with duplicates merged. With self-loops asked for,
// every node gets exactly one (PyG 2.3.1's add_remaining_self_loops with unit weights: the edges' own
// self-loops are dropped and one per node added, so a node with several, such as a padding graph's first node
// under all the padding edges, counts one in its degree).
class AdjacencyBuilder {
 public:
  AdjacencyBuilder(const Tensor& edgeIndex, int64_t numNodes, bool addSelfLoops)
      : src_(edgeRow(edgeIndex, 0)), dst_(edgeRow(edgeIndex, 1)), E_(edgeIndex.dim(1)), N_(numNodes),
        loops_(addSelfLoops) {
    GNN_CHECK_ARG(numNodes >= 0 && numNodes <= INT32_MAX, "GCNConv: ", numNodes,
                  " nodes exceed the sparse matrix's 32-bit column index");
    // Read through const views: a non-const access would bump the buffer's version and defeat the cache.
    s_ = src_.data<int64_t>();
    d_ = dst_.data<int64_t>();
    // A few fixed chunks of edges counted in parallel (at most 4, so the per-chunk counts cost at most 16 bytes
    // a node); the chunks depend on E only.
    chunks_ = std::clamp<int64_t>(E_ >> 18, 1, 4);
    perChunk_ = (E_ + chunks_ - 1) / chunks_;
  }

  SparseMatrix build(bool normalize, DType dtype) {
    countTargets();
    rowLengths();
    fillColumns();
    Tensor values = Tensor::empty({static_cast<int64_t>(col_.size())}, dtype);
    dispatchFloat(dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      mergeRows(values.data<T>(), normalize);
      compact(values.data<T>());
    });
    const int64_t nnz = rowPtr_[N_];
    if (nnz != static_cast<int64_t>(col_.size())) {
      col_.resize(static_cast<size_t>(nnz));
      col_.shrink_to_fit();
      values = values.slice(0, nnz);
    }
    return SparseMatrix::fromCsr(N_, N_, std::move(rowPtr_), std::move(col_), std::move(values));
  }

 private:
  bool skipped(int64_t k) const { return loops_ && s_[k] == d_[k]; }  // replaced by the node's one added loop
  int64_t chunkEnd(int64_t c) const { return std::min(E_, (c + 1) * perChunk_); }

  // Each chunk counts its edges per target; the counts give every chunk its own slots in each row after the
  // earlier chunks', and each chunk fills its slots in edge order: the stable order of one serial pass,
  // whatever the threads.
  void countTargets() {
    slot_.assign(static_cast<size_t>(chunks_ * N_), 0);  // chunk c, row r: slot_[c * N + r]
    std::vector<int64_t> badEdge(static_cast<size_t>(chunks_), -1);
    parallelFor(chunks_, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        int32_t* count = slot_.data() + c * N_;
        for (int64_t k = c * perChunk_; k < chunkEnd(c); ++k) {
          if (s_[k] < 0 || s_[k] >= N_ || d_[k] < 0 || d_[k] >= N_) {
            badEdge[c] = k;  // reported below: no exception may leave a parallel loop
            break;
          }
          if (!skipped(k)) ++count[d_[k]];
        }
      }
    });
    for (int64_t k : badEdge)
      GNN_CHECK_ARG(k < 0, "GCNConv: edge ", k, " (", s_[k], " -> ", d_[k], ") points outside the ", N_, " nodes");
  }

  // Row lengths (the degrees, duplicates included, plus the added self-loop), each chunk's start within its
  // row, and 1/sqrt(degree) in double, 0 for a node no entry points to (a dense D^-1/2 with 0^-1/2 taken as 0).
  void rowLengths() {
    rowPtr_.assign(static_cast<size_t>(N_) + 1, 0);
    invSqrt_.assign(static_cast<size_t>(N_), 0.0);
    for (int64_t r = 0; r < N_; ++r) {
      int64_t len = 0;
      for (int64_t c = 0; c < chunks_; ++c) {
        const int64_t n = slot_[c * N_ + r];
        slot_[c * N_ + r] = static_cast<int32_t>(len);
        len += n;
      }
      GNN_CHECK_ARG(len < INT32_MAX, "GCNConv: node ", r, " receives ", len, " edges, more than 2^31");
      len += loops_ ? 1 : 0;
      invSqrt_[r] = len > 0 ? 1.0 / std::sqrt(static_cast<double>(len)) : 0.0;
      rowPtr_[r + 1] = rowPtr_[r] + len;
    }
  }

  // Sources into their target's row in edge order, then the added self-loop last.
  void fillColumns() {
    col_.assign(static_cast<size_t>(rowPtr_[N_]), 0);
    parallelFor(chunks_, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        int32_t* next = slot_.data() + c * N_;
        for (int64_t k = c * perChunk_; k < chunkEnd(c); ++k)
          if (!skipped(k)) col_[rowPtr_[d_[k]] + next[d_[k]]++] = static_cast<int32_t>(s_[k]);
      }
    });
    slot_ = std::vector<int32_t>();
    if (loops_)
      for (int64_t r = 0; r < N_; ++r) col_[rowPtr_[r + 1] - 1] = static_cast<int32_t>(r);
  }

  // Each row: columns sorted, duplicates merged at the row's start. A duplicate's weight is the same a * b
  // every time, summed in double one copy after another, then rounded to the value type once: the bits of the
  // coordinate-sorting construction (SparseMatrix::fromCoo on every entry).
  template <class T>
  void mergeRows(T* v, bool normalize) {
    unique_.assign(static_cast<size_t>(N_), 0);
    const int64_t avg = N_ > 0 ? static_cast<int64_t>(col_.size()) / N_ + 1 : 1;
    parallelFor(N_, grainFor(4 * avg, 64), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        int32_t* c = col_.data() + rowPtr_[r];
        const int64_t len = rowPtr_[r + 1] - rowPtr_[r];
        const double a = normalize ? invSqrt_[r] : 1.0;
        // The usual row (edges listed by source, no repeats) is already strictly increasing: one weight each.
        if (std::adjacent_find(c, c + len, std::greater_equal<int32_t>()) == c + len) {
          T* vr = v + rowPtr_[r];
          for (int64_t k = 0; k < len; ++k) vr[k] = static_cast<T>(normalize ? a * invSqrt_[c[k]] : 1.0);
          unique_[r] = len;
          continue;
        }
        if (!std::is_sorted(c, c + len)) std::sort(c, c + len);
        int64_t u = 0;
        for (int64_t k = 0; k < len;) {
          const int32_t cc = c[k];
          const double w = normalize ? a * invSqrt_[cc] : 1.0;
          double sum = w;
          for (++k; k < len && c[k] == cc; ++k) sum += w;
          c[u] = cc;
          v[rowPtr_[r] + u] = static_cast<T>(sum);
          ++u;
        }
        unique_[r] = u;
      }
    });
  }

  // Closes the gaps the merged duplicates left (rows only move towards the front).
  template <class T>
  void compact(T* v) {
    int64_t out = 0;
    for (int64_t r = 0; r < N_; ++r) {
      const int64_t from = rowPtr_[r], n = unique_[r];
      if (from != out) {
        std::copy(col_.begin() + from, col_.begin() + from + n, col_.begin() + out);
        std::copy(v + from, v + from + n, v + out);
      }
      rowPtr_[r] = out;
      out += n;
    }
    rowPtr_[N_] = out;
  }

  const Tensor src_, dst_;
  const int64_t *s_ = nullptr, *d_ = nullptr;
  int64_t E_, N_;
  bool loops_;
  int64_t chunks_ = 1, perChunk_ = 0;
  std::vector<int32_t> slot_;
  std::vector<int64_t> rowPtr_;
  std::vector<double> invSqrt_;
  std::vector<int32_t> col_;
  std::vector<int64_t> unique_;
};

}  // namespace

SparseMatrix GCNConv::normalizedAdjacency(const Tensor& edgeIndex, int64_t numNodes, bool addSelfLoops,
                                          bool normalize, DType dtype) {
  return AdjacencyBuilder(edgeIndex, numNodes, addSelfLoops).build(normalize, dtype);
}

bool GCNConv::AdjacencyCache::Entry::matches(const Tensor& ei, uint64_t v, int64_t n) const {
  return edgeIndex.storageId() == ei.storageId() && data == ei.raw() && version == v &&
         edgeIndex.shape() == ei.shape() && numNodes == n;
}

GCNConv::AdjacencyCache::Entry GCNConv::AdjacencyCache::keyOf(const Tensor& edgeIndex, uint64_t version,
                                                               int64_t numNodes) {
  Entry e;
  e.edgeIndex = edgeIndex;
  e.data = edgeIndex.raw();
  e.version = version;
  e.numNodes = numNodes;
  return e;
}

void GCNConv::AdjacencyCache::keep(const Tensor& edgeIndex, int64_t numNodes) {
  Entry k = keyOf(edgeIndex, edgeIndex.version(), numNodes);
  std::lock_guard<std::mutex> lock(mu_);
  kept_ = std::move(k);
  keptBuilt_ = false;
}

SparseMatrix GCNConv::AdjacencyCache::get(const Tensor& edgeIndex, int64_t numNodes,
                                          const std::function<SparseMatrix()>& build, bool* built) {
  // The version is read before the build: a write that races with it makes the next call rebuild.
  const uint64_t version = edgeIndex.version();
  bool isKept = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    isKept = kept_.matches(edgeIndex, version, numNodes);
    if (isKept && keptBuilt_) return kept_.matrix;
    if (!isKept)
      for (const Entry& e : entries_)
        if (e.matches(edgeIndex, version, numNodes)) return e.matrix;
  }
  Entry e = keyOf(edgeIndex, version, numNodes);
  e.matrix = build();
  *built = true;
  std::lock_guard<std::mutex> lock(mu_);
  if (isKept) {
    if (!kept_.matches(edgeIndex, version, numNodes)) return e.matrix;  // replaced by keep() meanwhile
    if (!keptBuilt_) {
      kept_.matrix = e.matrix;
      keptBuilt_ = true;
    }
    return kept_.matrix;
  }
  for (const Entry& other : entries_)
    if (other.matches(edgeIndex, version, numNodes)) return other.matrix;  // another thread built it meanwhile
  SparseMatrix m = e.matrix;
  entries_.push_front(std::move(e));
  while (entries_.size() > capacity_) entries_.pop_back();
  return m;
}

void GCNConv::AdjacencyCache::forget(const Tensor& edgeIndex, int64_t numNodes) {
  const uint64_t version = edgeIndex.version();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->matches(edgeIndex, version, numNodes)) {
      entries_.erase(it);
      return;
    }
}

void GCNConv::AdjacencyCache::setCapacity(size_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = std::max<size_t>(capacity, 1);
  while (entries_.size() > capacity_) entries_.pop_back();
}

void GCNConv::shareAdjacencyWith(GCNConv& other) {
  GNN_CHECK_ARG(opt_.addSelfLoops == other.opt_.addSelfLoops && opt_.normalize == other.opt_.normalize &&
                    opt_.dtype == other.opt_.dtype && opt_.cached == other.opt_.cached,
                "GCNConv::shareAdjacencyWith: the layers build different matrices (options differ)");
  other.cache_->setCapacity(2);
  cache_ = other.cache_;
}

void GCNConv::forgetAdjacency(const Tensor& edgeIndex, int64_t numNodes) { cache_->forget(edgeIndex, numNodes); }

void GCNConv::keepAdjacencyOf(const Tensor& edgeIndex, int64_t numNodes) { cache_->keep(edgeIndex, numNodes); }

void GCNConv::prepareAdjacency(const Tensor& edgeIndex, int64_t numNodes) {
  // Whether it is its own transpose is what spmm's backward asks next: answered here too (once per matrix).
  if (opt_.cached) (void)adjacency(edgeIndex, numNodes).symmetric();
}

SparseMatrix GCNConv::build(const Tensor& edgeIndex, int64_t numNodes) {
  ExecutionContext& ctx = ExecutionContext::current();
  // As PyG 2.3.1: self-loops are part of the normalisation (gcn_norm); with normalize=false the edges are used as
  // they are, add_self_loops or not.
  SparseMatrix a =
      normalizedAdjacency(edgeIndex, numNodes, opt_.normalize && opt_.addSelfLoops, opt_.normalize, opt_.dtype);
  ++builds_;
  // Reported as its own op (PyG's gcn_norm), so a profile shows what the normalisation costs instead of adding
  // its time to the next op's (forward times are the gaps between events).
  if (OpObserver* obs = ctx.observer()) {
    const int64_t read = static_cast<int64_t>(edgeIndex.nbytes());
    const int64_t written = a.nnz() * (4 + static_cast<int64_t>(dtypeSize(a.dtype()))) + (a.rows() + 1) * 8;
    const OpInfo info{"gcnNorm", 0, read, written, 0};
    const auto now = std::chrono::steady_clock::now();
    OpEvent e{&info, Pass::Forward, ctx.block(), std::chrono::duration<double>(now - ctx.lastMark()).count(), 0,
              read + written, nullptr, 0, false};
    obs->onOp(e);
    ctx.setMark(std::chrono::steady_clock::now());
  }
  return a;
}

SparseMatrix GCNConv::adjacency(const Tensor& edgeIndex, int64_t numNodes) {
  if (!opt_.cached) return build(edgeIndex, numNodes);
  bool built = false;
  return cache_->get(edgeIndex, numNodes, [&] { return build(edgeIndex, numNodes); }, &built);
}

Variable GCNConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&, int64_t numNodes) {
  return spmm(adjacency(edgeIndex, numNodes), x);
}

Variable GCNConv::finish(const Variable& xw, const Tensor& edgeIndex, int64_t numNodes) {
  // As PyG's GCNConv: the bias is added after propagate, not in update().
  Variable out = propagate(edgeIndex, xw, Variable(), numNodes);
  return bias_ ? add(out, *bias_) : out;
}

Variable GCNConv::forward(const Variable& x, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_, "GCNConv(", in_, " -> ", out_, "): input has shape ",
                shapeString(x.shape()), ", expected [N, ", in_, "]");
  return finish(linear(x, *weight_), edgeIndex, x.dim(0));
}

Variable GCNConv::forward(const SparseMatrix& x, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.cols() == in_, "GCNConv(", in_, " -> ", out_, "): sparse input has ", x.cols(), " columns");
  // The sparse product takes its dense operand as [in, out]: the weight's transpose, a copy of in x out values
  // (a few thousand for bag-of-words inputs, against the product's nnz x out).
  return finish(spmm(x, transpose(*weight_, 0, 1)), edgeIndex, x.rows());
}

}  // namespace gnn
