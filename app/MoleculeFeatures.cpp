#include "app/MoleculeFeatures.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "data/CsvRow.h"
#include "data/GzLineReader.h"
#include "data/MoleculeDescriptors.h"
#include "data/NpzFile.h"
#include "gnn/system/Parallel.h"

namespace gnn::app {

namespace fs = std::filesystem;

namespace {

// The user's features as read: [rows, width] and the column names.
struct FileFeatures {
  int64_t rows = 0, width = 0;
  std::vector<double> values;
  std::vector<std::string> names;
  bool header = false;
};


FileFeatures readCsvFeatures(const std::string& path) {
  FileFeatures f;
  GzLineReader in(path);
  CsvRow row;
  std::string_view line;
  bool first = true;
  while (in.next(line)) {
    if (!row.parse(line)) throw InputError(path, in.lineNumber(), "a quoted field is not closed on its line");
    std::vector<double> v(row.size());
    bool numbers = true;
    for (size_t k = 0; k < row.size(); ++k) numbers = csvNumber(row[k], v[k]) && numbers;
    if (first) {
      f.width = static_cast<int64_t>(row.size());
      first = false;
      if (!numbers) {  // a header
        f.header = true;
        f.names = row.fields();
        continue;
      }
    }
    if (static_cast<int64_t>(row.size()) != f.width)
      throw InputError(path, in.lineNumber(), std::to_string(row.size()) + " values, but the file's first line has " +
                                                  std::to_string(f.width) + " (one row per molecule, the same columns)");
    if (!numbers)
      for (size_t k = 0; k < row.size(); ++k)
        if (double x; !csvNumber(row[k], x))
          throw InputError(path, in.lineNumber(), "column " + std::to_string(k + 1) + " is '" + row[k] +
                                                      "', not a number (an empty field, nan or inf is a missing value)");
    f.values.insert(f.values.end(), v.begin(), v.end());
    ++f.rows;
  }
  if (f.width == 0 || f.rows == 0) throw std::runtime_error(path + ": no feature rows (one line of numbers per molecule)");
  if (!f.header)
    for (int64_t k = 0; k < f.width; ++k) f.names.push_back("file_" + std::to_string(k));
  return f;
}

FileFeatures readNpzFeatures(const std::string& path) {
  NpzFile npz(path);
  if (!npz.has("features"))
    throw std::runtime_error(path + ": no array 'features' (molecule features: a float array [molecules, width])");
  const NpzFile::Array& a = npz.get("features");
  const bool f4 = a.descr == "<f4", f8 = a.descr == "<f8";
  if (!(f4 || f8) || a.shape.size() != 2)
    throw std::runtime_error(path + ": 'features' is " + a.descr + " of rank " + std::to_string(a.shape.size()) +
                             "; expected float32 or float64 [molecules, width]");
  FileFeatures f;
  f.rows = a.shape[0];
  f.width = a.shape[1];
  if (f.rows == 0 || f.width == 0) throw std::runtime_error(path + ": 'features' is empty");
  f.values.resize(static_cast<size_t>(f.rows * f.width));
  for (size_t i = 0; i < f.values.size(); ++i)
    f.values[i] = f4 ? static_cast<double>(reinterpret_cast<const float*>(a.data)[i])
                     : reinterpret_cast<const double*>(a.data)[i];
  for (int64_t k = 0; k < f.width; ++k) f.names.push_back("file_" + std::to_string(k));
  return f;
}

FileFeatures readFeatureFile(const std::string& path) {
  if (!fs::is_regular_file(path)) throw UsageError("--molecule-features-file " + path + ": no such file");
  return fs::path(path).extension() == ".npz" ? readNpzFeatures(path) : readCsvFeatures(path);
}

}  // namespace

void MoleculeFeatureOptions::addTo(po::options_description& flags) {
  flags.add_options()(
      "molecule-features", po::value(&kind)->value_name("KIND"),
      "molecule-level descriptors concatenated to the readout before the head (gin, gcn, dmpnn; Chemprop's "
      "features generators): morgan (Morgan fingerprint, radius 2, 2048 bits) | morgan-count (its counts) | "
      "rdkit2d (129 RDKit 2D descriptors: the registered Properties, SlogP/SMR/PEOE VSA, MQNs, BCUT2D)")(
      "molecule-features-file", po::value(&file)->value_name("FILE"),
      "the user's molecule features, one row per molecule of the input in its order (rejected ones included): "
      ".npz with a float array 'features' [molecules, width], or CSV of numbers (optional header line; empty, "
      "nan, inf = missing); after --molecule-features' columns when both are given")(
      "molecule-features-scaling", value(&scaling, "auto"),
      "auto (rdkit2d: quantile, a file's columns: standard, fingerprints: none) | quantile (each value becomes "
      "its empirical CDF in [0, 1] over the training split's values, missing 0.5; bounded, as Chemprop's "
      "rdkit_2d_normalized) | standard ((v - mean) / std of the training split, missing 0) | none (missing 0)");
  added_ = true;
}

void MoleculeFeatureOptions::bind(RunConfig& config) {
  if (!added_) return;
  config.bind("molecule-features", &kind);
  config.bind("molecule-features-file", &file);
  config.bind("molecule-features-scaling", &scaling);
}

void MoleculeFeatureOptions::validate(const MoleculeModelSpec& spec, const Program* prog) const {
  if (!kind.empty()) {
    const auto& k = MoleculeDescriptors::kinds();
    if (std::find(k.begin(), k.end(), kind) == k.end())
      throw UsageError("--molecule-features '" + kind + "': must be one of morgan, morgan-count, rdkit2d");
  }
  requireOneOf("--molecule-features-scaling", scaling, {"auto", "quantile", "standard", "none"});
  if (!any()) {
    if (prog && prog->given("molecule-features-scaling"))
      throw UsageError("--molecule-features-scaling applies with --molecule-features or --molecule-features-file");
    return;
  }
  const std::string flag = kind.empty() ? "--molecule-features-file" : "--molecule-features";
  if (spec.isFixedConfiguration() || spec.isSchNet())
    throw UsageError(flag + " applies to --model gin, gcn and dmpnn (their readout feeds a head); " + spec.model +
                     " reads no molecule features");
  if (!file.empty() && !fs::is_regular_file(file))
    throw UsageError("--molecule-features-file " + file + ": no such file");
}

MoleculeFeatureMatrix computeMoleculeFeatures(const std::string& kind, const std::string& file, const NpzDataset& ds,
                                              int64_t rows, int threads) {
  MoleculeFeatureMatrix m;
  m.rows = std::min<int64_t>(rows, static_cast<int64_t>(ds.size()));
  std::vector<double> computed;
  if (!kind.empty()) {
    MoleculeDescriptors d(kind);
    std::vector<std::string> smiles;
    smiles.reserve(static_cast<size_t>(m.rows));
    for (int64_t i = 0; i < m.rows; ++i) {
      smiles.push_back(ds.smiles(static_cast<size_t>(i)));
      if (smiles.back().empty())
        throw UsageError("--molecule-features " + kind + " computes from each molecule's SMILES, and molecule " +
                         std::to_string(i) + " (line " + std::to_string(ds.sourceLine(static_cast<size_t>(i))) +
                         ") has none (XYZ input, or a dataset built before SMILES were stored): give SMILES, SDF, or "
                         "--molecule-features-file");
    }
    computed = d.computeAll(smiles, threads, &m.unparsed);
    m.computedWidth = d.width();
    m.names = d.names();
    m.fingerprint.assign(static_cast<size_t>(d.width()), d.isFingerprint() ? 1 : 0);
  }
  FileFeatures f;
  if (!file.empty()) {
    f = readFeatureFile(file);
    for (int64_t i = 0; i < m.rows; ++i)
      if (const int64_t at = ds.sourceIndex(static_cast<size_t>(i)); at < 0 || at >= f.rows)
        throw std::runtime_error(file + ": " + std::to_string(f.rows) + " feature rows, but the input's molecule " +
                                 std::to_string(at) + " (line " + std::to_string(ds.sourceLine(static_cast<size_t>(i))) +
                                 ") needs row " + std::to_string(at) +
                                 ": give one row per molecule of the input, in its order, rejected ones included");
    m.names.insert(m.names.end(), f.names.begin(), f.names.end());
    m.fingerprint.insert(m.fingerprint.end(), static_cast<size_t>(f.width), 0);
    m.fileHasHeader = f.header;
  }
  m.width = m.computedWidth + f.width;
  m.values.resize(static_cast<size_t>(m.rows * m.width));
  for (int64_t i = 0; i < m.rows; ++i) {
    double* row = m.values.data() + i * m.width;
    std::copy_n(computed.data() + i * m.computedWidth, m.computedWidth, row);
    if (f.width > 0)
      std::copy_n(f.values.data() + ds.sourceIndex(static_cast<size_t>(i)) * f.width, f.width, row + m.computedWidth);
  }
  return m;
}

namespace {

/// kQuantiles + 1 quantiles of column c's finite values over `rows` (linear between order statistics, as
/// numpy.quantile's default); a column without a finite training value gets knots of 0.
std::vector<double> fitQuantiles(const MoleculeFeatureMatrix& m, const std::vector<int64_t>& rows, int64_t c) {
  std::vector<double> v;
  v.reserve(rows.size());
  for (int64_t r : rows)
    if (const double x = m.values[static_cast<size_t>(r * m.width + c)]; std::isfinite(x)) v.push_back(x);
  const int k = MoleculeFeatureScaling::kQuantiles;
  std::vector<double> q(static_cast<size_t>(k) + 1, 0.0);
  if (v.empty()) return q;
  std::sort(v.begin(), v.end());
  const double last = static_cast<double>(v.size() - 1);
  for (int i = 0; i <= k; ++i) {
    const double pos = last * i / k;
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    q[static_cast<size_t>(i)] = v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
  }
  return q;
}

/// The empirical CDF of x through the knots q (ascending): its fractional rank, linear between distinct
/// neighbours, the middle of a run of knots equal to x, 0 below the first, 1 above the last.
double quantileRank(const std::vector<double>& q, double x) {
  const auto k = static_cast<double>(q.size() - 1);
  const auto lo = std::lower_bound(q.begin(), q.end(), x), hi = std::upper_bound(q.begin(), q.end(), x);
  if (lo != hi) return (static_cast<double>(lo - q.begin()) + static_cast<double>(hi - q.begin()) - 1) / 2 / k;
  if (lo == q.begin()) return 0.0;
  if (lo == q.end()) return 1.0;
  const auto i = static_cast<double>(lo - q.begin());
  return (i - 1 + (x - *(lo - 1)) / (*lo - *(lo - 1))) / k;
}

}  // namespace

MoleculeFeatureScaling MoleculeFeatureScaling::fit(const MoleculeFeatureMatrix& m, const std::vector<int64_t>& trainRows,
                                                   const std::string& kind, const std::string& file,
                                                   const std::string& scaling) {
  MoleculeFeatureScaling s;
  s.kind = kind;
  s.file = file;
  s.scaling = scaling;
  s.width = m.width;
  s.computedWidth = m.computedWidth;
  s.names = m.names;
  s.fileHasHeader = m.fileHasHeader;
  s.mean.assign(static_cast<size_t>(m.width), 0.0);
  s.std.assign(static_cast<size_t>(m.width), 1.0);
  s.scaled.assign(static_cast<size_t>(m.width), 0);
  s.quantiles.assign(static_cast<size_t>(m.width), {});
  for (int64_t c = 0; c < m.width; ++c) {
    const bool fingerprint = m.fingerprint[static_cast<size_t>(c)] != 0, computed = c < m.computedWidth;
    const bool byQuantile = scaling == "quantile" || (scaling == "auto" && computed && !fingerprint);
    const bool scale = byQuantile || scaling == "standard" || (scaling == "auto" && !fingerprint);
    if (!scale) continue;
    if (byQuantile) {
      s.scaled[static_cast<size_t>(c)] = 2;
      s.quantiles[static_cast<size_t>(c)] = fitQuantiles(m, trainRows, c);
      continue;
    }
    s.scaled[static_cast<size_t>(c)] = 1;
    // Two passes in the order of the training rows: the same bits on every machine and thread count.
    double sum = 0, n = 0;
    for (int64_t r : trainRows)
      if (const double v = m.values[static_cast<size_t>(r * m.width + c)]; std::isfinite(v)) sum += v, n += 1;
    if (n == 0) continue;  // no finite training value: the column becomes 0 throughout
    const double mean = sum / n;
    double ss = 0;
    for (int64_t r : trainRows)
      if (const double v = m.values[static_cast<size_t>(r * m.width + c)]; std::isfinite(v)) ss += (v - mean) * (v - mean);
    const double sd = std::sqrt(ss / n);
    s.mean[static_cast<size_t>(c)] = mean;
    s.std[static_cast<size_t>(c)] = sd > 0 && std::isfinite(sd) ? sd : 1.0;
  }
  return s;
}

void MoleculeFeatureScaling::check(const MoleculeFeatureMatrix& m, const std::string& source) const {
  auto refuse = [&](const std::string& why) {
    throw std::runtime_error(source + ": its molecule features cannot be reproduced here: " + why);
  };
  if (m.computedWidth != computedWidth)
    refuse("--molecule-features " + (kind.empty() ? std::string("(none)") : kind) + " was " +
           std::to_string(computedWidth) + " columns wide, here " + std::to_string(m.computedWidth));
  for (int64_t c = 0; c < computedWidth; ++c)
    if (m.names[static_cast<size_t>(c)] != names[static_cast<size_t>(c)])
      refuse("column " + std::to_string(c) + " was " + names[static_cast<size_t>(c)] + ", here " +
             m.names[static_cast<size_t>(c)] + " (another RDKit build?)");
  const int64_t fileWidth = width - computedWidth, given = m.width - m.computedWidth;
  if (given != fileWidth)
    refuse("the features file had " + std::to_string(fileWidth) + " columns" +
           (file.empty() ? std::string() : " (" + file + ")") + ", this one " + std::to_string(given));
  if (fileHasHeader && m.fileHasHeader)
    for (int64_t c = computedWidth; c < width; ++c)
      if (m.names[static_cast<size_t>(c)] != names[static_cast<size_t>(c)])
        refuse("the features file's column " + std::to_string(c - computedWidth + 1) + " was '" +
               names[static_cast<size_t>(c)] + "', this one's is '" + m.names[static_cast<size_t>(c)] + "'");
}

std::vector<float> MoleculeFeatureScaling::apply(const MoleculeFeatureMatrix& m) const {
  std::vector<float> out(static_cast<size_t>(m.rows * width));
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < width; ++c) {
      const auto k = static_cast<size_t>(c);
      const double v = m.values[static_cast<size_t>(r * width + c)];
      // A non-finite value is the training mean: 0 after standardisation, 0 in an unscaled column; the median
      // (0.5) by quantiles.
      double x;
      if (scaled[k] == 2)
        x = std::isfinite(v) ? quantileRank(quantiles[k], v) : 0.5;
      else
        x = std::isfinite(v) ? (scaled[k] ? (v - mean[k]) / std[k] : v) : 0.0;
      if (!std::isfinite(static_cast<float>(x))) x = 0.0;  // beyond float32: missing too
      out[static_cast<size_t>(r * width + c)] = static_cast<float>(x);
    }
  return out;
}

