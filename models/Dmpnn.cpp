#include "models/Dmpnn.h"

#include <cmath>

#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/nn/pool/GlobalPooling.h"
#include "gnn/ops/Ops.h"
#include "models/AtomEncoder.h"
#include "models/BondEncoder.h"
#include "models/BondMessages.h"
#include "models/GraphFeatures.h"
#include "models/KeyedDropoutScope.h"
#include "models/NodeFeatures.h"
#include "models/PaddingGraphRows.h"

namespace gnn {

namespace {

std::vector<int64_t> atomAndBondDims() {
  std::vector<int64_t> d = AtomEncoder::featureDims();
  for (int64_t b : BondEncoder::featureDims()) d.push_back(b);
  return d;
}

// [x_u || e_uv] of every edge u -> v as categories: int64 [E, 9 + 3] (W_i's one-hot input).
Tensor edgeInputs(const Batch& b) {
  const int64_t na = static_cast<int64_t>(AtomEncoder::featureDims().size());
  const int64_t nb = static_cast<int64_t>(BondEncoder::featureDims().size());
  GNN_CHECK_ARG(b.x.defined() && b.x.dtype() == DType::I64 && b.x.rank() == 2 && b.x.dim(0) == b.numNodes &&
                    b.x.dim(1) == na,
                "Dmpnn: expects OGB's int64 atom features [numNodes, ", na, "] (smiles2graph), got ",
                b.x.defined() ? dtypeName(b.x.dtype()) + std::string(" ") + shapeString(b.x.shape()) : "none");
  const int64_t E = b.edgeIndex.dim(1);
  GNN_CHECK_ARG(b.edgeAttr.defined() && b.edgeAttr.dtype() == DType::I64 && b.edgeAttr.rank() == 2 &&
                    b.edgeAttr.dim(0) == E && b.edgeAttr.dim(1) == nb,
                "Dmpnn: expects OGB's int64 bond features [numEdges, ", nb, "] (smiles2graph), got ",
                b.edgeAttr.defined() ? dtypeName(b.edgeAttr.dtype()) + std::string(" ") + shapeString(b.edgeAttr.shape())
                                     : "none");
  Tensor out({E, na + nb}, DType::I64);
  const int64_t* x = b.x.data<int64_t>();
  const int64_t* ea = b.edgeAttr.data<int64_t>();
  const int64_t* src = b.edgeIndex.data<int64_t>();
  int64_t* o = out.data<int64_t>();
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(src[e] >= 0 && src[e] < b.numNodes, "Dmpnn: edge ", e, " leaves atom ", src[e], " of ", b.numNodes);
    std::copy(x + src[e] * na, x + (src[e] + 1) * na, o + e * (na + nb));
    std::copy(ea + e * nb, ea + (e + 1) * nb, o + e * (na + nb) + na);
  }
  return out;
}

ReverseEdges reverseFromState(const BlockState& s) {
  ReverseEdges rev;
  rev.index = s.get("rev").value();
  if (s.has("rev_mask")) rev.mask = s.get("rev_mask").value();
  return rev;
}

}  // namespace

void DmpnnOptions::validate() const {
  GNN_CHECK_ARG(hidden >= 1 && depth >= 1 && tasks >= 1 && ffnHidden >= 1 && ffnLayers >= 0 && graphFeatures >= 0 &&
                    nodeFeatures >= 0,
                "Dmpnn: hidden, depth, tasks and ffnHidden must be >= 1, ffnLayers, graphFeatures and nodeFeatures >= 0");
  GNN_CHECK_ARG(dropout >= 0 && dropout < 1, "Dmpnn: dropout must be in [0, 1), got ", dropout);
  GNN_CHECK_ARG(aggregation == "mean" || aggregation == "sum" || aggregation == "norm",
                "Dmpnn: aggregation must be mean, sum or norm, got '", aggregation, "'");
  GNN_CHECK_ARG(aggregationNorm > 0 && std::isfinite(aggregationNorm), "Dmpnn: aggregationNorm must be finite and > 0");
}

