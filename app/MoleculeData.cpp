#include "app/MoleculeData.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/FeatureCacheBound.h"
#include "app/Program.h"
#include "app/ShippedData.h"
#include "app/StopSignal.h"
#include "data/GzLineReader.h"
#include "data/MoleculeDatasetBuilder.h"
#include "data/MoleculeSource.h"
#include "data/Pcqm4mv2Reader.h"

namespace gnn::app {

namespace fs = std::filesystem;

std::string defaultMoleculeDataPath() { return shippedData("pcqm4mv2_style"); }

namespace {

/// Size and modification time of the input file, or of every file under an input folder: a cached .npz is
/// reused only while its input is unchanged.
std::string inputFingerprint(const std::string& path) {
  auto stamp = [](const fs::path& p) {
    std::error_code ec;
    auto size = fs::file_size(p, ec);
    auto time = fs::last_write_time(p, ec).time_since_epoch().count();
    return p.string() + ":" + std::to_string(size) + ":" + std::to_string(time) + ";";
  };
  if (!fs::is_directory(path)) return stamp(path);
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(path))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string f;
  for (const auto& p : files) f += stamp(p);
  return f;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s.empty() ? "(none)" : s;
}

// The header of a CSV input, for the message that asks for --target-cols.
std::string csvColumns(const std::string& path) {
  try {
    if (guessMoleculeFormat(path) != "csv") return "";
    GzLineReader r(path);
    std::string_view line;
    if (r.next(line)) return std::string(line);
  } catch (const std::exception&) {
  }
  return "";
}

BuildOptions buildOptionsFor(const std::string& input, const std::string& format, const std::string& smilesColumn,
                             const std::vector<std::string>& targets, const std::string& splitColumn,
                             const nlohmann::json& feat, int threads, int64_t limit, const std::string& out) {
  BuildOptions b;
  b.source.path = input;
  b.source.format = format;
  b.source.smilesColumn = smilesColumn;
  b.source.targetColumns = targets;
  b.source.splitColumn = splitColumn;
  b.featurizer.explicitHydrogens = feat.value("explicit_hydrogens", false);
  b.conformers = feat.value("conformers", false);
  b.conformer.seed = feat.value("conformer_seed", b.conformer.seed);
  b.graphormerMaxDist = feat.value("graphormer_max_dist", 0);
  b.threads = threads;
  b.limit = limit;
  b.outPath = out;
  return b;
}

}  // namespace

void buildMoleculeDataset(const std::string& input, const std::string& format, const std::string& smilesColumn,
                          const nlohmann::json& featurisation, int threads, const std::string& npzPath) {
  MoleculeDatasetBuilder(buildOptionsFor(input, format, smilesColumn, {}, "", featurisation, threads, -1, npzPath))
      .run();
}

namespace {

// What the build recorded in the dataset's metadata: the source file as the reader saw it, the rejected
// molecules, the featurisation.
void readBuildMetadata(MoleculeData& d, const MoleculeDataOptions& o) {
  const NpzDataset& ds = *d.dataset;
  nlohmann::json meta = nlohmann::json::parse(ds.metadataJson(), nullptr, false);
  d.sourcePath = o.path;
  if (meta.is_object()) {
    if (meta.contains("source") && meta["source"].is_object()) {
      // The metadata names the file as the reader saw it (a PCQM4Mv2 folder's raw/data.csv.gz: "data.csv.gz").
      fs::path named = meta["source"].value("path", o.path);
      if (named.is_absolute() || fs::is_regular_file(named)) d.sourcePath = named.string();
      for (const fs::path& p : {fs::path(o.path) / "raw" / named.filename(), fs::path(o.path) / named.filename()})
        if (fs::is_directory(o.path) && fs::is_regular_file(p)) d.sourcePath = p.string();
    }
    d.rejected = meta.value("num_rejected", int64_t{0});
    if (meta.contains("rejected") && meta["rejected"].is_array())
      for (const auto& r : meta["rejected"])
        d.rejectedLines.push_back("line " + std::to_string(r.value("line", int64_t{0})) + ": " +
                                  r.value("reason", std::string()));
    nlohmann::json opts = meta.value("options", nlohmann::json::object());
    d.featurisation = {{"features", "ogb_smiles2graph"},
                       {"feature_vocabulary", meta.value("feature_vocabulary", nlohmann::json())},
                       {"explicit_hydrogens", opts.value("explicit_hydrogens", false)},
                       {"conformers", opts.value("conformers", false)},
                       {"conformer_seed", opts.value("conformer_seed", nlohmann::json())},
                       {"graphormer_max_dist", opts.value("graphormer_max_dist", 0)},
                       {"rdkit_version", meta.value("rdkit_version", std::string())}};
  }
}

// The split --split-file, --split or the dataset itself chooses, among the first d.size molecules.
void chooseSplit(MoleculeData& d, const MoleculeDataOptions& o, bool isNpz) {
  const NpzDataset& ds = *d.dataset;
  auto keepFirst = [&](std::vector<int64_t>& v) {
    v.erase(std::remove_if(v.begin(), v.end(), [&](int64_t i) { return i >= d.size; }), v.end());
  };
  if (!o.splitFile.empty()) {
    d.split = splitFromFiles(o.splitFile, ds, isNpz ? -1 : o.limit);
    keepFirst(d.split.train), keepFirst(d.split.valid), keepFirst(d.split.test);
  } else if (o.split == "random") {
    d.split = randomSplit(d.size, o.seed);
  } else if (o.split == "scaffold") {
    std::vector<std::string> smiles;
    smiles.reserve(static_cast<size_t>(d.size));
    for (int64_t i = 0; i < d.size; ++i) smiles.push_back(ds.smiles(static_cast<size_t>(i)));
    if (!smiles.empty() && smiles[0].empty())
      throw UsageError("--split scaffold needs each molecule's SMILES, which " + d.npzPath +
                       " does not hold (rebuild it with this version of build_dataset)");
    d.split = scaffoldSplit(smiles);
  } else {
    // "auto": the split the dataset was built with (the source's own, or a split column), when it has one.
    d.split = storedSplit(ds);
    keepFirst(d.split.train), keepFirst(d.split.valid), keepFirst(d.split.test);
    if (d.split.train.empty()) {
      if (std::string hint = Pcqm4mv2Reader::splitHint(o.path); !hint.empty()) std::cerr << hint << "\n";
      d.split = randomSplit(d.size, o.seed);
    }
  }
}

}  // namespace

