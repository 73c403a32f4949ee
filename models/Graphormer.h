// Graphormer: the graph transformer of Ying et al., "Do Transformers Really Perform Bad for Graph
// Representation?" (NeurIPS 2021), as trained for PCQM4M's HOMO-LUMO gap, on fixed-size batches.
//
// Each graph becomes T = maxNodes + 1 rows: a learned graph token, then its atoms (CentralityEncoding: atom
// features + degrees); padding slots and padding graphs are masked out of every attention. The attention bias
// [G, heads, T, T] is computed once per batch and shared by all layers: SpatialEncoding (shortest-path
// distance) + EdgeEncoding (bond features along the path), and a learned virtual distance between the token
// and every node (graph_token_virtual_distance). Then `layers` pre-LayerNorm GraphormerLayers, a final
// LayerNorm, and a Linear head on the graph token's row. Blocks: "input" (encodings and bias), "layers/0" ..
// "layers/L-1", "head"; the state carries "h", "bias" and "rows" (packed, the default: "h" [R, hidden] holds
// each graph's token and atoms, graph after graph, R = real graphs' atoms + G) or "mask" (packedRows off: "h"
// [G·T, hidden], padding rows computed and masked, the static shapes an IPU compiles).
//
// Inputs come from the batch, as a dataset built with Graphormer encodings stores them (build_dataset
// --graphormer-max-dist 5; data/GraphormerEncodings.h) and FixedSizeCollator lays them out: x [N, 9],
// inDegree [N], spatialPos [G·M, M], edgeInput [G·M, M, K >= multiHopMaxDist, 3], ptr, graphsMask, nodesMask,
// with M = batch.maxNodesPerGraph = options.maxNodes (FixedSizeOptions::maxNodesPerGraph; graphs with more
// atoms are the loader's OverSizeStrategy's to skip, trim or refuse, where Graphormer's collator drops them
// silently).
//
//   GraphormerOptions opt = GraphormerOptions::slim();   // 12 layers, hidden 80, 8 heads, FFN 80
//   Graphormer model(opt, gen);
//   FixedSizeOptions fixed = FixedSizeOptions::fromDataset(ds, 65);   // 64 molecules + a padding graph
//   fixed.maxNodesPerGraph = opt.maxNodes;               // and OverSizeStrategy::Skip, as Graphormer drops
//   ExecutionContext::current().setRandomKey({seed, step, 0});        // this step's dropout masks
//   Variable pred = model.forward(batch);                // [numGraphs, tasks]; padding graphs' rows are 0
//   Variable loss = l1Loss(pred, batch.y, batch.yMask);
//
// Real graphs' outputs are bit-identical however the batch is padded (same maxNodes): every op works per row,
// per graph or per (graph, head), and products round rows independently of their position.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/norm/LayerNorm.h"
#include "models/BlockModel.h"
#include "models/CentralityEncoding.h"
#include "models/EdgeEncoding.h"
#include "models/GraphormerLayer.h"
#include "models/SpatialEncoding.h"

namespace gnn {

struct GraphormerOptions {
  int64_t layers = 12;
  int64_t hidden = 80;
  int64_t heads = 8;
  int64_t ffn = 80;
  int64_t tasks = 1;
  /// Graphormer's max_node: the side M of the batch's node-pair blocks (batch.maxNodesPerGraph must equal
  /// it). 30, as the IPU port of Graphormer for PCQM4Mv2 used (PCQM4Mv2's molecules have at most 20 heavy
  /// atoms, the shipped style set at most 51). 0 = take every batch's maxNodesPerGraph as it comes.
  int64_t maxNodes = 30;
  /// Hops of a path the edge encoding reads (Graphormer's multi_hop_max_dist, 5 for PCQM4M).
  int64_t multiHopMaxDist = 5;
  /// Dropouts of Graphormer's PCQM4M scripts (examples/property_prediction/pcqv1.sh, pcqv2.sh): --dropout 0.0
  /// (input embeddings, attention output, FFN output), --attention-dropout 0.1, --act-dropout 0.1 (after
  /// GELU).
  double dropout = 0.0;
  double attentionDropout = 0.1;
  double activationDropout = 0.1;
  /// Parameter and activation dtype (float64 for gradient checks).
  DType dtype = DType::F32;
  /// Run the layers on each graph's real rows only (its token and atoms, graph after graph: no padding rows
  /// computed) rather than on [G·T] blocks. Eval outputs are the same bits either way; in training the
  /// dropouts after the attention and the FFN draw their masks over the packed rows. false for a device that
  /// compiles static shapes (the simulated IPU: its plans count what the blocks cost).
  bool packedRows = true;

  /// graphormer_slim (graphormer/models/graphormer.py): 12 layers, hidden 80, 8 heads, FFN 80.
  static GraphormerOptions slim();
  /// graphormer_base as trained on PCQM4M: 12 layers, hidden 768, 32 heads, FFN 768.
  static GraphormerOptions base();
  /// "slim" | "base"; throws std::invalid_argument naming both for anything else.
  static GraphormerOptions named(const std::string& name);
  /// Throws std::invalid_argument naming the first option out of range.
  void validate() const;
};

class Graphormer : public BlockModel {
 public:
  Graphormer(GraphormerOptions options, Generator& gen);
  const char* name() const { return "graphormer"; }
  const GraphormerOptions& options() const { return opt_; }
  std::unique_ptr<Module> clone() const override;

  /// The graph-level vector the head reads, [numGraphs, hidden]: each graph token's row after the final
  /// LayerNorm; padding graphs' rows are 0. forward() is the head applied to exactly these values.
  Variable graphEmbeddings(const Batch& batch);

  /// The key mask of a batch: [G, M + 1] uint8, 1 for each graph's token and for the atoms of real graphs.
  static Tensor keyMask(const Batch& batch, int64_t maxNodes);
  /// Row offsets [G + 1] of the packed rows a key mask keeps (graph g has as many rows as keys kept).
  static Tensor packedRowPtr(const Tensor& keyMask);
  /// The [G·T] rows a key mask keeps, in order: [rowPtr[G]] int64.
  static Tensor keptRows(const Tensor& keyMask, const Tensor& rowPtr);
  /// Packed rows on or off (GraphormerOptions::packedRows); clones keep the setting.
  void setPackedRows(bool on) { opt_.packedRows = on; }

 private:
  /// Checks the batch carries Graphormer's fields with shapes that fit these options; returns M.
  int64_t checkBatch(const Batch& batch) const;
  /// The graph tokens' rows of the last layer's "h" (dense [G·T, hidden] or packed), through the final
  /// LayerNorm: [G, hidden].
  Variable readout(const BlockState& state, const Batch& batch) const;

  GraphormerOptions opt_;
  CentralityEncoding centrality_;
  SpatialEncoding spatial_;
  EdgeEncoding edges_;
  Variable* graphToken_;
  Variable* virtualDistance_;
  std::vector<std::unique_ptr<GraphormerLayer>> layers_;
  LayerNorm finalNorm_;
  Linear head_;
};

}  // namespace gnn