nlohmann::json MoleculeFeatureScaling::toJson() const {
  return {{"kind", kind},   {"file", file},   {"scaling", scaling}, {"width", width},
          {"computed_width", computedWidth}, {"names", names}, {"file_has_header", fileHasHeader},
          {"mean", mean},   {"std", std},     {"scaled", scaled}, {"quantiles", quantiles}};
}

MoleculeFeatureScaling MoleculeFeatureScaling::fromJson(const nlohmann::json& j, const std::string& source) {
  MoleculeFeatureScaling s;
  try {
    s.kind = j.at("kind").get<std::string>();
    s.file = j.at("file").get<std::string>();
    s.scaling = j.at("scaling").get<std::string>();
    s.width = j.at("width").get<int64_t>();
    s.computedWidth = j.at("computed_width").get<int64_t>();
    s.names = j.at("names").get<std::vector<std::string>>();
    s.fileHasHeader = j.at("file_has_header").get<bool>();
    s.mean = j.at("mean").get<std::vector<double>>();
    s.std = j.at("std").get<std::vector<double>>();
    s.scaled = j.at("scaled").get<std::vector<uint8_t>>();
    // Checkpoints from before quantile scaling have no knots: none of their columns needs them.
    s.quantiles = j.contains("quantiles") ? j.at("quantiles").get<std::vector<std::vector<double>>>()
                                          : std::vector<std::vector<double>>(s.scaled.size());
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(source + ": configuration 'derived.molecule_features' is malformed; the checkpoint "
                             "cannot be used");
  }
  const auto w = static_cast<size_t>(std::max<int64_t>(s.width, 0));
  bool ok = s.width >= 0 && s.computedWidth >= 0 && s.computedWidth <= s.width && s.names.size() == w &&
            s.mean.size() == w && s.std.size() == w && s.scaled.size() == w;
  ok = ok && s.quantiles.size() == w;
  for (size_t c = 0; ok && c < w; ++c) {
    ok = std::isfinite(s.mean[c]) && std::isfinite(s.std[c]) && s.std[c] > 0 && s.scaled[c] <= 2;
    const auto& q = s.quantiles[c];
    if (ok && s.scaled[c] == 2)
      ok = q.size() == static_cast<size_t>(kQuantiles) + 1 && std::is_sorted(q.begin(), q.end()) &&
           std::all_of(q.begin(), q.end(), [](double x) { return std::isfinite(x); });
  }
  if (!s.kind.empty()) {
    const auto& k = MoleculeDescriptors::kinds();
    ok = ok && std::find(k.begin(), k.end(), s.kind) != k.end();
  }
  if (!ok)
    throw std::runtime_error(source + ": configuration 'derived.molecule_features' is inconsistent (kind '" + s.kind +
                             "', width " + std::to_string(s.width) + "); the checkpoint cannot be used");
  return s;
}

