#include "models/HeteroHGT.h"

#include <algorithm>
#include <map>

#include "gnn/autograd/Block.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Check.h"

namespace gnn {

HeteroHGT::HeteroHGT(HeteroHGTOptions options, Generator& gen) : opt_(std::move(options)) {
  GNN_CHECK_ARG(!opt_.nodeTypes.empty() && !opt_.edgeTypes.empty(), "HeteroHGT: no node types or no relations");
  GNN_CHECK_ARG(opt_.layers >= 1 && opt_.hidden >= 1 && opt_.outChannels >= 1 && opt_.heads >= 1,
                "HeteroHGT: layers, hidden, outChannels and heads must be positive, got ", opt_.layers, ", ",
                opt_.hidden, ", ", opt_.outChannels, ", ", opt_.heads);
  const auto known = std::find_if(opt_.nodeTypes.begin(), opt_.nodeTypes.end(),
                                  [&](const HeteroRGCNNodeType& t) { return t.name == opt_.targetType; });
  GNN_CHECK_ARG(known != opt_.nodeTypes.end(), "HeteroHGT: the target type '", opt_.targetType,
                "' is not a node type");
  // Backwards from the target: layer l reads the relations into the types layer l + 1 reads (their queries and
  // skips read those types' own rows too). A type the next layer reads must receive one: HGTConv gives a type no
  // relation reaches no output (PyG's None), which the next layer could not read.
  relations_.resize(static_cast<size_t>(opt_.layers));
  std::set<std::string> reads = {opt_.targetType};
  for (int64_t l = opt_.layers - 1; l >= 0; --l) {
    std::set<std::string> next = reads;
    for (const std::string& type : reads) {
      bool reached = false;
      for (const EdgeType& r : opt_.edgeTypes) {
        if (r.dst != type) continue;
        relations_[static_cast<size_t>(l)].insert(r);
        next.insert(r.src);
        reached = true;
      }
      GNN_CHECK_ARG(reached, "HeteroHGT: no relation reaches node type '", type, "', so HGTConv gives it no output ",
                    "for ", l + 1 == opt_.layers ? std::string("the classifier") : "layer " + std::to_string(l + 1));
    }
    reads = next;
  }
  inputTypes_ = reads;
  for (const HeteroRGCNNodeType& t : opt_.nodeTypes) {
    // A type without nodes has no rows to give: neither an embedding (torch's would be [0, hidden]) nor a Linear.
    const bool embedded = t.features <= 0 && t.numNodes > 0;
    embs_.push_back(embedded ? std::make_unique<Embedding>(t.numNodes, opt_.hidden, gen, /*xavierInit=*/true)
                             : nullptr);
    if (embs_.back()) registerModule("emb." + t.name, *embs_.back());
  }
  for (const HeteroRGCNNodeType& t : opt_.nodeTypes) {
    lins_.push_back(t.features > 0 ? std::make_unique<Linear>(t.features, opt_.hidden, gen) : nullptr);
    if (lins_.back()) registerModule("lin_dict." + t.name, *lins_.back());
  }
  std::vector<std::pair<std::string, int64_t>> widths;
  for (const HeteroRGCNNodeType& t : opt_.nodeTypes) widths.emplace_back(t.name, opt_.hidden);
  for (int64_t l = 0; l < opt_.layers; ++l) {
    convs_.push_back(std::make_unique<HGTConv>(widths, opt_.hidden, opt_.edgeTypes, gen, opt_.heads, "sum"));
    registerModule("convs." + std::to_string(l), *convs_.back());
  }
  if (opt_.layerNorm) {
    norms_.resize(static_cast<size_t>(opt_.layers));
    for (int64_t l = 0; l < opt_.layers; ++l)
      for (const HeteroRGCNNodeType& t : opt_.nodeTypes) {
        auto& norm = norms_[static_cast<size_t>(l)][t.name] = std::make_unique<LayerNorm>(opt_.hidden);
        registerModule("norms." + std::to_string(l) + "." + t.name, *norm);
      }
  }
  out_ = std::make_unique<Linear>(opt_.hidden, opt_.outChannels, gen);
  registerModule("lin", *out_);
}

std::unique_ptr<Module> HeteroHGT::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<HeteroHGT>(opt_, unused));
}

