// bench_make_products_like: writes an ogbn-products-shaped node-classification graph (planted classes, real-valued
// features) in OGB's node-property raw layout, for cora_gcn --data and the scale benchmark (bench/ProductsLikeGraph.h
// says how it is made). Same options, same bytes. Prints one JSON object: nodes, edges, bytes, seconds.
//
// Each undirected edge is written once, as OGB stores ogbn-products (read it with inverse edges added: a folder named
// ogbn-products, or --add-inverse-edges on); --two-way writes both directions, read as it is.
//
//   bench_make_products_like --out /tmp/ogbn-products --nodes 245000    # ~12.2M directed edges once read
//   cora_gcn --data /tmp/ogbn-products --loader cluster --clusters 150 --clusters-per-batch 10
//   bench_make_products_like --out /tmp/products_24k --two-way          # any folder name: read as written
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/Program.h"
#include "bench/ProductsLikeGraph.h"
#include "data/OgbNodeMaster.h"

namespace po = boost::program_options;
using namespace gnn;

int main(int argc, char** argv) {
  app::Program prog("bench_make_products_like",
                    "writes an ogbn-products-shaped graph (planted classes) in OGB's node-property raw layout.\n\n"
                    "Measures: nothing (prints the nodes, edges, bytes written and seconds); the data for\n"
                    "  bench_node_scale and cora_gcn --data.\nCompared with: nothing.");
  bench::ProductsLikeOptions o;
  std::string out;
  bool plain = false, twoWay = false;
  auto flag = prog.flags().add_options();
  flag("out", po::value(&out)->required()->value_name("DIR"), "dataset folder to write (created)");
  flag("nodes", app::value(&o.nodes, int64_t{24500}), "nodes");
  flag("features", app::value(&o.features, int64_t{100}), "features per node");
  flag("classes", app::value(&o.classes, int64_t{47}), "planted classes");
  flag("avg-degree", app::value(&o.avgDegree, 50.0), "directed edges per node, once read (each edge is written once, or both ways with --two-way)");
  flag("noise", app::value(&o.noise, 3.0), "feature noise std, relative to the class centroids' spread (1)");
  flag("local-fraction", app::value(&o.localFraction, 0.6), "edges to ring neighbours within the class");
  flag("class-fraction", app::value(&o.classFraction, 0.2), "edges to any node of the class (rest: any node)");
  flag("seed", app::value(&o.seed, uint64_t{0}), "random seed");
  flag("plain", po::bool_switch(&plain), "write .csv instead of .csv.gz");
  flag("two-way", po::bool_switch(&twoWay),
       "write each edge in both directions, read as written from any folder; the default writes each undirected "
       "edge once, as OGB stores ogbn-products: the same graph once read with inverse edges (a folder named "
       "ogbn-products, or --add-inverse-edges on)");
  flag("one-way", po::bool_switch(),
       "each undirected edge once (the default; kept for older commands)");
  return prog.run(argc, argv, [&] {
    app::requireAtLeast("--nodes", static_cast<double>(o.nodes), 2);
    app::requireAtLeast("--features", static_cast<double>(o.features), 1);
    app::requireRange("--classes", static_cast<double>(o.classes), 1, static_cast<double>(o.nodes));
    app::requirePositive("--avg-degree", o.avgDegree);
    app::requireAtLeast("--noise", o.noise, 0);
    app::requireRange("--local-fraction", o.localFraction, 0, 1);
    app::requireRange("--class-fraction", o.classFraction, 0, 1 - o.localFraction);
    o.gzip = !plain;
    o.oneWay = !twoWay;
    bench::ProductsLikeStats s = bench::writeProductsLike(out, o);
    // How the folder must be read to be the graph written: OGB's readers add the inverse edges by the folder's name.
    std::filesystem::path folder = std::filesystem::path(out).lexically_normal();
    if (folder.filename().empty()) folder = folder.parent_path();  // "/tmp/ogbn-products/"
    const bool named = ogbNodeMasterEntry(folder.filename().string()) != nullptr;
    const char* readWith = !o.oneWay || named ? "" : "--add-inverse-edges on";
    if (*readWith)
      std::cerr << "bench_make_products_like: " << out << " holds each edge once; read it with " << readWith
                << " (or name the folder ogbn-products), else it is a directed graph\n";
    std::cout << nlohmann::json{{"out", out},         {"nodes", s.nodes},     {"edges", s.edges},
                                {"bytes", s.bytes},    {"seconds", s.seconds}, {"features", o.features},
                                {"classes", o.classes}, {"seed", o.seed},      {"one_way", o.oneWay},
                                {"read_with", readWith}}
                     .dump()
              << std::endl;
    return 0;
  });
}
