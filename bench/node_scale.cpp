// bench_node_scale: node classification on one large graph, end to end and as a user runs it. An
// ogbn-products-shaped graph of N nodes is written (bench/ProductsLikeGraph.h: planted classes, 100 real-valued
// features, ~50 directed edges per node), then `cora_gcn --loader cluster` trains on it for a few epochs and
// evaluates the whole graph every epoch. Prints one JSON object: the file's size and bytes per edge, the load,
// METIS and epoch times, the full-graph evaluation time, SpMM's GFLOP/s in forward and backward (2 FLOPs per
// non-zero and feature column, from cora_gcn's --profile), the program's peak RSS (wait4) and per edge, the
// accuracy reached, and the machine's load average before and after (a shared machine's timings are only
// indicative when it was above the core count).
//
//   bench_node_scale --nodes 24500                            # quick: ~1.2M edges
//   bench_node_scale --nodes 245000 --epochs 3                # the measured size: ~12.2M edges
//   bench_node_scale --data DIR --epochs 3                    # an existing dataset instead of a generated one
//   bench_node_scale --feature-crossover                      # X W sparse vs dense by density (Cora's shape)
//
// Compared with: nothing stored; docs/datasets.md keeps the figures measured with it and their projection.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "app/Program.h"
#include "bench/ProductsLikeGraph.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/SystemInfo.h"
#include "gnn/tensor/SparseMatrix.h"

extern char** environ;

namespace po = boost::program_options;
using namespace gnn;

namespace {

nlohmann::json loadAverage() {
  double l[3] = {0, 0, 0};
  if (getloadavg(l, 3) < 3) return nullptr;
  return {l[0], l[1], l[2]};
}

struct Child {
  std::string out;
  int status = 0;
  double peakRssMb = 0;
  double seconds = 0;
};

// Runs argv with stdout captured; stderr passes through. Peak RSS from wait4's rusage (the child alone).
Child runChild(const std::vector<std::string>& argv) {
  int fd[2];
  if (pipe(fd) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Stopwatch sw;
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  if (rc != 0) {
    close(fd[0]);
    throw std::runtime_error("cannot run " + argv[0]);
  }
  Child c;
  char buf[65536];
  for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) c.out.append(buf, static_cast<size_t>(n));
  close(fd[0]);
  rusage ru{};
  wait4(pid, &c.status, 0, &ru);
  c.seconds = sw.ms() / 1000;
  c.peakRssMb = static_cast<double>(ru.ru_maxrss) / 1024.0;
  return c;
}

// cora_gcn beside this program in the build tree (build/<preset>/bench/.. /examples/cora_gcn).
std::string defaultCoraGcn() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("cora_gcn") : (self.parent_path().parent_path() / "examples" / "cora_gcn").string();
}