std::vector<std::pair<EdgeType, Tensor>> HeteroHGT::relationEdges(const Tensor& edgeIndex,
                                                                  const Tensor& edgeType) const {
  std::vector<int64_t> rows;
  for (const HeteroRGCNNodeType& t : opt_.nodeTypes) rows.push_back(t.numNodes);
  return relationEdges(edgeIndex, edgeType, rows);
}

std::vector<std::pair<EdgeType, Tensor>> HeteroHGT::relationEdges(const Tensor& edgeIndex, const Tensor& edgeType,
                                                                  const std::vector<int64_t>& typeRows) const {
  const int64_t R = static_cast<int64_t>(opt_.edgeTypes.size());
  GNN_CHECK_ARG(edgeIndex.defined() && edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 &&
                    edgeIndex.dtype() == DType::I64 && edgeType.defined() && edgeType.dtype() == DType::I64 &&
                    edgeType.numel() == edgeIndex.dim(1),
                "HeteroHGT: the typed graph's edges must be int64 [2, E] with int64 [E] types");
  GNN_CHECK_ARG(typeRows.size() == opt_.nodeTypes.size(), "HeteroHGT: ", typeRows.size(), " row counts for ",
                opt_.nodeTypes.size(), " node types");
  std::map<std::string, int64_t> offset;
  int64_t first = 0;
  for (size_t t = 0; t < typeRows.size(); ++t) {
    offset[opt_.nodeTypes[t].name] = first;
    first += typeRows[t];
  }
  const int64_t E = edgeIndex.dim(1);
  const int64_t *src = edgeIndex.data<int64_t>(), *dst = src + E, *type = edgeType.data<int64_t>();
  std::vector<int64_t> count(static_cast<size_t>(R), 0);
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(type[e] >= 0 && type[e] < R, "HeteroHGT: edge ", e, " has type ", type[e], ", not in [0, ", R, ")");
    ++count[static_cast<size_t>(type[e])];
  }
  std::vector<std::pair<EdgeType, Tensor>> out;
  std::vector<int64_t*> rows(static_cast<size_t>(R));
  for (int64_t r = 0; r < R; ++r) {
    out.emplace_back(opt_.edgeTypes[static_cast<size_t>(r)], Tensor::empty({2, count[static_cast<size_t>(r)]},
                                                                           DType::I64));
    rows[static_cast<size_t>(r)] = out.back().second.data<int64_t>();
  }
  std::vector<int64_t> filled(static_cast<size_t>(R), 0);
  for (int64_t e = 0; e < E; ++e) {
    const size_t r = static_cast<size_t>(type[e]);
    const EdgeType& t = opt_.edgeTypes[r];
    rows[r][filled[r]] = src[e] - offset.at(t.src);  // out of the type's range: HGTConv names the edge
    rows[r][count[r] + filled[r]] = dst[e] - offset.at(t.dst);
    ++filled[r];
  }
  return out;
}

std::map<std::string, Variable> HeteroHGT::inputRows(const std::vector<Tensor>& features) {
  GNN_CHECK_ARG(features.size() == opt_.nodeTypes.size(), "HeteroHGT: ", features.size(), " feature tensors for ",
                opt_.nodeTypes.size(), " node types");
  std::map<std::string, Variable> x;
  for (size_t t = 0; t < opt_.nodeTypes.size(); ++t) {
    const HeteroRGCNNodeType& type = opt_.nodeTypes[t];
    if (!inputTypes_.count(type.name)) continue;
    if (lins_[t]) {
      const Tensor& f = features[t];
      GNN_CHECK_ARG(f.defined() && f.rank() == 2 && f.dim(0) == type.numNodes && f.dim(1) == type.features,
                    "HeteroHGT: node type '", type.name, "' needs features [", type.numNodes, ", ", type.features,
                    "], got ", f.defined() ? shapeString(f.shape()) : std::string("none"));
      x.emplace(type.name, relu(lins_[t]->forward(Variable(f))));
    } else if (embs_[t]) {
      x.emplace(type.name, embs_[t]->weight());  // every row, in node order: the lookup of 0 .. N-1
    } else {
      x.emplace(type.name, Variable(Tensor::zeros({0, opt_.hidden})));
    }
  }
  return x;
}

