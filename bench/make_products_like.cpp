// bench_make_products_like: writes an ogbn-products-shaped node-classification graph (planted classes, real-valued
// features) in OGB's node-property raw layout, for cora_gcn --data and the scale benchmark (bench/ProductsLikeGraph.h
// says how it is made). Same options, same bytes. Prints one JSON object: nodes, edges, bytes, seconds.
//
//   bench_make_products_like --out /tmp/products_24k --nodes 24500
//   bench_make_products_like --out /tmp/products_245k --nodes 245000     # ~12.2M directed edges
//   bench_make_products_like --out /tmp/ogbn-products --one-way          # as OGB stores it (each edge once)
//   cora_gcn --data /tmp/products_245k --loader cluster --clusters 150 --clusters-per-batch 10
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/Program.h"
#include "bench/ProductsLikeGraph.h"

namespace po = boost::program_options;
using namespace gnn;

int main(int argc, char** argv) {
  app::Program prog("bench_make_products_like",
                    "writes an ogbn-products-shaped graph (planted classes) in OGB's node-property raw layout.\n\n"
                    "Measures: nothing (prints the nodes, edges, bytes written and seconds); the data for\n"
                    "  bench_node_scale and cora_gcn --data.\nCompared with: nothing.");
  bench::ProductsLikeOptions o;
  std::string out;
  bool plain = false;
  auto flag = prog.flags().add_options();
  flag("out", po::value(&out)->required()->value_name("DIR"), "dataset folder to write (created)");
  flag("nodes", app::value(&o.nodes, int64_t{24500}), "nodes");
  flag("features", app::value(&o.features, int64_t{100}), "features per node");
  flag("classes", app::value(&o.classes, int64_t{47}), "planted classes");
  flag("avg-degree", app::value(&o.avgDegree, 50.0), "directed edges per node (each edge is written both ways, or once with --one-way)");
  flag("noise", app::value(&o.noise, 3.0), "feature noise std, relative to the class centroids' spread (1)");
  flag("local-fraction", app::value(&o.localFraction, 0.6), "edges to ring neighbours within the class");
  flag("class-fraction", app::value(&o.classFraction, 0.2), "edges to any node of the class (rest: any node)");
  flag("seed", app::value(&o.seed, uint64_t{0}), "random seed");
  flag("plain", po::bool_switch(&plain), "write .csv instead of .csv.gz");
  flag("one-way", po::bool_switch(&o.oneWay),
       "write each undirected edge once, as OGB stores ogbn-products: the same graph once read with inverse edges "
       "(a folder named ogbn-products, or --add-inverse-edges on); the default writes both directions");
  return prog.run(argc, argv, [&] {
    app::requireAtLeast("--nodes", static_cast<double>(o.nodes), 2);
    app::requireAtLeast("--features", static_cast<double>(o.features), 1);
    app::requireRange("--classes", static_cast<double>(o.classes), 1, static_cast<double>(o.nodes));
    app::requirePositive("--avg-degree", o.avgDegree);
    app::requireAtLeast("--noise", o.noise, 0);
    app::requireRange("--local-fraction", o.localFraction, 0, 1);
    app::requireRange("--class-fraction", o.classFraction, 0, 1 - o.localFraction);
    o.gzip = !plain;
    bench::ProductsLikeStats s = bench::writeProductsLike(out, o);
    std::cout << nlohmann::json{{"out", out},         {"nodes", s.nodes},     {"edges", s.edges},
                                {"bytes", s.bytes},    {"seconds", s.seconds}, {"features", o.features},
                                {"classes", o.classes}, {"seed", o.seed}}
                     .dump()
              << std::endl;
    return 0;
  });
}
