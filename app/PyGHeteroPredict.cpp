#include "app/PyGHeteroPredict.h"

#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/Program.h"
#include "app/TrainingFlags.h"
#include "data/HeteroToHomogeneous.h"
#include "data/NpyWriter.h"
#include "data/OgbHeteroDataset.h"
#include "gnn/io/StateDict.h"
#include "gnn/nn/models/HeteroBasicGNN.h"
#include "gnn/nn/models/TypedLayerList.h"
#include "gnn/system/SystemInfo.h"
#include "models/HeteroHGT.h"

namespace gnn::app {

namespace {

const char* const kKinds[] = {"to_hetero", "to_homogeneous", "hgt"};

/// The spec's parts: the model kind and its JSON, the graph's transform and the target type.
struct HeteroSpec {
  std::string kind, target;
  nlohmann::json model;
  bool toUndirected = false;
};

HeteroSpec parseHeteroSpec(const nlohmann::json& spec, const std::string& path) {
  const auto bad = [&](const std::string& why) {
    return std::runtime_error(path + ": " + why +
                              " (a heterogeneous model is {\"to_hetero\": {...}}, {\"to_homogeneous\": {...}} or {\"hgt\": {...}}, "
                              "with \"to_undirected\": true|false and \"target\": \"<node type>\"; docs/pyg.md)");
  };
  HeteroSpec h;
  for (const auto& [k, v] : spec.items()) {
    if (k == "to_undirected" || k == "target") continue;
    if (k != kKinds[0] && k != kKinds[1] && k != kKinds[2]) throw bad("unknown key '" + k + "'");
    if (!h.kind.empty()) throw bad("both \"" + h.kind + "\" and \"" + k + "\": one model kind");
    h.kind = k;
    h.model = v;
  }
  if (!spec.contains("target") || !spec["target"].is_string())
    throw bad("\"target\" (the node type to predict) is required");
  h.target = spec["target"].get<std::string>();
  if (spec.contains("to_undirected") && !spec["to_undirected"].is_boolean())
    throw bad("\"to_undirected\" must be true or false");
  h.toUndirected = spec.value("to_undirected", false);
  return h;
}

/// Every node type's features (as read: no normalisation), required of each type.
std::vector<std::pair<std::string, Variable>> typeFeatures(const OgbHeteroDataset& ds, const std::string& data,
                                                           const std::string& kind) {
  std::vector<std::pair<std::string, Variable>> x;
  for (const std::string& t : ds.graph.nodeTypes()) {
    const Tensor& feat = ds.graph.node(t).x;
    if (!feat.defined())
      throw std::runtime_error(data + ": node type '" + t + "' has no features (raw/node-feat/" + t +
                               "/node-feat.csv.gz): " + kind + "'s model reads every node type's features");
    x.emplace_back(t, Variable(feat));
  }
  return x;
}

void loadWeights(Module& model, const PyGPredictFlags& f, const HeteroSpec& h) {
  try {
    loadStateDictInto(model, readStateDict(f.stateDict));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(f.stateDict + " does not fit " + f.spec + " (" + h.kind + " on " + f.data +
                             "): " + e.what());
  }
  model.eval();
}

/// to_hetero's model: the target's rows of its output dictionary.
Tensor runToHetero(const OgbHeteroDataset& ds, const PyGPredictFlags& f, const HeteroSpec& h, int64_t& params) {
  const HeteroMetadata meta = ds.graph.metadata();
  std::map<std::string, int64_t> widths;
  std::map<std::string, Variable> x;
  for (auto& [t, v] : typeFeatures(ds, f.data, h.kind)) {
    widths[t] = v.dim(1);
    x.emplace(t, v);
  }
  if (!h.model.is_object() || !h.model.contains("model"))
    throw std::runtime_error(f.spec + ": \"to_hetero\" needs \"model\" ({\"model\": {\"class\": \"GraphSAGE\", "
                             "\"args\": {...}}, \"aggr\": \"sum\"})");
  for (const auto& [k, v] : h.model.items())
    if (k != "model" && k != "aggr") throw std::runtime_error(f.spec + ": unknown key 'to_hetero." + k + "'");
  if (h.model.contains("aggr") && !h.model["aggr"].is_string())
    throw std::runtime_error(f.spec + ": \"to_hetero.aggr\" must be a string");
  Generator unused(0);  // every weight comes from the state_dict
  std::unique_ptr<HeteroBasicGNN> model;
  try {
    model = std::make_unique<HeteroBasicGNN>(h.model["model"], meta, widths,
                                             h.model.value("aggr", std::string("sum")), unused);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(f.spec + " on " + f.data + ": " + e.what());
  }
  loadWeights(*model, f, h);
  params = model->numParameters();
  EdgeIndexDict edges;
  for (const EdgeType& t : meta.second) edges.emplace_back(t, ds.graph.edge(t).edgeIndex);
  NoGradGuard ng;
  return model->forward(x, edges).at(h.target).value();
}

/// Layers on the typed graph (to_homogeneous's node and edge order): the target type's rows.
Tensor runToHomogeneous(const OgbHeteroDataset& ds, const PyGPredictFlags& f, const HeteroSpec& h,
                        int64_t& params) {
  const std::vector<std::pair<std::string, Variable>> x = typeFeatures(ds, f.data, h.kind);
  Generator unused(0);  // every weight comes from the state_dict
  std::unique_ptr<TypedLayerList> model;
  try {
    model = std::make_unique<TypedLayerList>(h.model, unused);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(f.spec + ": " + e.what());
  }
  loadWeights(*model, f, h);
  params = model->numParameters();
  ToHomogeneousOptions o;
  o.nodeAttrs = std::vector<std::string>{};  // each type's features go in on their own
  o.edgeAttrs = std::vector<std::string>{};
  const HomogeneousGraph g = toHomogeneous(ds.graph, o);
  NoGradGuard ng;
  Variable out;
  try {
    out = model->forward(x, g.edgeIndex.defined() ? g.edgeIndex : Tensor::zeros({2, 0}, DType::I64),
                         g.edgeType.defined() ? g.edgeType : Tensor::zeros({0}, DType::I64), g.nodeType);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(f.spec + " on " + f.data + ": " + e.what());
  }
  const int64_t first = g.nodeOffset(h.target);
  return sliceRows(out, first, first + ds.graph.numNodes(h.target)).value();
}

/// HGT as hgt_dblp.py builds it (models/HeteroHGT.h): the target's logits.
Tensor runHgt(const OgbHeteroDataset& ds, const PyGPredictFlags& f, const HeteroSpec& h, int64_t& params) {
  const auto bad = [&](const std::string& why) {
    return std::runtime_error(f.spec + ": \"hgt\" " + why + " ({\"hidden_channels\": 64, \"out_channels\": C, "
                              "\"num_heads\": 2, \"num_layers\": 2}, hgt_dblp.py's arguments)");
  };
  if (!h.model.is_object()) throw bad("must be an object");
  HeteroHGTOptions o;
  const std::pair<const char*, int64_t*> ints[] = {{"hidden_channels", &o.hidden}, {"out_channels", &o.outChannels},
                                                   {"num_heads", &o.heads}, {"num_layers", &o.layers}};
  for (const auto& [k, v] : h.model.items()) {
    bool known = false;
    for (const auto& [name, field] : ints) {
      if (k != name) continue;
      if (!v.is_number_integer() || v.get<int64_t>() < 1) throw bad(std::string(name) + " must be a positive int");
      *field = v.get<int64_t>();
      known = true;
    }
    if (!known) throw bad("has no argument '" + k + "'");
  }
  if (!h.model.contains("out_channels")) throw bad("needs out_channels");
  std::vector<Tensor> features;
  for (auto& [t, v] : typeFeatures(ds, f.data, h.kind)) {
    o.nodeTypes.push_back({t, ds.graph.numNodes(t), v.dim(1)});
    features.push_back(v.value());
  }
  o.edgeTypes = ds.graph.edgeTypes();
  o.targetType = h.target;
  Generator unused(0);  // every weight comes from the state_dict
  std::unique_ptr<HeteroHGT> model;
  try {
    model = std::make_unique<HeteroHGT>(o, unused);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(f.spec + " on " + f.data + ": " + e.what());
  }
  loadWeights(*model, f, h);
  params = model->numParameters();
  EdgeIndexDict edges;
  for (const EdgeType& t : o.edgeTypes) edges.emplace_back(t, ds.graph.edge(t).edgeIndex);
  NoGradGuard ng;
  return model->forward(features, edges).value();
}

}  // namespace

bool isHeteroPyGSpec(const nlohmann::json& spec) {
  if (!spec.is_object()) return false;
  for (const char* k : kKinds)
    if (spec.contains(k)) return true;
  return false;
}

int predictHeteroPyGModel(const PyGPredictFlags& f, const nlohmann::json& spec) {
  Stopwatch sw;
  const HeteroSpec h = parseHeteroSpec(spec, f.spec);
  if (!isOgbHeteroLayout(f.data))
    throw std::runtime_error(f.data + ": " + f.spec + " is a heterogeneous model: --data must be in OGB's "
                             "heterogeneous raw layout (raw/triplet-type-list.csv.gz, gnn/data/OgbHeteroDataset.h)");
  OgbHeteroOptions o;
  o.normalization = FeatureNormalization::None;
  o.featuresOnly = true;
  o.addInverseEdges = *parseAddInverseEdges(f.addInverseEdges);
  o.toUndirected = h.toUndirected;
  const OgbHeteroDataset ds = OgbHeteroDataset::load(f.data, o);
  if (!ds.graph.hasNodeType(h.target))
    throw std::runtime_error(f.spec + ": target '" + h.target + "' is not a node type of " + f.data);
  int64_t params = 0;
  const Tensor out = h.kind == "to_hetero"        ? runToHetero(ds, f, h, params)
                     : h.kind == "to_homogeneous" ? runToHomogeneous(ds, f, h, params)
                                                  : runHgt(ds, f, h, params);
  writeNpy(f.out, out);
  if (!f.quiet)
    std::cerr << "predict: " << h.kind << " model (" << params << " parameters) on " << ds.graph.nodeTypes().size()
              << " node types, " << ds.graph.edgeTypes().size() << " edge types, " << ds.graph.numNodes()
              << " nodes, " << ds.graph.numEdges() << " edges: '" << h.target << "' outputs [" << out.dim(0) << ", "
              << out.dim(1) << "] written to " << f.out << " in " << sw.ms() << " ms\n";
  return 0;
}

}  // namespace gnn::app