Dmpnn::Dmpnn(DmpnnOptions options, Generator& gen)
    : opt_((options.validate(), options)),
      wi_(atomAndBondDims(), opt_.nodeFeatures, opt_.hidden, gen, /*bias=*/false, opt_.dtype),
      wh_(opt_.hidden, opt_.hidden, gen, /*bias=*/false, opt_.dtype),
      wo_(AtomEncoder::featureDims(), opt_.nodeFeatures + opt_.hidden, opt_.hidden, gen, /*bias=*/true, opt_.dtype) {
  registerModule("W_i", wi_);
  registerModule("W_h", wh_);
  registerModule("W_o", wo_);
  for (int64_t l = 0; l <= opt_.ffnLayers; ++l) {
    const int64_t in = l == 0 ? opt_.hidden + opt_.graphFeatures : opt_.ffnHidden;
    const int64_t out = l == opt_.ffnLayers ? opt_.tasks : opt_.ffnHidden;
    ffn_.push_back(std::make_unique<Linear>(in, out, gen, true, opt_.dtype));
    registerModule("ffn." + std::to_string(l), *ffn_.back());
  }

  addBlock("input", [this](BlockState s, const Batch& b) {
    ReverseEdges rev = reverseEdges(b.edgeIndex, opt_.dtype);
    Variable h0 = opt_.nodeFeatures > 0
                      ? wi_.forward(edgeInputs(b), nodeFeaturesOfSources(b, opt_.nodeFeatures, opt_.dtype, "Dmpnn"))
                      : wi_.forward(edgeInputs(b));
    s.set("h0", h0);
    s.set("h", relu(h0));
    s.set("rev", Variable(rev.index));
    if (rev.mask.defined()) s.set("rev_mask", Variable(rev.mask));
    return s;
  });
  for (int64_t t = 0; t + 1 < opt_.depth; ++t)
    addBlock("layers/" + std::to_string(t), [this](BlockState s, const Batch& b) {
      Variable m = bondMessages(s.get("h"), b.edgeIndex, reverseFromState(s), b.numNodes);
      s.set("h", layerDropout(relu(add(s.get("h0"), wh_.forward(m))), opt_.dropout, isTraining(), RowLevel::Edge));
      return s;
    });
  addBlock("atoms", [this](BlockState s, const Batch& b) {
    Variable m = scatterSum(s.get("h"), edgeRow(b.edgeIndex, 1), b.numNodes);  // m_v = sum_{k -> v} h_kv
    BlockState out;  // the bond states end here: only the atoms' move on
    if (opt_.nodeFeatures > 0) m = concatCols({nodeFeaturesInput(b, opt_.nodeFeatures, opt_.dtype, "Dmpnn"), m});
    out.set("h", layerDropout(relu(wo_.forward(b.x, m)), opt_.dropout, isTraining(), RowLevel::Node));
    return out;
  });
  addBlock("head", [this](BlockState s, const Batch& b) {
    Variable y = aggregate(s.get("h"), b);
    for (size_t l = 0; l < ffn_.size(); ++l) {
      if (l > 0) y = layerDropout(relu(y), opt_.dropout, isTraining(), RowLevel::Graph);
      y = ffn_[l]->forward(y);
    }
    return outputState(zeroPaddingGraphRows(y, b));
  });
}

std::unique_ptr<Module> Dmpnn::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<Dmpnn>(opt_, unused));
}

Variable Dmpnn::aggregate(const Variable& atoms, const Batch& b) const {
  Variable pooled;
  if (opt_.aggregation == "mean") {
    pooled = globalMeanPool(atoms, b.ptr, b.graphsMask);
  } else {
    Variable sum = globalSumPool(atoms, b.ptr, b.graphsMask);
    pooled = opt_.aggregation == "norm" ? scale(sum, 1.0 / opt_.aggregationNorm) : sum;
  }
  if (opt_.graphFeatures == 0) return pooled;
  return concatCols({pooled, graphFeaturesInput(b, opt_.graphFeatures, opt_.dtype, "Dmpnn")});
}

Variable Dmpnn::moleculeEmbeddings(const Batch& b) {
  return aggregate(runBlocks(BlockState(), b, 0, blockIndex("head")).get("h"), b);
}

}  // namespace gnn