std::map<std::string, Variable> HeteroHGT::batchInputRows(const std::vector<Tensor>& features,
                                                          const std::vector<Tensor>& nodeIds) {
  GNN_CHECK_ARG(features.size() == opt_.nodeTypes.size() && nodeIds.size() == opt_.nodeTypes.size(), "HeteroHGT: ",
                features.size(), " feature tensors and ", nodeIds.size(), " node id tensors for ",
                opt_.nodeTypes.size(), " node types");
  std::map<std::string, Variable> x;
  for (size_t t = 0; t < opt_.nodeTypes.size(); ++t) {
    const HeteroRGCNNodeType& type = opt_.nodeTypes[t];
    if (!inputTypes_.count(type.name)) continue;
    if (lins_[t]) {
      const Tensor& f = features[t];
      GNN_CHECK_ARG(f.defined() && f.rank() == 2 && f.dim(1) == type.features, "HeteroHGT: node type '", type.name,
                    "' needs its rows' features [rows, ", type.features, "]");
      x.emplace(type.name, relu(lins_[t]->forward(Variable(f))));
      continue;
    }
    const Tensor& ids = nodeIds[t];
    GNN_CHECK_ARG(ids.defined() && ids.dtype() == DType::I64 && ids.rank() == 1, "HeteroHGT: node type '", type.name,
                  "' has no features and needs its rows' node ids, int64 [rows]");
    // A type without nodes has no embedding; the batch still gives it its padding row, which no real row reads.
    x.emplace(type.name, embs_[t] ? embs_[t]->forward(ids) : Variable(Tensor::zeros({ids.dim(0), opt_.hidden})));
  }
  return x;
}

Variable HeteroHGT::forward(const std::vector<Tensor>& features,
                            const std::vector<std::pair<EdgeType, Tensor>>& edges) {
  std::map<std::string, Variable> x;
  {
    BlockScope scope("input");
    x = inputRows(features);
  }
  return layers(std::move(x), edges);
}

Variable HeteroHGT::forward(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds,
                            const std::vector<std::pair<EdgeType, Tensor>>& edges, int64_t targetRows) {
  std::map<std::string, Variable> x;
  {
    BlockScope scope("input");
    x = batchInputRows(features, nodeIds);
  }
  const Variable logits = layers(std::move(x), edges);
  GNN_CHECK_ARG(targetRows >= 0 && targetRows <= logits.value().dim(0), "HeteroHGT: ", targetRows,
                " target rows asked of the batch's ", logits.value().dim(0));
  return targetRows == logits.value().dim(0) ? logits : sliceRows(logits, 0, targetRows);
}

Variable HeteroHGT::layers(std::map<std::string, Variable> x, const std::vector<std::pair<EdgeType, Tensor>>& edges) {
  for (size_t l = 0; l < convs_.size(); ++l) {
    BlockScope scope("layers/" + std::to_string(l));
    x = layer(l, x, edges);
  }
  BlockScope scope("output");
  return output(x);
}

std::map<std::string, Variable> HeteroHGT::layer(size_t l, const std::map<std::string, Variable>& x,
                                                 const std::vector<std::pair<EdgeType, Tensor>>& edges) {
  GNN_CHECK_ARG(l < convs_.size(), "HeteroHGT: layer ", l, " of ", convs_.size());
  std::vector<std::pair<EdgeType, Tensor>> read;
  for (const auto& [type, edgeIndex] : edges)
    if (relations_[l].count(type)) read.emplace_back(type, edgeIndex);
  std::map<std::string, Variable> out = convs_[l]->forward(x, read);
  if (!norms_.empty())
    for (auto& [type, rows] : out) rows = norms_[l].at(type)->forward(rows);
  return out;
}

Variable HeteroHGT::output(const std::map<std::string, Variable>& x) {
  const auto target = x.find(opt_.targetType);
  GNN_CHECK_ARG(target != x.end(), "HeteroHGT: no edges of the relations into '", opt_.targetType, "' were given");
  return out_->forward(target->second);
}

}  // namespace gnn
