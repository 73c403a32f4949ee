// bench_layer_steps: one training step (forward, a loss over the outputs, backward) of each of PyG's layers on a
// batch of N nodes and E random directed edges with C-wide features, timed as bench/reference/pyg_layer_steps.py
// times PyG 2.3.1's own layer on the same shapes (bench/layers_vs_pyg.py runs both and gives the ratios). Layers
// are built from PyG's arguments (fromPyG), each with PyG's defaults but for the widths named below. Prints one
// JSON object: per layer the median step in ms over --reps steps after 3 warm-up steps.
//
//   bench_layer_steps                                   # 10,000 nodes, 100,000 edges, 64 channels, 2 threads
//   bench_layer_steps --nodes 10000 --edges 100000 --channels 64 --layers GATConv,SAGEConv
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/Program.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/EdgeConv.h"
#include "gnn/nn/conv/GATConv.h"
#include "gnn/nn/conv/GATv2Conv.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/GINConv.h"
#include "gnn/nn/conv/PNAConv.h"
#include "gnn/nn/conv/SAGEConv.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/SystemInfo.h"

namespace po = boost::program_options;
using namespace gnn;
using json = nlohmann::json;

namespace {

struct Setup {
  int64_t nodes = 10000, edges = 100000, channels = 64, reps = 20;
  int threads = 2;
  std::string layers = "GCNConv,SAGEConv,GINConv,GATConv,GATv2Conv,EdgeConv,PNAConv";
};

// The arguments of each layer at width c (PyG's names; the reference script uses the same).
json argsOf(const std::string& layer, int64_t c, const std::vector<int64_t>& degreeHistogram) {
  const json mlp = {{"class", "MLP"}, {"args", {{"channel_list", {c, c, c}}}}};
  if (layer == "GCNConv") return {{"in_channels", c}, {"out_channels", c}};
  if (layer == "SAGEConv") return {{"in_channels", c}, {"out_channels", c}};
  if (layer == "GINConv") return {{"nn", mlp}};
  if (layer == "GATConv" || layer == "GATv2Conv") return {{"in_channels", c}, {"out_channels", c / 8}, {"heads", 8}};
  if (layer == "EdgeConv") return {{"nn", {{"class", "MLP"}, {"args", {{"channel_list", {2 * c, c, c}}}}}}};
  if (layer == "PNAConv")
    return {{"in_channels", c}, {"out_channels", c}, {"aggregators", {"mean", "min", "max", "std"}},
            {"scalers", {"identity", "amplification", "attenuation"}}, {"deg", degreeHistogram}};
  throw app::UsageError("--layers: unknown layer '" + layer +
                        "' (GCNConv, SAGEConv, GINConv, GATConv, GATv2Conv, EdgeConv, PNAConv)");
}

std::unique_ptr<Module> make(const std::string& layer, const json& args, Generator& gen) {
  if (layer == "GCNConv") return GCNConv::fromPyG(args, gen);
  if (layer == "SAGEConv") return SAGEConv::fromPyG(args, gen);
  if (layer == "GINConv") return GINConv::fromPyG(args, gen);
  if (layer == "GATConv") return GATConv::fromPyG(args, gen);
  if (layer == "GATv2Conv") return GATv2Conv::fromPyG(args, gen);
  if (layer == "EdgeConv") return EdgeConv::fromPyG(args, gen);
  return PNAConv::fromPyG(args, gen);
}

Variable forward(const std::string& layer, Module& m, const Variable& x, const Tensor& ei) {
  if (layer == "GCNConv") return static_cast<GCNConv&>(m).forward(x, ei);
  if (layer == "SAGEConv") return static_cast<SAGEConv&>(m).forward(x, ei);
  if (layer == "GINConv") return static_cast<GINConv&>(m).forward(x, ei);
  if (layer == "GATConv") return static_cast<GATConv&>(m).forward(x, ei);
  if (layer == "GATv2Conv") return static_cast<GATv2Conv&>(m).forward(x, ei);
  if (layer == "EdgeConv") return static_cast<EdgeConv&>(m).forward(x, ei);
  return static_cast<PNAConv&>(m).forward(x, ei);
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
  json out = {{"benchmark", "layer_steps"}, {"nodes", s.nodes}, {"edges", s.edges}, {"channels", s.channels},
              {"threads", s.threads}, {"reps", s.reps}};
  std::stringstream names(s.layers);
  for (std::string layer; std::getline(names, layer, ',');) {
    const json args = argsOf(layer, s.channels, hist);
    Generator gen(2);
    std::unique_ptr<Module> m = make(layer, args, gen);
    std::vector<double> ms;
    for (int64_t r = 0; r < s.reps + 3; ++r) {
      m->zeroGrad();
      Variable x(x0, true);
      Stopwatch sw;
      Variable y = forward(layer, *m, x, edgeIndex);
      sum(mul(y, y)).backward();
      if (r >= 3) ms.push_back(sw.ms());
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
      "layers", po::value(&s.layers)->default_value(s.layers), "comma-separated PyG class names");
  return prog.run(argc, argv, [&] { return run(s); });
}
