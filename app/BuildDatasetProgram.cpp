#include "app/BuildDatasetProgram.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "app/CheckpointDir.h"
#include "app/HeapTuning.h"
#include "app/Program.h"
#include "app/TrainingFlags.h"
#include "data/DatasetSplit.h"
#include "data/GzLineReader.h"
#include "data/MoleculeDatasetBuilder.h"
#include "data/NpzDataset.h"
#include "data/Pcqm4mv2Reader.h"
#include "data/StagedFile.h"
#include "gnn/system/FolderLock.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/SystemInfo.h"

namespace gnn::app {

namespace {

// The signal that asked the build to stop (0: none). The handler only stores it, which is async-signal-safe
// for a lock-free atomic; the builder polls it between records and throws BuildInterrupted, and the writers'
// destructors remove the temp files on the way out.
std::atomic<int> gStopSignal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void onBuildStopSignal(int sig) { gStopSignal.store(sig, std::memory_order_relaxed); }

void installStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onBuildStopSignal;
  sigemptyset(&sa.sa_mask);
  // Restart interrupted reads and writes (a gzip read cut short must not look like a truncated file). The
  // handler stays installed: a second Ctrl-C still cleans up; Ctrl-\ (SIGQUIT) ends the process at once.
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

/// 130 for SIGINT, 143 for SIGTERM: the shell's convention for a process ended by a signal.
int stoppedBy(int sig, bool progressShown, const std::string& resumeDir = "") {
  if (progressShown) std::fprintf(stderr, "\n");
  const std::string name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal " + std::to_string(sig);
  if (resumeDir.empty())
    std::fprintf(stderr, "build_dataset: interrupted by %s; no output written, temp files removed\n", name.c_str());
  else
    std::fprintf(stderr, "build_dataset: interrupted by %s; no output written, finished chunks kept in %s: run the "
                 "same command to go on\n", name.c_str(), resumeDir.c_str());
  return 128 + sig;
}

std::string clock(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

// Lines in the input, for the progress bar's ETA (one cheap decompression pass; skipped without a TTY).
int64_t countLines(const std::string& path) {
  try {
    GzLineReader in(path);
    std::string_view line;
    while (in.next(line)) {
    }
    return in.lineNumber();
  } catch (const std::exception&) {
    return 0;
  }
}

struct Stat {
  double min = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
Stat stats(std::vector<double> v) {
  Stat s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto pct = [&](double q) {
    return v[static_cast<size_t>(std::min<double>(v.size() - 1, std::floor(q * (v.size() - 1) + 0.5)))];
  };
  s.min = v.front();
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.p50 = pct(0.5);
  s.p90 = pct(0.9);
  s.p99 = pct(0.99);
  return s;
}
nlohmann::json toJson(const Stat& s) {
  return {{"min", s.min}, {"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}

// Every target's labelled values: their statistics, how many are labelled and missing, their standard deviation.
nlohmann::json labelStats(const NpzDataset& ds, const nlohmann::json& meta) {
  const NpzFile::Array& y = ds.file().get("y");
  const NpzFile::Array& mask = ds.file().get("y_mask");
  const std::vector<std::string> targets = meta.value("targets", std::vector<std::string>{});
  nlohmann::json labels = nlohmann::json::array();
  for (int t = 0; t < ds.numTargets(); ++t) {
    std::vector<double> v;
    for (size_t i = 0; i < ds.size(); ++i) {
      if (!mask.data[i * ds.numTargets() + t]) continue;
      float f;
      std::memcpy(&f, y.data + (i * ds.numTargets() + t) * 4, 4);
      v.push_back(f);
    }
    double sd = 0;
    Stat s = stats(v);
    for (double x : v) sd += (x - s.mean) * (x - s.mean);
    sd = v.size() > 1 ? std::sqrt(sd / (v.size() - 1)) : 0;
    nlohmann::json j = toJson(s);
    j["name"] = t < static_cast<int>(targets.size()) ? targets[t] : std::to_string(t);
    j["labelled"] = v.size();
    j["missing"] = ds.size() - v.size();
    j["sd"] = sd;
    labels.push_back(j);
  }
  return labels;
}

// The report of `inspect` as text.
void printInspection(const std::string& file, const NpzDataset& ds, const nlohmann::json& meta,
                     const nlohmann::json& report, const nlohmann::json& labels, const nlohmann::json& listed) {
  auto line = [](const char* what, const nlohmann::json& s) {
    std::printf("%-16s min %g  mean %.2f  p50 %g  p90 %g  p99 %g  max %g\n", what, s["min"].get<double>(),
                s["mean"].get<double>(), s["p50"].get<double>(), s["p90"].get<double>(), s["p99"].get<double>(),
                s["max"].get<double>());
  };
  std::printf("%s: %zu graphs, %.1f MB (%.0f bytes/graph), format version %d\n", file.c_str(), ds.size(),
              ds.file().fileBytes() / 1e6, report["bytes_per_graph"].get<double>(), ds.formatVersion());
  std::printf("source %s (%s, crc32 %s), RDKit %s, features %s\n",
              report["source"].value("path", "").c_str(), report["source"].value("format", "").c_str(),
              report["source"].value("crc32", "").c_str(), meta.value("rdkit_version", "").c_str(),
              meta.value("feature_vocabulary", "").c_str());
  line("nodes/graph", report["nodes_per_graph"]);
  line("edges/graph", report["edges_per_graph"]);
  for (const auto& l : labels) {
    std::printf("label %-10s %zu labelled, %zu missing; ", l["name"].get<std::string>().c_str(),
                l["labelled"].get<size_t>(), l["missing"].get<size_t>());
    line("", l);
  }
  const DatasetSplit stored = storedSplit(ds);
  for (const auto& [name, n] : report["splits"].items())
    std::printf("split %s: %zu%s\n", name.c_str(), n.get<size_t>(),
                stored.kind == "column" ? (" (column " + stored.column + ")").c_str() : "");
  if (ds.hasPositions()) std::printf("3D coordinates: yes\n");
  if (ds.graphormerMaxDist()) std::printf("Graphormer encodings: multi_hop_max_dist %d\n", ds.graphormerMaxDist());
  std::printf("rejected molecules: %d\n", report["rejected"].get<int>());
  for (const auto& r : listed)
    std::printf("  line %lld: %s: %s\n", static_cast<long long>(r["line"].get<int64_t>()),
                r["smiles"].get<std::string>().c_str(), r["reason"].get<std::string>().c_str());
}

// `build_dataset inspect FILE.npz`: a built dataset summarised (sizes, labels, splits, rejected molecules).
int inspect(int argc, char** argv) {
  po::options_description opts("build_dataset inspect FILE.npz [options]");
  std::string file;
  bool json = false;
  int maxRejected = 20;
  opts.add_options()("help,h", "show this help")("json", po::bool_switch(&json), "print the report as JSON")(
      "max-rejected", po::value(&maxRejected)->default_value(20), "rejected molecules to list");
  po::options_description hidden;
  hidden.add_options()("file", po::value(&file));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help") || file.empty()) {
    std::cout << opts << "\n";
    return file.empty() && !vm.count("help") ? 2 : 0;
  }
  NpzDataset ds(file);
  const nlohmann::json meta = nlohmann::json::parse(ds.metadataJson());
  std::vector<double> nodes, edges;
  nodes.reserve(ds.size());
  edges.reserve(ds.size());
  for (size_t i = 0; i < ds.size(); ++i) {
    nodes.push_back(static_cast<double>(ds.numNodes(i)));
    edges.push_back(static_cast<double>(ds.numEdges(i)));
  }
  nlohmann::json report = {{"file", file},
                           {"bytes", ds.file().fileBytes()},
                           {"graphs", ds.size()},
                           {"bytes_per_graph",
                            ds.size() ? static_cast<double>(ds.file().fileBytes()) / ds.size() : 0.0},
                           {"nodes_per_graph", toJson(stats(nodes))},
                           {"edges_per_graph", toJson(stats(edges))},
                           {"rdkit_version", meta.value("rdkit_version", "")},
                           {"feature_vocabulary", meta.value("feature_vocabulary", "")},
                           {"source", meta.value("source", nlohmann::json::object())},
                           {"has_pos", ds.hasPositions()},
                           {"has_smiles", ds.hasSmiles()},
                           {"split_kind", storedSplit(ds).kind},
                           {"graphormer_max_dist", ds.graphormerMaxDist()},
                           {"format_version", ds.formatVersion()},
                           {"splits", nlohmann::json::object()}};
  for (const std::string& s : ds.splitNames()) report["splits"][s] = ds.split(s).size();
  const nlohmann::json labels = labelStats(ds, meta);
  report["labels"] = labels;
  report["rejected"] = meta.value("num_rejected", 0);
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& r : meta.value("rejected", nlohmann::json::array())) {
    if (static_cast<int>(listed.size()) >= maxRejected) break;
    listed.push_back(r);
  }
  report["rejected_molecules"] = listed;
  if (json) {
    std::cout << report.dump(1) << "\n";
    return 0;
  }
  printInspection(file, ds, meta, report, labels, listed);
  return 0;
}

// The command line of a build, as its flags set it.
struct BuildFlags {
  BuildOptions o;
  std::string targets, jsonlPath;
  bool json = false, progress = false, noProgress = false, resume = false;
};

void addBuildFlags(po::options_description& opts, BuildFlags& f) {
  BuildOptions& o = f.o;
  opts.add_options()("help,h", "show this help")(
      "input,i", po::value(&o.source.path)->required()->value_name("FILE"),
      "molecules: .csv, .smi, .sdf or .xyz (each optionally .gz), or a PCQM4Mv2 folder")(
      "format", po::value(&o.source.format)->value_name("F"),
      "pcqm4mv2, csv, smi, sdf or xyz (default: from the file name)")(
      "smiles-col", po::value(&o.source.smilesColumn)->default_value("smiles")->value_name("NAME"),
      "CSV column holding the SMILES (any case)")(
      "target-cols", po::value(&f.targets)->value_name("A,B"),
      "what to predict: CSV columns, SDF properties or XYZ comment keys (PCQM4Mv2: homolumogap)")(
      "split-col", po::value(&o.source.splitColumn)->value_name("NAME"),
      "CSV column saying train, valid (or val, validation) or test for each molecule; stored as the "
      "dataset's split, and a molecule with any other value is rejected")(
      "out,o", po::value(&o.outPath)->value_name("FILE.npz"),
      "the dataset to write (it appears only when complete)")(
      "explicit-hydrogens", po::bool_switch(&o.featurizer.explicitHydrogens),
      "keep hydrogens as atoms of the graph (OGB does not)")(
      "conformers", po::bool_switch(&o.conformers),
      "compute 3D coordinates (RDKit ETKDG) for molecules the input gives none")(
      "max-conformer-atoms",
      po::value(&o.conformer.maxHeavyAtoms)->default_value(o.conformer.maxHeavyAtoms)->value_name("N"),
      "with --conformers: reject molecules with more heavy atoms than N instead of embedding them (ETKDG takes "
      "seconds at 100 heavy atoms and grows steeply; 0: no limit)")(
      "seed", po::value(&o.conformer.seed)->default_value(42)->value_name("N"),
      "random seed of the 3D coordinates")(
      "graphormer-max-dist", po::value(&o.graphormerMaxDist)->default_value(0)->value_name("K"),
      "also store Graphormer's encodings, paths of up to K bonds (0: none)")(
      "format-version", po::value(&o.formatVersion)->default_value(o.formatVersion)->value_name("V"),
      "the .npz layout: 2 (narrowest dtypes, Graphormer's paths in O(n^2) bytes per molecule whatever K) or 1 "
      "(the earlier layout, edge_input stored whole, for readers that predate 2)")(
      "max-atoms", po::value(&o.maxAtoms)->default_value(o.maxAtoms)->value_name("N"),
      "reject molecules with more heavy atoms than N ('*' dummies count as heavy; XYZ: atoms), or more than 2N "
      "atoms with written hydrogens, counted from the SMILES before RDKit parses it (0: no limit)")(
      "max-smiles-length", po::value(&o.maxSmilesLength)->default_value(o.maxSmilesLength)->value_name("N"),
      "reject SMILES longer than N characters before anything else (a guard on the text; the work RDKit does "
      "is bounded by --max-atoms) (0: no limit)")(
      "max-ring-dummies",
      po::value(&o.featurizer.ringLimits.maxDummies)
          ->default_value(o.featurizer.ringLimits.maxDummies)
          ->value_name("N"),
      "reject molecules with more than N dummy atoms ('*') in one fused ring system before RDKit sanitises them: "
      "its kekulisation time doubles with each (0: no limit)")(
      "max-fused-rings",
      po::value(&o.featurizer.ringLimits.maxRings)->default_value(o.featurizer.ringLimits.maxRings)->value_name("N"),
      "reject molecules with more than N rings in one fused unsaturated ring system before RDKit sanitises them: "
      "its aromaticity perception time grows steeply with them (0: no limit)")(
      "threads,j", po::value(&o.threads)->default_value(0)->value_name("N"),
      "threads that featurise (0: every core, as in every program; the output is the same for any N)")(
      "limit", po::value(&o.limit)->default_value(-1, "all")->value_name("N"),
      "read only the first N molecules")(
      "chunk", po::value(&o.chunkSize)->default_value(4096)->value_name("N"),
      "molecules featurised per step: memory use grows with N, not with the input")(
      "jsonl", po::value(&f.jsonlPath)->value_name("FILE"),
      "also write one JSON line per input molecule: its graph and targets, or why it was rejected")(
      "strict", po::bool_switch(&o.strict), "fail (exit 1, no dataset) if any molecule is rejected")(
      "resume", po::bool_switch(&f.resume),
      "resumable build: each finished chunk is saved in OUT.npz.resume/, and a build killed or stopped part-way "
      "goes on from its last chunk when run again with --resume (same input and options), writing the same "
      "bytes as a build never stopped; the folder goes when the dataset is written")(
      "json", po::bool_switch(&f.json), "print a JSON summary on stdout")(
      "progress", po::bool_switch(&f.progress), "show the progress bar even when stderr is not a terminal")(
      "no-progress", po::bool_switch(&f.noProgress), "never show the progress bar");
}

// Parses and checks the command line into `f`; an exit code when the program ends here (--help, a bad flag).
std::optional<int> parseBuildFlags(int argc, char** argv, const po::options_description& opts, BuildFlags& f) {
  BuildOptions& o = f.o;
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    if (vm.count("help")) {
      std::cout << opts << "\n";
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "build_dataset: " << e.what() << "\n" << opts << "\n";
    return 2;
  }
  o.source.targetColumns = splitCommaList(f.targets);
  try {
    applyThreads(o.threads);  // 0 = every core; negative or more than the cores is refused
  } catch (const UsageError& e) {
    std::cerr << "build_dataset: " << e.what() << " (see build_dataset --help)\n";
    return 2;
  }
  if (o.threads == 0) o.threads = gnn::machineCores();
  if (f.resume && (o.outPath.empty() || !f.jsonlPath.empty())) {
    std::cerr << "build_dataset: --resume needs --out and cannot be combined with --jsonl (see build_dataset --help)\n";
    return 2;
  }
  if (o.formatVersion != 1 && o.formatVersion != 2) {
    std::cerr << "build_dataset: --format-version " << o.formatVersion
              << ": must be 1 or 2 (see build_dataset --help)\n";
    return 2;
  }
  if (f.resume) o.resumeDir = o.outPath + ".resume";
  if (o.outPath.empty() && f.jsonlPath.empty())
    std::cerr << "build_dataset: note: neither --out nor --jsonl given; featurising only\n";
  return std::nullopt;
}

// One build per output, held until the build ends: two builds of one --out would share its .resume folder (a
// --resume would go on from the other's chunks). The lock sits next to the output (OUT.npz.lock), not in
// OUT.npz.resume/, which the builder empties and removes; its name derives from --out, so this lock covers
// it too. An exit code when the lock cannot be taken.
std::optional<int> lockOutput(const BuildOptions& o, std::optional<gnn::FolderLock>& outLock) {
  if (o.outPath.empty()) return std::nullopt;
  std::ostringstream tookOver;
  try {
    outLock.emplace(gnn::FolderLock::forFile(o.outPath, "--out", &tookOver));
  } catch (const gnn::FolderInUse& e) {
    std::cerr << "build_dataset: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "build_dataset: error: " << e.what() << "\n";
    return 1;
  }
  if (!tookOver.str().empty()) std::cerr << "build_dataset: note: " << tookOver.str();
  return std::nullopt;
}

// The JSON lines go to a temp file renamed into place at the end, as the .npz does: a build that fails or
// is interrupted leaves no truncated file that looks complete. An exit code when it cannot be created.
std::optional<int> stageJsonl(const std::string& jsonlPath, BuildOptions& o, std::unique_ptr<StagedFile>& jsonl) {
  if (jsonlPath.empty()) return std::nullopt;
  try {
    jsonl = std::make_unique<StagedFile>(jsonlPath);
  } catch (const std::exception& e) {
    std::cerr << "build_dataset: cannot write " << jsonlPath << ": " << e.what() << "\n";
    return 1;
  }
  o.jsonl = &jsonl->stream();
  return std::nullopt;
}

// The progress bar on stderr, with an ETA from the input's lines when the reader gives no fraction read.
std::function<void(const BuildProgress&)> progressBar(const BuildOptions& o) {
  int64_t totalLines = 0;
  if (o.limit < 0) {
    std::string counted = o.source.path;
    for (const char* f : {"/raw/data.csv.gz", "/raw/data.csv"})
      if (std::filesystem::is_directory(o.source.path) && std::filesystem::exists(o.source.path + f)) {
        counted = o.source.path + f;
        break;
      }
    if (!std::filesystem::is_directory(counted)) totalLines = countLines(counted);
  }
  return [totalLines](const BuildProgress& p) {
    const double rate = p.seconds > 0 ? p.records / p.seconds : 0;
    double fraction = p.fraction;
    if (fraction < 0 && totalLines > 0) fraction = static_cast<double>(p.line) / static_cast<double>(totalLines);
    const double eta = fraction > 0 ? p.seconds * (1 - fraction) / fraction : -1;
    char bar[21] = "                    ";
    for (int i = 0; i < 20 && fraction > 0 && i < static_cast<int>(fraction * 20 + 1e-9); ++i) bar[i] = '#';
    std::fprintf(stderr, "\r[%s] %lld molecules (%lld rejected), %.0f/s, ETA %s   ",
                 fraction >= 0 ? bar : "????????????????????", static_cast<long long>(p.records),
                 static_cast<long long>(p.rejected), rate, clock(eta).c_str());
    std::fflush(stderr);
  };
}

// A finished build on stderr (its rejected molecules, counts and speed) and, with --json, on stdout.
int reportBuild(const BuildFlags& f, const BuildSummary& s, bool showProgress) {
  const BuildOptions& o = f.o;
  if (showProgress) std::fprintf(stderr, "\n");
  for (const RejectedMolecule& r : s.rejectedMolecules)
    std::cerr << o.source.path << ":" << r.line << ": rejected '" << r.smiles << "': " << r.reason << "\n";
  const double rate = s.seconds > 0 ? (s.accepted + s.rejected) / s.seconds : 0;
  if (s.resumedRecords > 0)
    std::fprintf(stderr, "resumed after %lld molecules saved by an earlier build\n",
                 static_cast<long long>(s.resumedRecords));
  std::fprintf(stderr, "accepted %lld, rejected %lld, %.2f s, %.0f molecules/s, %d thread%s%s\n",
               static_cast<long long>(s.accepted), static_cast<long long>(s.rejected), s.seconds, rate, s.threads,
               s.threads == 1 ? "" : "s", s.written ? (", wrote " + o.outPath).c_str() : "");
  if (o.strict && s.rejected > 0)
    std::fprintf(stderr, "build_dataset: --strict: %lld molecule(s) rejected, no dataset written\n",
                 static_cast<long long>(s.rejected));
  if (f.json) {
    nlohmann::json j = {{"accepted", s.accepted},
                        {"rejected", s.rejected},
                        {"seconds", s.seconds},
                        {"molecules_per_s", rate},
                        {"threads", s.threads},
                        {"peak_rss_mb", peakRssMb()},
                        {"nodes", s.nodes},
                        {"edges", s.edges},
                        {"out", s.written ? o.outPath : ""},
                        {"bytes", s.written ? static_cast<int64_t>(std::filesystem::file_size(o.outPath)) : 0}};
    std::cout << j.dump() << "\n";
  }
  return o.strict && s.rejected > 0 ? 1 : 0;
}

int build(int argc, char** argv) {
  BuildFlags f;
  BuildOptions& o = f.o;
  po::options_description opts(
      "build_dataset --input FILE [--out FILE.npz] [options]\n"
      "build_dataset inspect FILE.npz\n\n"
      "Reads molecules and writes their graphs, with OGB's smiles2graph features (RDKit), as a .npz dataset");
  addBuildFlags(opts, f);
  if (std::optional<int> code = parseBuildFlags(argc, argv, opts, f)) return *code;

  // Temp files of builds killed mid-write (`X.npz.tmp-PID[.A.P]`, `X.jsonl.tmp-PID`; the process gone, older than
  // a minute) go at the next build writing to the same folder, as the training programs do for theirs.
  for (const std::string& out : {o.outPath, f.jsonlPath})
    if (!out.empty()) CheckpointDir::removeStaleTemporaries(std::filesystem::path(out).parent_path().string());

  installStopHandlers();
  o.stopRequested = [] { return gStopSignal.load(std::memory_order_relaxed); };
  // The output's lock, taken after the stop handlers: a signal that comes once the lock file exists still
  // cleans up.
  std::optional<gnn::FolderLock> outLock;
  if (std::optional<int> code = lockOutput(o, outLock)) return *code;
  // Holding the lock, the output's own temporaries of a killed build are stale whatever their age (one killed
  // while writing the dataset, seconds before this run resumed it).
  if (!o.outPath.empty()) CheckpointDir::removeTemporariesOf(o.outPath);
  std::unique_ptr<StagedFile> jsonl;
  if (std::optional<int> code = stageJsonl(f.jsonlPath, o, jsonl)) return *code;
  const bool showProgress = !f.noProgress && (f.progress || ::isatty(2));
  if (showProgress) o.progress = progressBar(o);
  if (std::string hint = Pcqm4mv2Reader::splitHint(o.source.path); !hint.empty())
    std::cerr << "build_dataset: note: " << hint << "\n";
  BuildSummary s;
  try {
    s = MoleculeDatasetBuilder(o).run();
  } catch (const BuildInterrupted& e) {
    // The builder removed its files (a resumable build keeps its finished chunks); ~StagedFile removes the jsonl's.
    return stoppedBy(e.code(), showProgress, o.resumeDir);
  } catch (const std::exception& e) {
    if (showProgress) std::fprintf(stderr, "\n");
    std::cerr << "build_dataset: error: " << e.what() << "\n";
    return 1;
  }
  // A signal after the builder's last check: the user still asked for no output.
  if (const int sig = gStopSignal.load()) {
    if (s.written) std::remove(o.outPath.c_str());
    return stoppedBy(sig, showProgress);
  }
  if (jsonl) {
    try {
      jsonl->commit();
    } catch (const std::exception& e) {
      std::cerr << "build_dataset: error: " << e.what() << "\n";
      return 1;
    }
  }
  return reportBuild(f, s, showProgress);
}

}  // namespace

int runBuildDatasetProgram(int argc, char** argv) {
  returnLargeBlocksToSystem();
  try {
    if (argc >= 2 && std::string(argv[1]) == "inspect") return inspect(argc - 1, argv + 1);
    return build(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "build_dataset: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gnn::app
