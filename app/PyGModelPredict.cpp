#include "app/PyGModelPredict.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/Program.h"
#include "app/PyGHeteroPredict.h"
#include "app/TrainingFlags.h"
#include "data/NpyWriter.h"
#include "data/OgbNodeDataset.h"
#include "gnn/io/StateDict.h"
#include "gnn/nn/models/BasicGNN.h"
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
  if (isHeteroPyGSpec(spec)) return predictHeteroPyGModel(f, spec);
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
