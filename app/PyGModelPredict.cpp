#include "app/PyGModelPredict.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/Program.h"
#include "app/TrainingFlags.h"
#include "data/NpyWriter.h"
#include "data/OgbHeteroDataset.h"
#include "data/OgbNodeDataset.h"
#include "gnn/io/StateDict.h"
#include "gnn/nn/models/BasicGNN.h"
#include "gnn/nn/models/HeteroBasicGNN.h"
#include "gnn/nn/models/LayerList.h"
#include "gnn/system/SystemInfo.h"

namespace gnn::app {

namespace {

nlohmann::json readSpec(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--pyg-model " + path + ": cannot read");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not JSON (" + e.what() + ")");
  }
}

/// The heterogeneous spec's parts: {"to_hetero": {"model": {...}, "aggr": ...}, "to_undirected": ..., "target": ...}.
struct HeteroSpec {
  nlohmann::json model;
  std::string aggr = "sum", target;
  bool toUndirected = false;
};

HeteroSpec parseHeteroSpec(const nlohmann::json& spec, const std::string& path) {
  const auto bad = [&](const std::string& why) {
    return std::runtime_error(path + ": " + why +
                              " (a heterogeneous model is {\"to_hetero\": {\"model\": {\"class\": \"GraphSAGE\", "
                              "\"args\": {...}}, \"aggr\": \"sum\"}, \"to_undirected\": true, \"target\": \"paper\"})");
  };
  for (const auto& [k, v] : spec.items())
    if (k != "to_hetero" && k != "to_undirected" && k != "target") throw bad("unknown key '" + k + "'");
  const nlohmann::json& th = spec["to_hetero"];
  if (!th.is_object() || !th.contains("model")) throw bad("\"to_hetero\" needs \"model\"");
  for (const auto& [k, v] : th.items())
    if (k != "model" && k != "aggr") throw bad("unknown key 'to_hetero." + k + "'");
  HeteroSpec h;
  h.model = th["model"];
  if (th.contains("aggr") && !th["aggr"].is_string()) throw bad("\"aggr\" must be a string");
  h.aggr = th.value("aggr", std::string("sum"));
  if (!spec.contains("target") || !spec["target"].is_string())
    throw bad("\"target\" (the node type to predict) is required");
  h.target = spec["target"].get<std::string>();
  if (spec.contains("to_undirected") && !spec["to_undirected"].is_boolean())
    throw bad("\"to_undirected\" must be true or false");
  h.toUndirected = spec.value("to_undirected", false);
  return h;
}

/// predict --pyg-model for to_hetero's models (HeteroBasicGNN) on a dataset in OGB's heterogeneous layout: every
/// node type needs features; the target type's outputs are written.
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
  const HeteroMetadata meta = ds.graph.metadata();
  std::map<std::string, int64_t> widths;
  std::map<std::string, Variable> x;
  for (const std::string& t : meta.first) {
    const Tensor& feat = ds.graph.node(t).x;
    if (!feat.defined())
      throw std::runtime_error(f.data + ": node type '" + t + "' has no features (raw/node-feat/" + t +
                               "/node-feat.csv.gz): to_hetero's model reads every node type's features");
    widths[t] = feat.dim(1);
    x.emplace(t, Variable(feat));
  }
  if (!ds.graph.hasNodeType(h.target))
    throw std::runtime_error(f.spec + ": target '" + h.target + "' is not a node type of " + f.data);
  Generator unused(0);  // every weight comes from the state_dict
  std::unique_ptr<HeteroBasicGNN> model;
  try {
    model = std::make_unique<HeteroBasicGNN>(h.model, meta, widths, h.aggr, unused);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(f.spec + " on " + f.data + ": " + e.what());
  }
  try {
    loadStateDictInto(*model, readStateDict(f.stateDict));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(f.stateDict + " does not fit " + f.spec + " (to_hetero " +
                             h.model.value("class", std::string()) + " on " + f.data + "): " + e.what());
  }
  model->eval();
  EdgeIndexDict edges;
  for (const EdgeType& t : meta.second) edges.emplace_back(t, ds.graph.edge(t).edgeIndex);
  Tensor out;
  {
    NoGradGuard ng;
    out = model->forward(x, edges).at(h.target).value();
  }
  writeNpy(f.out, out);
  if (!f.quiet)
    std::cerr << "predict: to_hetero " << h.model.value("class", std::string()) << " (" << model->numParameters()
              << " parameters) on " << meta.first.size() << " node types, " << meta.second.size() << " edge types, "
              << ds.graph.numNodes() << " nodes, " << ds.graph.numEdges() << " edges: '" << h.target << "' outputs ["
              << out.dim(0) << ", " << out.dim(1) << "] written to " << f.out << " in " << sw.ms() << " ms\n";
  return 0;
}

}  // namespace

