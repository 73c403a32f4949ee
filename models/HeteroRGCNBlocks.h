// HeteroRGCNBlocks: R-GCN on a heterogeneous graph (models/HeteroRGCN.h) as a BlockModel, so a device runs it by
// blocks on a typed graph's Batch (models/TypedGraphBatch.h): "input" (the embeddings, features or their Linear,
// type after type) and "layers/<l>" (one RGCNConv with its ReLU and dropout; the last over the target type's rows).
// The same ops in the same order as HeteroRGCN::forward on the same graph, so the same bits. The model keeps
// HeteroRGCN's parameter names ("emb.author.weight", "convs.0.weight"): it is registered under the empty name.
//
//   HeteroRGCNBlocks net(std::make_unique<HeteroRGCN>(options, gen), layout);
//   Variable logits = net.model().forward(features, h.edgeIndex, h.edgeType);   // the whole graph, directly
//   Variable same = net.forward(typedGraphBatch(layout, features, h.edgeIndex, h.edgeType, y, trainMask));
//   net.setLayout(sampled);   // a sampled batch's rows per type, its featureless rows' ids in z (nodeIds)
#pragma once
#include <memory>

#include "models/BlockModel.h"
#include "models/HeteroRGCN.h"
#include "models/TypedGraphBatch.h"

namespace gnn {

class HeteroRGCNBlocks : public BlockModel {
 public:
  /// `layout`: the rows per type of the batches the blocks run on (widths are the model's).
  HeteroRGCNBlocks(std::unique_ptr<HeteroRGCN> model, TypedBatchLayout layout);

  using BlockModel::forward;
  HeteroRGCN& model() { return *model_; }
  const TypedBatchLayout& layout() const { return layout_; }
  /// The batches a device will run: another layout of the same types (a sampled batch's rows, with node ids).
  void setLayout(TypedBatchLayout layout);
  std::unique_ptr<Module> clone() const override;

 private:
  std::unique_ptr<HeteroRGCN> model_;
  TypedBatchLayout layout_;
};

}  // namespace gnn