MoleculeFeatureDataset::MoleculeFeatureDataset(std::shared_ptr<const Dataset> base, std::vector<float> values,
                                               int64_t width)
    : base_(std::move(base)), values_(std::move(values)), width_(width),
      rows_(width > 0 ? static_cast<int64_t>(values_.size()) / width : 0) {}

Graph MoleculeFeatureDataset::get(size_t i) const {
  if (static_cast<int64_t>(i) >= rows_)
    throw std::out_of_range("MoleculeFeatureDataset: molecule " + std::to_string(i) + " has no features (computed for " +
                            std::to_string(rows_) + ")");
  Graph g = base_->get(i);
  g.graphFeatures = Tensor({width_}, DType::F32);
  std::copy_n(values_.data() + static_cast<int64_t>(i) * width_, width_, g.graphFeatures.data<float>());
  return g;
}

std::shared_ptr<const Dataset> attachMoleculeFeatures(const MoleculeFeatureOptions& o, const MoleculeData& data,
                                                      std::shared_ptr<const Dataset> all, RunConfig& config,
                                                      MoleculeModelSpec& spec, const std::string& source,
                                                      const std::string& program, bool quiet) {
  spec.graphFeatures = 0;
  if (!o.any()) return all;
  MoleculeFeatureMatrix m = computeMoleculeFeatures(o.kind, o.file, *data.dataset, data.size, numThreads());
  if (!m.unparsed.empty() && !quiet)
    std::cerr << program << ": --molecule-features " << o.kind << ": RDKit could not read the SMILES of "
              << describeMolecules(data, m.unparsed) << "; their descriptors are the training means\n";
  MoleculeFeatureScaling s = config.deriveOnce(
      "molecule_features", [&] { return MoleculeFeatureScaling::fit(m, data.split.train, o.kind, o.file, o.scaling); },
      [&](const nlohmann::json& j) { return MoleculeFeatureScaling::fromJson(j, source); },
      [](const MoleculeFeatureScaling& x) { return x.toJson(); });
  s.check(m, source.empty() ? std::string("the run") : source);
  spec.graphFeatures = s.width;
  return std::make_shared<MoleculeFeatureDataset>(std::move(all), s.apply(m), s.width);
}

