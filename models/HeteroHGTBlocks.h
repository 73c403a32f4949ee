// HeteroHGTBlocks: the Heterogeneous Graph Transformer (models/HeteroHGT.h) as a BlockModel, so a device runs it by
// blocks on a typed graph's Batch (models/TypedGraphBatch.h): "input" (each type's embedding or ReLU(Linear)),
// "layers/<l>" (one HGTConv over the relations it reads), "output" (the classifier on the target type's rows).
// Between blocks each type's rows travel as the state's "h/<type>". The same ops in the same order as
// HeteroHGT::forward, so the same bits; HeteroHGT's parameter names are kept (registered under the empty name).
//
//   HeteroHGTBlocks net(std::make_unique<HeteroHGT>(options, gen), layout);
//   Variable logits = net.forward(typedGraphBatch(layout, features, h.edgeIndex, h.edgeType, y, trainMask));
#pragma once
#include <memory>

#include "models/BlockModel.h"
#include "models/HeteroHGT.h"
#include "models/TypedGraphBatch.h"

namespace gnn {

class HeteroHGTBlocks : public BlockModel {
 public:
  /// `layout`: the rows per type of the batches the blocks run on (the whole graph: HGT trains full-batch).
  HeteroHGTBlocks(std::unique_ptr<HeteroHGT> model, TypedBatchLayout layout);

  using BlockModel::forward;
  HeteroHGT& model() { return *model_; }
  const TypedBatchLayout& layout() const { return layout_; }
  std::unique_ptr<Module> clone() const override;

 private:
  std::unique_ptr<HeteroHGT> model_;
  TypedBatchLayout layout_;
};

}  // namespace gnn