int predictPyGModel(const PyGPredictFlags& f) {
  if (f.stateDict.empty()) throw UsageError("--pyg-model needs --state-dict STATE.pt (torch.save(model.state_dict()))");
  if (f.data.empty()) throw UsageError("--pyg-model needs --data DIR (a node dataset in OGB's raw layout)");
  if (f.out.empty()) throw UsageError("--pyg-model needs --out OUT.npy");
  requireOneOf("--add-inverse-edges", f.addInverseEdges, {"auto", "on", "off"});
  for (const auto& [flag, path] : {std::pair{"--state-dict", f.stateDict}, std::pair{"--data", f.data}})
    if (!std::filesystem::exists(path)) throw UsageError(std::string(flag) + " " + path + ": no such file");
  checkWritable("--out", f.out);

  Stopwatch sw;
  const nlohmann::json spec = readSpec(f.spec);
  if (spec.is_object() && spec.contains("to_hetero")) return predictHeteroPyGModel(f, spec);
  Generator unused(0);  // every weight comes from the state_dict
  // A BasicGNN ({"class": "GCN", "args": {...}}) or a list of layers ({"layers": [...], "act": ...}).
  std::unique_ptr<BasicGNN> basic;
  std::unique_ptr<LayerList> list;
  const std::string what = LayerList::isLayerList(spec) ? std::string("layer list")
                                                       : spec.value("class", std::string("(no class)"));
  try {
    if (LayerList::isLayerList(spec)) list = std::make_unique<LayerList>(spec, unused);
    else basic = basicGNNFromSpec(spec, unused);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(f.spec + ": " + e.what());
  }
  Module& model = basic ? static_cast<Module&>(*basic) : static_cast<Module&>(*list);
  const StateDict sd = readStateDict(f.stateDict);
  try {
    loadStateDictInto(model, sd);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(f.stateDict + " does not fit " + f.spec + " (" + what + "): " + e.what());
  }
  model.eval();

  OgbNodeOptions o;
  o.normalization = FeatureNormalization::None;
  o.featuresOnly = true;
  o.addInverseEdges = *parseAddInverseEdges(f.addInverseEdges);
  const OgbNodeDataset ds = OgbNodeDataset::load(f.data, o);
  if (basic && ds.graph.x.dim(1) != basic->options().inChannels)
    throw std::runtime_error(f.data + ": " + std::to_string(ds.graph.x.dim(1)) + " features per node, " + f.spec +
                             " takes in_channels " + std::to_string(basic->options().inChannels));
  Tensor out;
  {
    NoGradGuard ng;
    try {
      ConvInputs in;
      in.x = Variable(ds.graph.x);
      in.edgeIndex = ds.graph.edgeIndex;
      out = basic ? basic->forward(in.x, in.edgeIndex).value() : list->forward(in).value();
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(f.spec + " on " + f.data + ": " + e.what());
    }
  }
  writeNpy(f.out, out);
  if (!f.quiet)
    std::cerr << "predict: " << what << " (" << model.numParameters()
              << " parameters) on " << ds.graph.numNodes << " nodes, " << ds.graph.numEdges() << " edges: outputs ["
              << out.dim(0) << ", " << out.dim(1) << "] written to " << f.out << " in " << sw.ms() << " ms\n";
  return 0;
}

}  // namespace gnn::app
