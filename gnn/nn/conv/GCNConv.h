// GCNConv: the graph convolution of Kipf & Welling (ICLR 2017),
//   X' = D^-1/2 (A + I) D^-1/2 X W^T + b,
// with D the in-degree (plus one self-loop) at each target node, as PyG 2.3.1's GCNConv with its defaults
// (add_self_loops=True, normalize=True, bias=True, Glorot weight, zero bias), its parameters named and shaped as
// PyG's state_dict: "lin.weight" [out, in] and "bias" [out]. Message passing goes through
// propagate(), whose fused messageAndAggregate() is one sparse-dense product (SpMM) with the normalised
// adjacency. That matrix is built once per graph and cached (`cached`, on by default for full-batch training;
// turn it off when every batch is a different graph). The cache is keyed by the edge_index buffer's identity
// and version (Tensor::storageId, Tensor::version), its view, shape and the node count: a buffer overwritten
// in place, as a device with static input buffers does every step, is a new graph. Layers of one model that run
// on the same graph can share one cache (shareAdjacencyWith), so the graph's matrix, and the transpose its
// backward builds, are made once per graph rather than once per layer.
//
//   GCNConv conv(1433, 16, gen);
//   Variable h = conv.forward(x, edgeIndex);            // dense features [N, 1433]
//   Variable h = conv.forward(xSparse, edgeIndex);      // sparse features (bag of words)
#pragma once
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/system/Random.h"

namespace gnn {

/// PyG's keyword arguments (bias, cached, add_self_loops, normalize; improved=True is not offered).
struct GCNConvOptions {
  bool bias = true;
  bool cached = true;
  /// Self-loops belong to the normalisation, as in PyG: without normalize the edges are used as they are.
  bool addSelfLoops = true;
  bool normalize = true;
  DType dtype = DType::F32;
};

class GCNConv : public MessagePassing {
 public:
  GCNConv(int64_t inChannels, int64_t outChannels, Generator& gen, GCNConvOptions options = {});
  /// From PyG's keyword arguments (in_channels, out_channels, cached, add_self_loops, normalize, bias; improved
  /// must be false): std::invalid_argument for any other.
  static std::unique_ptr<GCNConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  Variable forward(const Variable& x, const Tensor& edgeIndex);
  /// Same with constant sparse input features (the product X W runs sparse).
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex);
  void resetParameters(Generator& gen);
  /// A copy with the same weights and an empty cache.
  std::unique_ptr<Module> clone() const override;

  /// The propagation matrix: row = target, column = source, D^-1/2 (A + I) D^-1/2 (or A, A + I when asked).
  /// With addSelfLoops every node has exactly one self-loop: the edges' own are replaced by it (PyG's
  /// add_remaining_self_loops). Duplicate edges count in the degree and are summed into one entry; columns are
  /// sorted within a row. O(E) (a counting sort by
  /// target), rows finished in parallel; the same bits for any thread count.
  static SparseMatrix normalizedAdjacency(const Tensor& edgeIndex, int64_t numNodes, bool addSelfLoops = true,
                                          bool normalize = true, DType dtype = DType::F32);
  /// "lin.weight" [out, in], as PyG's `lin.weight`.
  Variable& weight() { return *weight_; }
  Variable* bias() { return bias_; }
  /// Normalised adjacencies this layer built so far (cache misses, or every call when not cached).
  int64_t adjacencyBuilds() const { return builds_.load(); }
  /// From now on this layer uses `other`'s cache (same options required): a graph's matrix built by either layer
  /// serves both. The shared cache keeps the two most recent graphs, so pipeline stages running the layers on
  /// different micro-batches at once do not evict each other's.
  void shareAdjacencyWith(GCNConv& other);
  /// Drops the cached matrix of this graph, if any (a model's last layer on a graph that will not come back).
  void forgetAdjacency(const Tensor& edgeIndex, int64_t numNodes);
  /// A cached layer keeps this graph's matrix, once built, whatever other graphs come and go (forgetAdjacency
  /// included): the whole graph that every evaluation of Cluster-GCN comes back to between its cluster batches.
  /// One graph; a later call replaces it. Shared with the layers that share this cache.
  void keepAdjacencyOf(const Tensor& edgeIndex, int64_t numNodes);
  /// Builds this graph's matrix into the cache now (when cached), and checks whether it is symmetric (its
  /// backward's question), e.g. on a loader's thread while the previous batch trains; the forward on the graph
  /// then finds it. Thread-safe.
  void prepareAdjacency(const Tensor& edgeIndex, int64_t numNodes);

  /// Normalised adjacencies keyed by graph (see the top of this file); thread-safe, most recent first.
  class AdjacencyCache {
   public:
    explicit AdjacencyCache(size_t capacity) : capacity_(capacity) {}
    /// The graph's matrix; on a miss `build()` runs (outside the lock) and *built is set.
    SparseMatrix get(const Tensor& edgeIndex, int64_t numNodes, const std::function<SparseMatrix()>& build,
                     bool* built);
    void forget(const Tensor& edgeIndex, int64_t numNodes);
    void setCapacity(size_t capacity);
    /// The graph whose matrix is kept apart from the others (never evicted, never forgotten).
    void keep(const Tensor& edgeIndex, int64_t numNodes);

   private:
    struct Entry {
      // Holding the edge_index keeps its storage alive, so no other buffer can take its identity; the version
      // says whether it was written since.
      Tensor edgeIndex;
      const void* data = nullptr;  // the view's first element (slices share a storage)
      uint64_t version = 0;
      int64_t numNodes = -1;
      SparseMatrix matrix;
      bool matches(const Tensor& ei, uint64_t v, int64_t n) const;
    };
    static Entry keyOf(const Tensor& edgeIndex, uint64_t version, int64_t numNodes);
    std::mutex mu_;
    std::deque<Entry> entries_;
    size_t capacity_;
    Entry kept_;     // its key (numNodes -1: none); its matrix once built
    bool keptBuilt_ = false;
  };

 protected:
  /// A_hat X: the normalised adjacency times the (already transformed) features.
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  Variable finish(const Variable& xw, const Tensor& edgeIndex, int64_t numNodes);
  SparseMatrix adjacency(const Tensor& edgeIndex, int64_t numNodes);
  SparseMatrix build(const Tensor& edgeIndex, int64_t numNodes);

  int64_t in_, out_;
  GCNConvOptions opt_;
  Variable* weight_;  // [out, in]
  Variable* bias_ = nullptr;
  std::shared_ptr<AdjacencyCache> cache_ = std::make_shared<AdjacencyCache>(1);
  std::atomic<int64_t> builds_{0};
};

}  // namespace gnn