MoleculeData openMoleculeData(const MoleculeDataOptions& o) {
  MoleculeData d;
  const bool isNpz = fs::path(o.path).extension() == ".npz";
  nlohmann::json wanted = {{"explicit_hydrogens", false},
                           {"conformers", o.positions},
                           {"graphormer_max_dist", o.graphormerMaxDist}};
  if (isNpz) {
    if (o.smilesColumnGiven)
      throw UsageError("--smiles-col applies when molecules are read from a CSV; " + o.path +
                       " is a built dataset (build_dataset chose its molecules)");
    if (!o.splitColumn.empty())
      throw UsageError("--split-col applies when molecules are read from a CSV; build " + o.path +
                       " with build_dataset --split-col instead");
    d.npzPath = o.path;
  } else {
    if (!fs::exists(o.path)) throw std::runtime_error(o.path + ": no such file or folder");
    // The program's own file stamp too: a rebuilt program (new featuriser or reader) builds its own cache.
    std::string key = fs::absolute(o.path).string() + "|" + o.smilesColumn + "|" + std::to_string(o.limit) + "|" + o.format + "|" +
                      o.splitColumn + "|" + wanted.dump() + "|" + inputFingerprint(o.path) + "|" +
                      inputFingerprint("/proc/self/exe");
    for (const auto& t : o.targetColumns) key += "|" + t;
    d.npzPath = (fs::temp_directory_path() / ("gnn_molecules_" + std::to_string(std::hash<std::string>{}(key)) + ".npz"))
                    .string();
    const uintmax_t cap = featureCacheCapBytes();  // a malformed GNN_FEATURE_CACHE_MB fails before the build
    // A cache damaged on disk (a crash of the machine, a full disk, a file edited by hand) would fail every
    // later run until deleted by hand: it is opened with every check a .npz gets (CRC-32, structure), and
    // rebuilt when they fail. A user's own .npz stays an error (above: isNpz).
    if (fs::exists(d.npzPath)) {
      try {
        d.dataset = std::make_shared<NpzDataset>(d.npzPath);
      } catch (const std::exception& e) {
        std::string reason = e.what();  // "<path>: <reason>"
        const std::string named = d.npzPath + ": ";
        if (reason.compare(0, named.size(), named) == 0) reason.erase(0, named.size());
        std::cerr << program_invocation_short_name << ": feature cache " << d.npzPath << " is damaged ("
                  << reason << "); rebuilding it\n";
      }
    }
    if (!d.dataset) {
      BuildOptions b = buildOptionsFor(o.path, o.format, o.smilesColumn, o.targetColumns, o.splitColumn, wanted, o.threads, o.limit, d.npzPath);
      // Ctrl-C during the build stops it (no partial cache is left) and exits 130 through Program::run.
      StopSignal::install();
      b.stopRequested = [] { return StopSignal::signal(); };
      // Featurising a large set takes a while: say how far it is (a line per chunk that overwrites itself on a
      // terminal, nothing otherwise).
      const bool tty = !o.quiet && ::isatty(STDERR_FILENO) != 0;
      if (tty)
        b.progress = [](const BuildProgress& p) {
          std::fprintf(stderr, "\rfeaturising: %lld molecules (%lld rejected), %.0f/s   ",
                       static_cast<long long>(p.records), static_cast<long long>(p.rejected),
                       p.seconds > 0 ? static_cast<double>(p.records) / p.seconds : 0.0);
          std::fflush(stderr);
        };
      BuildSummary s = MoleculeDatasetBuilder(b).run();
      if (tty) std::fprintf(stderr, "\n");
      d.buildSeconds = s.seconds;
      const std::vector<std::string> removed = boundFeatureCaches(d.npzPath, cap);
      if (!removed.empty() && !o.quiet)
        std::cerr << program_invocation_short_name << ": removed " << removed.size()
                  << " least recently used feature cache(s) from " << fs::path(d.npzPath).parent_path().string()
                  << " to keep them within GNN_FEATURE_CACHE_MB=" << (cap >> 20) << "\n";
    } else {
      markFeatureCacheUsed(d.npzPath);
    }
  }
  if (!d.dataset) d.dataset = std::make_shared<NpzDataset>(d.npzPath);
  const NpzDataset& ds = *d.dataset;
  d.targetNames = ds.targetNames();
  readBuildMetadata(d, o);
  if (isNpz && !o.targetColumns.empty() && o.targetColumns != d.targetNames)
    throw UsageError("--target-cols " + joined(o.targetColumns) + ": " + o.path + " was built with targets " +
                     joined(d.targetNames) + "; rebuild it with build_dataset --target-cols, or drop the flag");
  // A format 2 file keeps whole paths, so any K can be read from it; a format 1 build capped at the longest
  // possible path (its largest molecule's atoms - 1) holds every hop too and is widened with "no hop" slots.
  if (o.graphormerMaxDist > 0 && ds.graphormerMaxDist() > 0 && ds.graphormerMaxDist() < o.graphormerMaxDist &&
      ds.coversMaxDist(o.graphormerMaxDist))
    d.dataset->widenMaxDist(o.graphormerMaxDist);
  // The featurisation a checkpoint records (and predict repeats for new molecules) is the K graphs come with.
  if (ds.graphormerMaxDist() > 0 && d.featurisation.is_object() && d.featurisation.contains("graphormer_max_dist"))
    d.featurisation["graphormer_max_dist"] = ds.graphormerMaxDist();
  if (isNpz && o.graphormerMaxDist > 0 && ds.graphormerMaxDist() < o.graphormerMaxDist)
    throw UsageError(o.path + " holds no Graphormer encodings up to " + std::to_string(o.graphormerMaxDist) +
                     " hops; rebuild it with build_dataset --graphormer-max-dist " + std::to_string(o.graphormerMaxDist));
  if (isNpz && o.positions && !ds.hasPositions())
    throw UsageError(o.path + " holds no 3D positions; rebuild it with build_dataset --conformers");

  if (o.requireTargets && ds.numTargets() == 0) {
    std::string cols = csvColumns(d.sourcePath.empty() ? o.path : d.sourcePath);
    throw UsageError(o.path + " has no targets to train on: pass --target-cols COL[,COL] naming the columns to predict" +
                     (cols.empty() ? std::string() : " (its columns: " + cols + ")"));
  }
  // --limit: the first N molecules (raw input: the builder already stopped there).
  d.size = static_cast<int64_t>(ds.size());
  if (o.limit >= 0) d.size = std::min<int64_t>(d.size, o.limit);
  if (d.size == 0) throw std::runtime_error(o.path + ": no molecule could be read (" + std::to_string(d.rejected) + " rejected)");
  chooseSplit(d, o, isNpz);
  if (d.split.train.empty()) throw std::runtime_error(o.path + ": the " + d.split.kind + " split leaves no training molecule");
  if (d.split.valid.empty())
    throw std::runtime_error(o.path + ": the " + d.split.kind + " split leaves no validation molecule (" +
                             std::to_string(d.size) + " molecules in use)");
  return d;
}

std::string describeMolecules(const MoleculeData& data, const std::vector<int64_t>& positions) {
  std::string s = data.sourcePath + " line" + (positions.size() == 1 ? "" : "s");
  const size_t shown = std::min<size_t>(positions.size(), 8);
  for (size_t k = 0; k < shown; ++k)
    s += (k ? ", " : " ") + std::to_string(data.dataset->sourceLine(static_cast<size_t>(positions[k])));
  if (positions.size() > shown) s += " (and " + std::to_string(positions.size() - shown) + " more)";
  return s;
}

}  // namespace gnn::app
