#include "models/SchNet.h"

#include <cmath>

#include "gnn/nn/conv/CFConv.h"
#include "gnn/nn/pool/GlobalPooling.h"
#include "gnn/ops/Ops.h"
#include "models/PaddingGraphRows.h"

namespace gnn {

void SchNetOptions::validate() const {
  GNN_CHECK_ARG(hidden >= 2 && filters >= 1 && interactions >= 1 && gaussians >= 2 && tasks >= 1,
                "SchNet: hidden >= 2, filters >= 1, interactions >= 1, gaussians >= 2 and tasks >= 1");
  GNN_CHECK_ARG(cutoff > 0 && std::isfinite(cutoff), "SchNet: cutoff must be finite and > 0, got ", cutoff);
  GNN_CHECK_ARG(!radiusGraphOnDevice || maxNeighbors >= 1,
                "SchNet: radiusGraphOnDevice needs maxNeighbors >= 1 (the fixed neighbours per atom), got ",
                maxNeighbors);
  GNN_CHECK_ARG(readout == "sum" || readout == "mean", "SchNet: readout must be sum or mean, got '", readout, "'");
  GNN_CHECK_ARG(scale.empty() || static_cast<int64_t>(scale.size()) == tasks, "SchNet: scale has ", scale.size(),
                " values for ", tasks, " task(s)");
  GNN_CHECK_ARG(shift.empty() || static_cast<int64_t>(shift.size()) == tasks, "SchNet: shift has ", shift.size(),
                " values for ", tasks, " task(s)");
  GNN_CHECK_ARG(atomref.empty() || static_cast<int64_t>(atomref.size()) == kElements * tasks, "SchNet: atomref has ",
                atomref.size(), " values, expected ", kElements, " elements x ", tasks, " task(s)");
  for (const auto* v : {&scale, &shift, &atomref})
    for (double x : *v) GNN_CHECK_ARG(std::isfinite(x), "SchNet: scale, shift and atomref must be finite");
}

SchNet::SchNet(SchNetOptions options, Generator& gen)
    : opt_((options.validate(), options)),
      rbf_(0.0, opt_.cutoff, opt_.gaussians),
      embedding_(SchNetOptions::kElements, opt_.hidden, gen, false, opt_.dtype),
      lin1_(opt_.hidden, opt_.hidden / 2, gen, true, opt_.dtype),
      lin2_(opt_.hidden / 2, opt_.tasks, gen, true, opt_.dtype) {
  registerModule("embedding", embedding_);
  for (int64_t i = 0; i < opt_.interactions; ++i) {
    interactions_.push_back(
        std::make_unique<SchNetInteraction>(opt_.hidden, opt_.gaussians, opt_.filters, gen, opt_.dtype));
    registerModule("interactions." + std::to_string(i), *interactions_.back());
  }
  lin1_.resetGlorot(gen);
  lin2_.resetGlorot(gen);
  registerModule("lin1", lin1_);
  registerModule("lin2", lin2_);
  const int64_t t = opt_.tasks;
  if (!opt_.scale.empty() || !opt_.shift.empty()) {
    std::vector<double> sc(static_cast<size_t>(t), 1.0), sh(static_cast<size_t>(t), 0.0);
    if (!opt_.scale.empty()) sc = opt_.scale;
    if (!opt_.shift.empty()) sh = opt_.shift;
    scale_ = Tensor::fromVector(sc).to(opt_.dtype);
    shift_ = Tensor::fromVector(sh).to(opt_.dtype);
  }
  if (!opt_.atomref.empty()) atomref_ = Tensor::fromVector(opt_.atomref, {SchNetOptions::kElements, t}).to(opt_.dtype);

  addBlock("input", [this](BlockState s, const Batch& b) {
    GNN_CHECK_ARG(b.pos.defined() && b.pos.rank() == 2 && b.pos.dim(0) == b.numNodes && b.pos.dim(1) == 3,
                  "SchNet: the batch has no atom positions [numNodes, 3] (build the dataset from SDF or XYZ, or "
                  "with conformers)");
    Tensor z = atomicNumbers(b);
    s.set("h", embedding_.forward(z));
    // On the device: the neighbour graph of this batch, handed to the interactions in the state.
    const Tensor edges = opt_.radiusGraphOnDevice
                             ? knnGraph(b.pos, b.batch, b.nodesMask, opt_.maxNeighbors, opt_.cutoff)
                             : b.edgeIndex;
    if (opt_.radiusGraphOnDevice) s.set("edge_index", Variable(edges));
    EdgePairs pairs = edgePairs(edges);
    // A caller that wants forces (or a gradient check) puts positions that require a gradient in the state.
    Variable pos = s.has("pos") ? s.get("pos") : Variable(b.pos.dtype() == opt_.dtype ? b.pos : b.pos.to(opt_.dtype));
    Variable dist = edgeDistances(pos, pairs.edgeIndex);  // [P]
    s.set("rbf", rbf_.forward(dist));
    s.set("cut", cosineCutoff(dist, opt_.cutoff));
    s.set("pair_of", Variable(pairs.pairOf));
    if (opt_.sharedMessagePlan)
      s.set("message_plan", Variable(messagePlan(edges, b.numNodes, b.numNodes, pairs.pairOf,
                                                 pairs.edgeIndex.dim(1))));
    s.set("z", Variable(z));
    return s;
  });
  for (int64_t i = 0; i < opt_.interactions; ++i)
    addBlock("interactions/" + std::to_string(i), [this, i](BlockState s, const Batch& b) {
      const Variable& h = s.get("h");
      const Tensor& edges = s.has("edge_index") ? s.get("edge_index").value() : b.edgeIndex;
      s.set("h", add(h, interactions_[i]->forward(h, edges, s.get("rbf"), s.get("cut"),
                                                   s.get("pair_of").value(), opt_.fusedCutoff,
                                                   s.has("message_plan") ? s.get("message_plan").value() : Tensor())));
      return s;
    });
  addBlock("head", [this](BlockState s, const Batch& b) {
    Variable atom = lin2_.forward(shiftedSoftplus(lin1_.forward(s.get("h"))));  // [N, tasks]
    if (scale_.defined()) atom = add(mul(atom, Variable(scale_)), Variable(shift_));
    if (atomref_.defined()) atom = add(atom, embedding(Variable(atomref_), s.get("z").value()));
    Variable out = opt_.readout == "mean" ? segmentMean(atom, b.ptr) : segmentSum(atom, b.ptr);
    return outputState(zeroPaddingGraphRows(out, b));
  });
}

std::unique_ptr<Module> SchNet::clone() const {
  Generator unused;
  return cloneInto(std::make_unique<SchNet>(opt_, unused));
}

Tensor SchNet::atomicNumbers(const Batch& b) {
  const int64_t n = b.numNodes;
  Tensor z({n}, DType::I64);
  int64_t* zp = z.data<int64_t>();
  if (b.z.defined()) {
    GNN_CHECK_ARG(b.z.numel() == n && b.z.dtype() == DType::I64, "SchNet: z must be int64 [numNodes]");
    std::copy(b.z.data<int64_t>(), b.z.data<int64_t>() + n, zp);
  } else {
    GNN_CHECK_ARG(b.x.defined() && b.x.dtype() == DType::I64 && b.x.rank() == 2 && b.x.dim(0) == n,
                  "SchNet: needs atomic numbers: the batch's z, or OGB's int64 atom features x");
    const int64_t f = b.x.dim(1);
    const int64_t* x = b.x.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) zp[i] = x[i * f] + 1;  // OGB's feature 0 is the atomic number - 1
  }
  const uint8_t* mask = b.nodesMask.defined() ? b.nodesMask.data<uint8_t>() : nullptr;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i]) {
      zp[i] = 0;  // padding atoms: any valid row; they reach no real atom
      continue;
    }
    GNN_CHECK_ARG(zp[i] >= 1 && zp[i] < SchNetOptions::kElements, "SchNet: atom ", i, " has atomic number ", zp[i],
                  ", outside the embedding's 1 .. ", SchNetOptions::kElements - 1);
  }
  return z;
}

}  // namespace gnn
