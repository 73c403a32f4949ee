// Dataset: an indexed collection of graphs. InMemoryDataset holds them in a vector; on-disk datasets
// (NpzDataset) implement the same interface so loaders never care where graphs come from.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "data/Graph.h"

namespace gnn {

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual size_t size() const = 0;
  /// Graph i (0 <= i < size()); tensors may share storage with the dataset, so do not modify them in place.
  virtual Graph get(size_t i) const = 0;
  /// Nodes and edges of graph i without materialising it (loaders size batches with these).
  virtual int64_t numNodes(size_t i) const { return get(i).numNodes; }
  virtual int64_t numEdges(size_t i) const { return get(i).numEdges(); }
};

class InMemoryDataset : public Dataset {
 public:
  InMemoryDataset() = default;
  explicit InMemoryDataset(std::vector<Graph> graphs) : graphs_(std::move(graphs)) {}
  size_t size() const override { return graphs_.size(); }
  Graph get(size_t i) const override { return graphs_.at(i); }
  int64_t numNodes(size_t i) const override { return graphs_.at(i).numNodes; }
  int64_t numEdges(size_t i) const override { return graphs_.at(i).numEdges(); }
  void push(Graph g) { graphs_.push_back(std::move(g)); }
  std::vector<Graph>& graphs() { return graphs_; }
  const std::vector<Graph>& graphs() const { return graphs_; }

 private:
  std::vector<Graph> graphs_;
};

/// A view of some graphs of another dataset (a split), by index.
class Subset : public Dataset {
 public:
  Subset(std::shared_ptr<const Dataset> base, std::vector<size_t> indices)
      : base_(std::move(base)), indices_(std::move(indices)) {}
  size_t size() const override { return indices_.size(); }
  Graph get(size_t i) const override { return base_->get(indices_.at(i)); }
  int64_t numNodes(size_t i) const override { return base_->numNodes(indices_.at(i)); }
  int64_t numEdges(size_t i) const override { return base_->numEdges(indices_.at(i)); }
  const std::vector<size_t>& indices() const { return indices_; }

 private:
  std::shared_ptr<const Dataset> base_;
  std::vector<size_t> indices_;
};

}  // namespace gnn