std::optional<MoleculeFeatureScaling> checkpointFeatures(const nlohmann::json& config, const std::string& checkpoint) {
  const bool saved = config.is_object() && config.contains("derived") && config["derived"].is_object() &&
                     config["derived"].contains("molecule_features");
  if (saved) return MoleculeFeatureScaling::fromJson(config["derived"]["molecule_features"], checkpoint);
  for (const auto& [key, flag] : {std::pair{"molecule_features", "--molecule-features"},
                                  std::pair{"molecule_features_file", "--molecule-features-file"}}) {
    const nlohmann::json v = config.is_object() ? config.value(key, nlohmann::json()) : nlohmann::json();
    if (v.is_string() && !v.get<std::string>().empty())
      throw std::runtime_error(checkpoint + ": its configuration names " + std::string(flag) + " " +
                               v.get<std::string>() + " but holds no 'derived.molecule_features' (their statistics); "
                               "the checkpoint cannot be used");
  }
  return std::nullopt;
}

std::shared_ptr<const Dataset> attachCheckpointFeatures(const nlohmann::json& config, const std::string& checkpoint,
                                                        const NpzDataset& dataset, std::shared_ptr<const Dataset> ds,
                                                        const std::string& file, int threads) {
  std::optional<MoleculeFeatureScaling> saved = checkpointFeatures(config, checkpoint);
  if (!saved) {
    if (!file.empty())
      throw UsageError("--molecule-features-file " + file + ": " + checkpoint +
                       " was trained without molecule features; drop the flag");
    return ds;
  }
  MoleculeFeatureScaling& s = *saved;
  const bool wantsFile = s.width > s.computedWidth;
  if (wantsFile && file.empty())
    throw UsageError(checkpoint + " was trained with " + std::to_string(s.width - s.computedWidth) +
                     " molecule features from a file (" + s.file +
                     "): give --molecule-features-file FILE with the same columns for these molecules");
  if (!wantsFile && !file.empty())
    throw UsageError("--molecule-features-file " + file + ": " + checkpoint +
                     " was trained without a features file; drop the flag");
  MoleculeFeatureMatrix m =
      computeMoleculeFeatures(s.kind, wantsFile ? file : "", dataset, static_cast<int64_t>(dataset.size()), threads);
  s.check(m, checkpoint);
  return std::make_shared<MoleculeFeatureDataset>(std::move(ds), s.apply(m), s.width);
}

}  // namespace gnn::app
