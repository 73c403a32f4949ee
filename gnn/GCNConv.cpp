#include "gnn/GCNConv.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "gnn/ExecutionContext.h"
#include "gnn/Init.h"
#include "gnn/OpInfo.h"
#include "gnn/Parallel.h"

namespace gnn {

GCNConv::GCNConv(int64_t inChannels, int64_t outChannels, Generator& gen, GCNConvOptions options)
    : MessagePassing(Aggregation::Sum), in_(inChannels), out_(outChannels), opt_(options) {
  GNN_CHECK_ARG(inChannels > 0 && outChannels > 0, "GCNConv: channel counts must be positive");
  weight_ = &registerParameter("weight", Tensor({in_, out_}, opt_.dtype));
  if (opt_.bias) bias_ = &registerParameter("bias", Tensor({out_}, opt_.dtype));
  resetParameters(gen);
}

std::unique_ptr<Module> GCNConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GCNConv>(in_, out_, unused, opt_));
}

void GCNConv::resetParameters(Generator& gen) {
  weight_->value() = init::glorotUniform({in_, out_}, in_, out_, gen, opt_.dtype);
  if (bias_) bias_->value() = Tensor({out_}, opt_.dtype);
}

SparseMatrix GCNConv::normalizedAdjacency(const Tensor& edgeIndex, int64_t numNodes, bool addSelfLoops,
                                          bool normalize, DType dtype) {
  // Read through const views: a non-const access would bump the buffer's version and defeat the cache.
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  const int64_t E = edgeIndex.dim(1);
  const int64_t *s = src.data<int64_t>(), *d = dst.data<int64_t>();
  GNN_CHECK_ARG(numNodes >= 0 && numNodes <= INT32_MAX, "GCNConv: ", numNodes,
                " nodes exceed the sparse matrix's 32-bit column index");
  // A counting sort by target over a few fixed chunks of edges, in parallel: each chunk counts its targets, the
  // counts give every chunk its own slots in each row after the earlier chunks', and each chunk fills its slots
  // in edge order. That is the stable order of one serial pass, whatever the threads (the chunks depend on E
  // only); at most 4 of them, so the per-chunk counts cost at most 16 bytes a node.
  const int64_t chunks = std::clamp<int64_t>(E >> 18, 1, 4);
  const int64_t perChunk = (E + chunks - 1) / chunks;
  const int64_t N = numNodes;
  std::vector<int32_t> slot(static_cast<size_t>(chunks * N), 0);  // chunk c, row r: slot[c * N + r]
  std::vector<int64_t> badEdge(static_cast<size_t>(chunks), -1);
  std::vector<std::vector<int32_t>> loops(static_cast<size_t>(chunks));
  parallelFor(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int32_t* count = slot.data() + c * N;
      for (int64_t k = c * perChunk; k < std::min(E, (c + 1) * perChunk); ++k) {
        if (s[k] < 0 || s[k] >= N || d[k] < 0 || d[k] >= N) {
          badEdge[c] = k;  // reported below: no exception may leave a parallel loop
          break;
        }
        ++count[d[k]];
        if (s[k] == d[k]) loops[c].push_back(static_cast<int32_t>(s[k]));
      }
    }
  });
  for (int64_t k : badEdge)
    GNN_CHECK_ARG(k < 0, "GCNConv: edge ", k, " (", s[k], " -> ", d[k], ") points outside the ", N, " nodes");
  std::vector<char> hasLoop(static_cast<size_t>(N), 0);
  for (const auto& l : loops)
    for (int32_t v : l) hasLoop[v] = 1;
  loops.clear();
  // Row lengths (the degrees, duplicates and self-loops included), each chunk's start within its row, and
  // 1/sqrt(degree) in double, 0 for a node no entry points to (a dense D^-1/2 with 0^-1/2 taken as 0).
  std::vector<int64_t> rowPtr(static_cast<size_t>(N) + 1, 0);
  std::vector<double> invSqrt(static_cast<size_t>(N), 0.0);
  for (int64_t r = 0; r < N; ++r) {
    int64_t len = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t n = slot[c * N + r];
      slot[c * N + r] = static_cast<int32_t>(len);
      len += n;
    }
    GNN_CHECK_ARG(len < INT32_MAX, "GCNConv: node ", r, " receives ", len, " edges, more than 2^31");
    len += addSelfLoops && !hasLoop[r] ? 1 : 0;
    invSqrt[r] = len > 0 ? 1.0 / std::sqrt(static_cast<double>(len)) : 0.0;
    rowPtr[r + 1] = rowPtr[r] + len;
  }
  // Sources into their target's row in edge order, then the added self-loop last.
  std::vector<int32_t> col(static_cast<size_t>(rowPtr[N]));
  parallelFor(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int32_t* next = slot.data() + c * N;
      for (int64_t k = c * perChunk; k < std::min(E, (c + 1) * perChunk); ++k)
        col[rowPtr[d[k]] + next[d[k]]++] = static_cast<int32_t>(s[k]);
    }
  });
  slot = std::vector<int32_t>();
  if (addSelfLoops)
    for (int64_t r = 0; r < N; ++r)
      if (!hasLoop[r]) col[rowPtr[r + 1] - 1] = static_cast<int32_t>(r);
  hasLoop = std::vector<char>();
  // Each row: columns sorted, duplicates merged at the row's start. A duplicate's weight is the same a * b
  // every time, summed in double one copy after another, then rounded to `dtype` once: the bits of the
  // coordinate-sorting construction this replaces (SparseMatrix::fromCoo on every entry).
  std::vector<int64_t> unique(static_cast<size_t>(numNodes));
  Tensor values = Tensor::empty({static_cast<int64_t>(col.size())}, dtype);
  dispatchFloat(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* v = values.data<T>();
    const int64_t avg = numNodes > 0 ? static_cast<int64_t>(col.size()) / numNodes + 1 : 1;
    parallelFor(numNodes, grainFor(4 * avg, 64), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        int32_t* c = col.data() + rowPtr[r];
        const int64_t len = rowPtr[r + 1] - rowPtr[r];
        const double a = normalize ? invSqrt[r] : 1.0;
        // The usual row (edges listed by source, no repeats) is already strictly increasing: one weight each.
        if (std::adjacent_find(c, c + len, std::greater_equal<int32_t>()) == c + len) {
          T* vr = v + rowPtr[r];
          for (int64_t k = 0; k < len; ++k) vr[k] = static_cast<T>(normalize ? a * invSqrt[c[k]] : 1.0);
          unique[r] = len;
          continue;
        }
        // Else sorted first unless already (a padding node's row: all the padding edges, every one a self-loop).
        if (!std::is_sorted(c, c + len)) std::sort(c, c + len);
        int64_t u = 0;
        for (int64_t k = 0; k < len;) {
          const int32_t cc = c[k];
          const double w = normalize ? a * invSqrt[cc] : 1.0;
          double sum = w;
          for (++k; k < len && c[k] == cc; ++k) sum += w;
          c[u] = cc;
          v[rowPtr[r] + u] = static_cast<T>(sum);
          ++u;
        }
        unique[r] = u;
      }
    });
    // Close the gaps the merged duplicates left (rows only move towards the front).
    int64_t out = 0;
    for (int64_t r = 0; r < numNodes; ++r) {
      const int64_t from = rowPtr[r], n = unique[r];
      if (from != out) {
        std::copy(col.begin() + from, col.begin() + from + n, col.begin() + out);
        std::copy(v + from, v + from + n, v + out);
      }
      rowPtr[r] = out;
      out += n;
    }
    rowPtr[numNodes] = out;
  });
  const int64_t nnz = rowPtr[numNodes];
  if (nnz != static_cast<int64_t>(col.size())) {
    col.resize(static_cast<size_t>(nnz));
    col.shrink_to_fit();
    values = values.slice(0, nnz);
  }
  return SparseMatrix::fromCsr(numNodes, numNodes, std::move(rowPtr), std::move(col), std::move(values));
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
  SparseMatrix a = normalizedAdjacency(edgeIndex, numNodes, opt_.addSelfLoops, opt_.normalize, opt_.dtype);
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
  return finish(matmul(x, *weight_), edgeIndex, x.dim(0));
}

Variable GCNConv::forward(const SparseMatrix& x, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.cols() == in_, "GCNConv(", in_, " -> ", out_, "): sparse input has ", x.cols(), " columns");
  return finish(spmm(x, *weight_), edgeIndex, x.rows());
}

}  // namespace gnn
