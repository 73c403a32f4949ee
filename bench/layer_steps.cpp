// bench_layer_steps: one training step (forward, a loss over the outputs, backward) of each of PyG's layers on a
// batch of N nodes and E random directed edges with C-wide features, timed as bench/reference/pyg_layer_steps.py
// times PyG 2.3.1's own layer on the same shapes (bench/layers_vs_pyg.py runs both and gives the ratios). Layers
// are built from PyG's arguments (fromPyG), each with PyG's defaults but for the widths named below. Prints one
// JSON object: per layer the median step in ms over --reps steps after 3 warm-up steps.
//
//   bench_layer_steps                                   # 10,000 nodes, 100,000 edges, 64 channels, 2 threads
//   bench_layer_steps --nodes 10000 --edges 100000 --channels 64 --layers GATConv,SAGEConv
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/Program.h"
#include "gnn/autograd/Profiler.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/ConvRegistry.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/SystemInfo.h"

namespace po = boost::program_options;
using namespace gnn;
using json = nlohmann::json;

namespace {

// Width of the edge features the edge-aware layers read (GINEConv projects them with its lin).
constexpr int64_t kEdgeDim = 8;
// Relations of the relational layers (RGCNConv, FastRGCNConv, RGATConv): each edge's type drawn uniformly.
constexpr int64_t kRelations = 8;

struct Setup {
  int64_t nodes = 10000, edges = 100000, channels = 64, reps = 20;
  int threads = 2;
  bool profile = false;
  std::string layers =
      "GCNConv,SAGEConv,GINConv,GATConv,GATv2Conv,EdgeConv,PNAConv,GINEConv,GraphConv,SGConv,APPNP,TAGConv,LEConv,"
      "ClusterGCNConv,ResGatedGraphConv,ChebConv,GCN2Conv,GatedGraphConv,MFConv,FAConv,FiLMConv,TransformerConv,"
      "NNConv,GENConv,GeneralConv,EGConv";
};

// A layer in the benchmark: its PyG arguments at width c (the reference script uses the same); it is built and
// called through gnn/nn/conv/ConvRegistry (x, edge_index, edge_attr [E, kEdgeDim], x_0 = x, edge types < kRelations
// for the layers given num_relations). RGCNConv, FastRGCNConv and RGATConv run when named (--layers), not by default:
// PyG's FastRGCNConv copies an [in, out] matrix per edge (1.6 GB at 100,000 edges and 64 channels, and its
// gradient), its RGATConv an [in, heads x out] one.
struct BenchLayer {
  std::function<json(int64_t c, const std::vector<int64_t>& degreeHistogram)> args;
};

BenchLayer of(std::function<json(int64_t)> args) {
  return {[args](int64_t c, const std::vector<int64_t>&) { return args(c); }};
}

json mlp(std::vector<int64_t> widths) { return {{"class", "MLP"}, {"args", {{"channel_list", widths}}}}; }
json inOut(int64_t c) { return {{"in_channels", c}, {"out_channels", c}}; }
json heads8(int64_t c) { return {{"in_channels", c}, {"out_channels", c / 8}, {"heads", 8}}; }

const std::map<std::string, BenchLayer>& benchLayers() {
  static const std::map<std::string, BenchLayer> layers = {
      {"GCNConv", of(inOut)},
      {"SAGEConv", of(inOut)},
      {"GINConv", of([](int64_t c) { return json{{"nn", mlp({c, c, c})}}; })},
      {"GATConv", of(heads8)},
      {"GATv2Conv", of(heads8)},
      {"EdgeConv", of([](int64_t c) { return json{{"nn", mlp({2 * c, c, c})}}; })},
      {"PNAConv", {[](int64_t c, const std::vector<int64_t>& hist) {
         return json{{"in_channels", c}, {"out_channels", c}, {"aggregators", {"mean", "min", "max", "std"}},
                     {"scalers", {"identity", "amplification", "attenuation"}}, {"deg", hist}};
       }}},
      {"GINEConv", of([](int64_t c) { return json{{"nn", mlp({c, c, c})}, {"edge_dim", kEdgeDim}}; })},
      {"GraphConv", of(inOut)},
      {"SGConv", of([](int64_t c) { return json{{"in_channels", c}, {"out_channels", c}, {"K", 2}}; })},
      {"APPNP", of([](int64_t) { return json{{"K", 10}, {"alpha", 0.1}}; })},
      {"TAGConv", of(inOut)},
      {"LEConv", of(inOut)},
      {"ClusterGCNConv", of(inOut)},
      {"ResGatedGraphConv", of(inOut)},
      {"ChebConv", of([](int64_t c) { return json{{"in_channels", c}, {"out_channels", c}, {"K", 3}}; })},
      {"GCN2Conv", of([](int64_t c) { return json{{"channels", c}, {"alpha", 0.1}}; })},
      {"GatedGraphConv", of([](int64_t c) { return json{{"out_channels", c}, {"num_layers", 3}}; })},
      {"MFConv", of(inOut)},
      {"FAConv", of([](int64_t c) { return json{{"channels", c}}; })},
      {"FiLMConv", of(inOut)},
      {"TransformerConv",
       of([](int64_t c) { return json{{"in_channels", c}, {"out_channels", c / 8}, {"heads", 8}, {"edge_dim", kEdgeDim}}; })},
      // Theta(e) is [in, out] per edge: 4 outputs keep its [E, in x out] within a few hundred MB on both sides.
      {"NNConv", of([](int64_t c) { return json{{"in_channels", c}, {"out_channels", 4}, {"nn", mlp({kEdgeDim, 32, 4 * c})}}; })},
      {"GENConv", of([](int64_t c) { return json{{"in_channels", c}, {"out_channels", c}, {"edge_dim", kEdgeDim}}; })},
      {"GeneralConv", of([](int64_t c) {
         return json{{"in_channels", c}, {"out_channels", c}, {"heads", 2}, {"attention", true}};
       })},
      {"EGConv", of(inOut)},
      {"RGCNConv",
       of([](int64_t c) { return json{{"in_channels", c}, {"out_channels", c}, {"num_relations", kRelations}}; })},
      {"FastRGCNConv",
       of([](int64_t c) { return json{{"in_channels", c}, {"out_channels", c}, {"num_relations", kRelations}}; })},
      // PyG's RGATConv gathers an [in, heads x out] weight per edge: 2 heads of 8 keep it at 400 MB at 100,000 edges.
      {"RGATConv", of([](int64_t c) {
         return json{{"in_channels", c}, {"out_channels", 8}, {"num_relations", kRelations}, {"heads", 2}};
       })},
  };
  return layers;
}

const BenchLayer& benchLayer(const std::string& name) {
  auto it = benchLayers().find(name);
  if (it == benchLayers().end()) {
    std::string known;
    for (const auto& [n, unused] : benchLayers()) known += (known.empty() ? "" : ", ") + n;
    throw app::UsageError("--layers: unknown layer '" + name + "' (" + known + ")");
  }
  return it->second;
}

int run(const Setup& s) {
  setNumThreads(s.threads);
  Generator g(1);
  std::vector<int64_t> ei(static_cast<size_t>(2 * s.edges));
  for (auto& v : ei) v = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(s.nodes)));
  const Tensor edgeIndex = Tensor::fromVector(ei, {2, s.edges});
  std::vector<int64_t> degree(static_cast<size_t>(s.nodes), 0), hist;
  for (int64_t e = 0; e < s.edges; ++e) ++degree[static_cast<size_t>(ei[static_cast<size_t>(s.edges + e)])];
  for (int64_t d : degree) {
    if (static_cast<size_t>(d) >= hist.size()) hist.resize(static_cast<size_t>(d) + 1, 0);
    ++hist[static_cast<size_t>(d)];
  }
  const Tensor x0 = init::uniform({s.nodes, s.channels}, -1, 1, g);
  const Tensor e0 = init::uniform({s.edges, kEdgeDim}, -1, 1, g);
  Generator typeGen(3);  // its own stream: the other inputs stay as they were
  std::vector<int64_t> types(static_cast<size_t>(s.edges));
  for (auto& t : types) t = static_cast<int64_t>(typeGen.nextBelow(static_cast<uint64_t>(kRelations)));
  const Tensor edgeType = Tensor::fromVector(types);
  json out = {{"benchmark", "layer_steps"}, {"nodes", s.nodes}, {"edges", s.edges}, {"channels", s.channels},
              {"threads", s.threads}, {"reps", s.reps}};
  std::stringstream names(s.layers);
  for (std::string layer; std::getline(names, layer, ',');) {
    const BenchLayer& b = benchLayer(layer);
    const json args = b.args(s.channels, hist);
    Generator gen(2);
    std::unique_ptr<Module> m = convFromPyG(layer, args, gen);
    std::vector<double> ms;
    OpProfiler prof;
    for (int64_t r = 0; r < s.reps + 3; ++r) {
      m->zeroGrad();
      Variable x(x0, true);
      std::optional<ObserverScope> watch;
      if (s.profile && r >= 3) watch.emplace(prof);
      Stopwatch sw;
      ConvInputs in;
      in.x = x;
      in.edgeIndex = edgeIndex;
      if (args.contains("edge_dim") || layer == "NNConv") in.edgeAttr = Variable(e0);  // the edge-aware layers
      if (args.contains("num_relations")) in.edgeType = edgeType;
      Variable y = convForward(layer, *m, in);
      sum(mul(y, y)).backward();
      if (r >= 3) ms.push_back(sw.ms());
    }
    if (s.profile) {
      std::cerr << layer << ", " << s.reps << " steps:\n";
      prof.print(std::cerr);
    }
    std::sort(ms.begin(), ms.end());
    out["layers"][layer] = {{"args", args}, {"step_ms_median", ms[ms.size() / 2]}};
    std::cerr << layer << ": " << ms[ms.size() / 2] << " ms per step\n";
  }
  if (out["layers"].contains("PNAConv")) out["layers"]["PNAConv"]["args"].erase("deg");  // the graph's, long
  std::cout << out.dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  app::Program prog("bench_layer_steps", "one training step of each of PyG's layers on a random batch; JSON");
  Setup s;
  prog.flags().add_options()("nodes", po::value(&s.nodes)->default_value(s.nodes), "nodes")(
      "edges", po::value(&s.edges)->default_value(s.edges), "random directed edges")(
      "channels", po::value(&s.channels)->default_value(s.channels), "input and output width")(
      "reps", po::value(&s.reps)->default_value(s.reps), "timed steps per layer")(
      "threads", po::value(&s.threads)->default_value(s.threads), "threads")(
      "layers", po::value(&s.layers)->default_value(s.layers), "comma-separated PyG class names")(
      "profile", po::bool_switch(&s.profile), "per-op table of each layer's timed steps on stderr");
  return prog.run(argc, argv, [&] { return run(s); });
}