// Forward + weight-gradient backward of X W with X kept dense (GEMM) and sparse (SpMM), Cora's shape by default,
// at several densities: the time of each, per density, and where they cross.
nlohmann::json featureCrossover(int64_t rows, int64_t cols, int64_t hidden, int64_t repeats) {
  Generator gen(0);
  Variable w(init::uniform({cols, hidden}, -0.1, 0.1, gen), true);
  nlohmann::json table = nlohmann::json::array();
  double previousRatio = 0, previousDensity = 0, crossover = -1;
  for (double density : {0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0}) {
    Tensor x({rows, cols});
    Generator g(static_cast<uint64_t>(density * 1e6));
    Tensor u = init::uniform({rows, cols}, 0, 1, g);
    auto xm = x.matrix<float>();
    auto um = u.matrix<float>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if (um(i, j) < density) xm(i, j) = 1.0f / static_cast<float>(1 + j % 7);
    std::vector<int64_t> ri, cj;
    std::vector<double> v;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if (xm(i, j) != 0) {
          ri.push_back(i);
          cj.push_back(j);
          v.push_back(xm(i, j));
        }
    SparseMatrix xs = SparseMatrix::fromCoo(rows, cols, ri, cj, v);
    (void)xs.transposed();  // built once per graph in training, as GCNConv's sparse path keeps it
    const Variable xd(x);
    auto time = [&](auto&& product) {
      std::vector<double> ms;
      for (int64_t r = 0; r < repeats + 1; ++r) {
        w.zeroGrad();
        Stopwatch sw;
        Variable l = sum(product());
        l.backward();
        if (r > 0) ms.push_back(sw.ms());  // the first run warms the buffer pool
      }
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    const double denseMs = time([&] { return matmul(xd, w); });
    const double sparseMs = time([&] { return spmm(xs, w); });
    const double ratio = sparseMs / denseMs;
    if (crossover < 0 && ratio >= 1 && previousRatio > 0)
      crossover = previousDensity + (density - previousDensity) * (1 - previousRatio) / (ratio - previousRatio);
    previousRatio = ratio;
    previousDensity = density;
    table.push_back({{"density", density},
                     {"nnz", xs.nnz()},
                     {"dense_ms", denseMs},
                     {"sparse_ms", sparseMs},
                     {"sparse_over_dense", ratio}});
  }
  return {{"rows", rows},   {"cols", cols},           {"hidden", hidden},     {"threads", numThreads()},
          {"table", table}, {"crossover_density", crossover < 0 ? nlohmann::json(nullptr) : nlohmann::json(crossover)}};
}

double profileGflops(const nlohmann::json& profile, const std::string& op, const std::string& pass, double* ms) {
  double flops = 0, t = 0;
  for (const auto& row : profile)
    if (row.value("op", "") == op && (pass.empty() || row.value("pass", "") == pass)) {
      flops += row.value("flops", 0.0);
      t += row.value("ms", 0.0);
    }
  if (ms) *ms = t;
  return t > 0 ? flops / (t * 1e6) : 0;
}

constexpr const char* kSummary =
    "large-graph node classification end to end: generate, load, partition, train, evaluate.\n\n"
    "Measures, on an ogbn-products-shaped graph of --nodes nodes (or --data): the file's bytes per edge, then\n"
    "  cora_gcn --loader cluster run as a child: load and METIS seconds, epoch and whole-graph evaluation\n"
    "  seconds (medians), SpMM GFLOP/s forward and backward from its --profile, its peak RSS (wait4), the\n"
    "  accuracy reached, the load average before and after. --feature-crossover instead: X W forward and\n"
    "  weight gradient, dense (GEMM) against sparse (SpMM), by density, Cora's shape.\n"
    "Compared with: no stored figures; docs/datasets.md (\"Large graphs\") keeps the measured ones.";

struct Options {
  bench::ProductsLikeOptions gen;
  std::string data, out, coraGcn = defaultCoraGcn();
  int64_t epochs = 3, clusters = 0, clustersPerBatch = 10, repeats = 5;
  bool crossover = false, keep = false;

  // The generated graph in OGB's form (each undirected edge once), read with inverse edges added.
  Options() {
    gen.nodes = 24500;
    gen.oneWay = true;
  }
};

void addFlags(app::Program& prog, Options& o) {
  auto flag = prog.flags().add_options();
  flag("nodes", app::value(&o.gen.nodes, int64_t{24500}), "nodes of the generated graph (~50 directed edges each)");
  flag("seed", app::value(&o.gen.seed, uint64_t{0}), "generator seed");
  flag("two-way", po::bool_switch()->notifier([&o](bool on) { o.gen.oneWay = !on; }),
       "write the generated graph's edges both ways (default: each once, as OGB stores ogbn-products, read with "
       "--add-inverse-edges on)");
  flag("data", po::value(&o.data)->value_name("DIR"), "an existing dataset in OGB's node layout (no generation)");
  flag("out", po::value(&o.out)->value_name("DIR"), "where to write the graph (default: a temporary folder)");
  flag("keep", po::bool_switch(&o.keep), "keep the generated graph");
  flag("epochs", app::value(&o.epochs, int64_t{3}), "cora_gcn epochs (each evaluates the whole graph once)");
  flag("clusters", app::value(&o.clusters, int64_t{0}),
       "METIS clusters (0: one per ~1,633 nodes of the generated graph, 150 at 245k; needed with --data)");
  flag("clusters-per-batch", app::value(&o.clustersPerBatch, int64_t{10}), "clusters merged per batch");
  flag("cora-gcn", app::value(&o.coraGcn, o.coraGcn), "the cora_gcn program to run");
  flag("feature-crossover", po::bool_switch(&o.crossover),
       "instead: time X W (forward and weight gradient) dense vs sparse by density, Cora's shape");
  flag("repeats", app::value(&o.repeats, int64_t{5}), "--feature-crossover: timed repeats per case (median)");
}

// One cora_gcn run on the graph, and the graph's generation when it was generated here.
struct ScaleRun {
  std::optional<bench::ProductsLikeStats> generated;
  int64_t clusters = 0;
  Child child;
  nlohmann::json result;  // cora_gcn's --json
};

// Where the generated graph goes: --out, else a temporary folder named after its size and this process.
std::string generatedGraphDir(const Options& o) {
  return o.out.empty() ? (std::filesystem::temp_directory_path() /
                          ("gnn_node_scale_" + std::to_string(o.gen.nodes) + "_" + std::to_string(getpid())))
                             .string()
                       : o.out;
}

// --clusters, or with 0 one per ~1,633 nodes of the generated graph; checks --clusters-per-batch against it.
int64_t clusterCount(const Options& o) {
  if (o.clusters <= 0 && !o.data.empty())
    throw app::UsageError("--data needs --clusters (the graph's size is its own)");
  const int64_t clusters =
      o.clusters <= 0 ? std::max<int64_t>(2, std::llround(static_cast<double>(o.gen.nodes) / 1633)) : o.clusters;
  app::requireRange("--clusters-per-batch", static_cast<double>(o.clustersPerBatch), 1, static_cast<double>(clusters));
  return clusters;
}

// Generates the graph (unless --data), trains cora_gcn on it as a child process, and removes a temporary graph.
ScaleRun runScale(const Options& o) {
  app::requireAtLeast("--epochs", static_cast<double>(o.epochs), 1);
  app::requireAtLeast("--nodes", static_cast<double>(o.gen.nodes), 100);
  ScaleRun run;
  std::string dir = o.data;
  if (dir.empty()) {
    dir = generatedGraphDir(o);
    run.generated = bench::writeProductsLike(dir, o.gen);
  }
  run.clusters = clusterCount(o);
  std::vector<std::string> args{o.coraGcn, "--data", dir, "--loader", "cluster", "--clusters",
                                std::to_string(run.clusters), "--clusters-per-batch", std::to_string(o.clustersPerBatch),
                                "--epochs", std::to_string(o.epochs), "--json", "--profile", "--quiet"};
  if (run.generated && o.gen.oneWay) args.insert(args.end(), {"--add-inverse-edges", "on"});
  run.child = runChild(args);
  if (o.data.empty() && !o.keep && o.out.empty()) std::filesystem::remove_all(dir);
  if (!WIFEXITED(run.child.status) || WEXITSTATUS(run.child.status) != 0)
    throw std::runtime_error(o.coraGcn + " failed (status " + std::to_string(run.child.status) + ")");
  run.result = nlohmann::json::parse(run.child.out);
  return run;
}

// The run's figures into j, from cora_gcn's JSON, its profile and the child's resources.
void addScaleRun(nlohmann::json& j, const Options& o, const ScaleRun& run) {
  if (run.generated) {
    const bench::ProductsLikeStats& s = *run.generated;
    // (one_way: edge.csv holds each of the graph's edges / 2 undirected edges once, half the two-way bytes.)
    j["generate"] = {{"nodes", s.nodes},     {"edges", s.edges},         {"bytes", s.bytes},
                     {"seconds", s.seconds}, {"one_way", o.gen.oneWay}};
  }
  const Child& c = run.child;
  const nlohmann::json& r = run.result;
  const double edges = r.value("num_edges", 0.0);
  double fwdMs = 0, bwdMs = 0;
  const double fwd = profileGflops(r["profile"], "spmm", "forward", &fwdMs);
  const double bwd = profileGflops(r["profile"], "spmm", "backward", &bwdMs);
  double normMs = 0;
  profileGflops(r["profile"], "gcnNorm", "", &normMs);
  double totalMs = 0;
  for (const auto& row : r["profile"]) totalMs += row.value("ms", 0.0);
  j["nodes"] = r["num_nodes"];
  j["edges"] = r["num_edges"];
  if (j.contains("generate")) j["file_bytes_per_edge"] = j["generate"]["bytes"].get<double>() / edges;
  j["load_seconds"] = r.value("load_ms", 0.0) / 1000;
  j["partition_seconds"] = r.value("partition_ms", 0.0) / 1000;
  j["clusters"] = run.clusters;
  j["clusters_per_batch"] = o.clustersPerBatch;
  j["epochs"] = o.epochs;
  j["epoch_seconds_median"] = r.value("epoch_ms_median", 0.0) / 1000;
  j["full_graph_eval_seconds_median"] = r.value("infer_ms_median", 0.0) / 1000;
  j["spmm_forward_gflops"] = fwd;
  j["spmm_backward_gflops"] = bwd;
  j["spmm_gflops"] = profileGflops(r["profile"], "spmm", "", nullptr);
  j["spmm_share_of_profile"] = totalMs > 0 ? (fwdMs + bwdMs) / totalMs : 0;
  j["gcn_norm_share_of_profile"] = totalMs > 0 ? normMs / totalMs : 0;
  j["peak_rss_mb"] = c.peakRssMb;
  j["peak_rss_bytes_per_edge"] = edges > 0 ? c.peakRssMb * 1048576 / edges : 0;
  j["program_seconds"] = c.seconds;
  j["val_acc"] = r["val_acc_mean"];
  j["test_acc"] = r["test_acc_mean"];
  j["feature_layout"] = r["feature_layout"];
  j["threads"] = r["threads"];
}

}  // namespace

int main(int argc, char** argv) {
  app::Program prog("bench_node_scale", kSummary);
  Options o;
  addFlags(prog, o);
  return prog.run(argc, argv, [&] {
    nlohmann::json j;
    j["load_average_before"] = loadAverage();
    j["cores"] = machineCores();
    if (o.crossover) {
      app::requireAtLeast("--repeats", static_cast<double>(o.repeats), 1);
      j["feature_crossover"] = featureCrossover(2708, 1433, 16, o.repeats);
    } else {
      addScaleRun(j, o, runScale(o));
    }
    j["load_average_after"] = loadAverage();
    std::cout << j.dump() << std::endl;
    return 0;
  });
}
