#include "app/AtomFeatures.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace gnn::app {

namespace fs = std::filesystem;

void AtomFeatureOptions::addTo(po::options_description& flags) {
  flags.add_options()(
      "atom-features", po::value(&file)->value_name("FILE"),
      "the user's per-atom descriptors of every molecule of the input, in its order (rejected ones included), "
      "atoms in RDKit's order of the parsed molecule (heavy atoms): .npz with float 'features' [total atoms, width] "
      "and int64 'atom_ptr' [molecules + 1], or CSV lines molecule,atom,f1,...,fk (0-based); empty, nan, inf = "
      "missing. gin, gcn: Linear(width, hidden) of them added to the atom encoder's output; dmpnn: read beside the "
      "atom features by W_i and W_o (Chemprop's extra atom features)")(
      "atom-features-scaling", value(&scaling, "auto"),
      "auto (standardise every column but those whose training values are all 0/1) | standard | none; per column, "
      "with the training split's atoms; missing values become the training mean");
  added_ = true;
}

void AtomFeatureOptions::bind(RunConfig& config) {
  if (!added_) return;
  config.bind("atom-features", &file);
  config.bind("atom-features-scaling", &scaling);
}

void AtomFeatureOptions::validate(const MoleculeModelSpec& spec, const Program* prog) const {
  requireOneOf("--atom-features-scaling", scaling, {"auto", "standard", "none"});
  if (!any()) {
    if (prog && prog->given("atom-features-scaling"))
      throw UsageError("--atom-features-scaling applies with --atom-features FILE");
    return;
  }
  if (spec.isFixedConfiguration() || spec.isSchNet())
    throw UsageError("--atom-features applies to --model gin, gcn and dmpnn; " + spec.model + " reads no atom features");
  if (!fs::is_regular_file(file)) throw UsageError("--atom-features " + file + ": no such file");
}

AtomFeatureMatrix gatherAtomFeatures(const AtomFeatureFile& f, const NpzDataset& ds, int64_t rows) {
  AtomFeatureMatrix m;
  m.rows = std::min<int64_t>(rows, static_cast<int64_t>(ds.size()));
  m.width = f.width;
  m.names = f.names;
  m.fileHasHeader = f.header;
  m.ptr.assign(1, 0);
  auto where = [&](size_t i, int64_t at) {
    const std::string smiles = ds.smiles(i);
    return "molecule " + std::to_string(at) + " of the input (line " + std::to_string(ds.sourceLine(i)) +
           (smiles.empty() ? std::string() : ", " + smiles) + ")";
  };
  for (int64_t i = 0; i < m.rows; ++i) {
    const auto k = static_cast<size_t>(i);
    const int64_t at = ds.sourceIndex(k);
    if (at < 0 || at >= f.molecules)
      throw std::runtime_error(f.path + ": holds the atoms of " + std::to_string(f.molecules) + " molecules, but " +
                               where(k, at) + " needs its rows: give every molecule of the input, in its order, "
                               "rejected ones included");
    if (f.atoms(at) != ds.numNodes(k))
      throw std::runtime_error(f.path + ": " + where(k, at) + " has " + std::to_string(f.atoms(at)) +
                               " atom rows here, but its parsed molecule has " + std::to_string(ds.numNodes(k)) +
                               " atoms (RDKit's order of the parsed SMILES, heavy atoms only: hydrogens are implicit)");
    m.values.insert(m.values.end(), f.row(at), f.row(at) + f.atoms(at) * f.width);
    m.ptr.push_back(m.ptr.back() + f.atoms(at));
  }
  return m;
}

AtomFeatureScaling AtomFeatureScaling::fit(const AtomFeatureMatrix& m, const std::vector<int64_t>& trainRows,
                                           const std::string& file, const std::string& scaling) {
  AtomFeatureScaling s;
  s.file = file;
  s.scaling = scaling;
  s.width = m.width;
  s.names = m.names;
  s.fileHasHeader = m.fileHasHeader;
  s.mean.assign(static_cast<size_t>(m.width), 0.0);
  s.std.assign(static_cast<size_t>(m.width), 1.0);
  s.scaled.assign(static_cast<size_t>(m.width), 0);
  // Every atom of the training molecules, in their order: the same sums (and bits) for any thread count.
  auto forEach = [&](int64_t c, auto&& visit) {
    for (int64_t r : trainRows)
      for (int64_t a = m.ptr[static_cast<size_t>(r)]; a < m.ptr[static_cast<size_t>(r + 1)]; ++a)
        if (const double v = m.values[static_cast<size_t>(a * m.width + c)]; std::isfinite(v)) visit(v);
  };
  for (int64_t c = 0; c < m.width; ++c) {
    const auto k = static_cast<size_t>(c);
    double sum = 0, n = 0;
    bool binary = true;
    forEach(c, [&](double v) {
      sum += v;
      n += 1;
      binary = binary && (v == 0 || v == 1);
    });
    if (n == 0) continue;  // no finite training value: the column becomes 0 throughout
    s.mean[k] = sum / n;
    if (scaling == "none" || (scaling == "auto" && binary)) continue;
    double ss = 0;
    forEach(c, [&](double v) { ss += (v - s.mean[k]) * (v - s.mean[k]); });
    const double sd = std::sqrt(ss / n);
    s.std[k] = sd > 0 && std::isfinite(sd) ? sd : 1.0;
    s.scaled[k] = 1;
  }
  return s;
}

void AtomFeatureScaling::check(const AtomFeatureMatrix& m, const std::string& source) const {
  auto refuse = [&](const std::string& why) {
    throw std::runtime_error(source + ": its atom features cannot be reproduced here: " + why);
  };
  if (m.width != width)
    refuse("the atom features file had " + std::to_string(width) + " columns" +
           (file.empty() ? std::string() : " (" + file + ")") + ", this one " + std::to_string(m.width));
  if (fileHasHeader && m.fileHasHeader)
    for (int64_t c = 0; c < width; ++c)
      if (m.names[static_cast<size_t>(c)] != names[static_cast<size_t>(c)])
        refuse("the atom features file's column " + std::to_string(c + 1) + " was '" + names[static_cast<size_t>(c)] +
               "', this one's is '" + m.names[static_cast<size_t>(c)] + "'");
}

std::vector<float> AtomFeatureScaling::apply(const AtomFeatureMatrix& m) const {
  const int64_t atoms = m.ptr.empty() ? 0 : m.ptr.back();
  std::vector<float> out(static_cast<size_t>(atoms * width));
  for (int64_t a = 0; a < atoms; ++a)
    for (int64_t c = 0; c < width; ++c) {
      const auto k = static_cast<size_t>(c);
      const double v = m.values[static_cast<size_t>(a * width + c)];
      // A missing value is the training mean: 0 once standardised.
      const double missing = scaled[k] ? 0.0 : mean[k];
      double x = std::isfinite(v) ? (scaled[k] ? (v - mean[k]) / std[k] : v) : missing;
      if (!std::isfinite(static_cast<float>(x))) x = missing;  // beyond float32: missing too
      out[static_cast<size_t>(a * width + c)] = static_cast<float>(x);
    }
  return out;
}

nlohmann::json AtomFeatureScaling::toJson() const {
  return {{"file", file},   {"scaling", scaling}, {"width", width}, {"names", names}, {"file_has_header", fileHasHeader},
          {"mean", mean},   {"std", std},         {"scaled", scaled}};
}

AtomFeatureScaling AtomFeatureScaling::fromJson(const nlohmann::json& j, const std::string& source) {
  AtomFeatureScaling s;
  try {
    s.file = j.at("file").get<std::string>();
    s.scaling = j.at("scaling").get<std::string>();
    s.width = j.at("width").get<int64_t>();
    s.names = j.at("names").get<std::vector<std::string>>();
    s.fileHasHeader = j.at("file_has_header").get<bool>();
    s.mean = j.at("mean").get<std::vector<double>>();
    s.std = j.at("std").get<std::vector<double>>();
    s.scaled = j.at("scaled").get<std::vector<uint8_t>>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(source + ": configuration 'derived.atom_features' is malformed; the checkpoint cannot be "
                             "used");
  }
  const auto w = static_cast<size_t>(std::max<int64_t>(s.width, 0));
  bool ok = s.width >= 1 && s.names.size() == w && s.mean.size() == w && s.std.size() == w && s.scaled.size() == w;
  for (size_t c = 0; ok && c < w; ++c)
    ok = std::isfinite(s.mean[c]) && std::isfinite(s.std[c]) && s.std[c] > 0 && s.scaled[c] <= 1;
  if (!ok)
    throw std::runtime_error(source + ": configuration 'derived.atom_features' is inconsistent (width " +
                             std::to_string(s.width) + "); the checkpoint cannot be used");
  return s;
}

AtomFeatureDataset::AtomFeatureDataset(std::shared_ptr<const Dataset> base, std::vector<float> values,
                                       std::vector<int64_t> ptr, int64_t width)
    : base_(std::move(base)), values_(std::move(values)), ptr_(std::move(ptr)), width_(width) {}

Graph AtomFeatureDataset::get(size_t i) const {
  if (i + 1 >= ptr_.size())
    throw std::out_of_range("AtomFeatureDataset: molecule " + std::to_string(i) + " has no atom features (gathered for " +
                            std::to_string(ptr_.empty() ? 0 : ptr_.size() - 1) + ")");
  Graph g = base_->get(i);
  const int64_t atoms = ptr_[i + 1] - ptr_[i];
  if (g.numNodes != atoms)
    throw std::runtime_error("AtomFeatureDataset: molecule " + std::to_string(i) + " has " + std::to_string(g.numNodes) +
                             " atoms but " + std::to_string(atoms) + " rows of atom features");
  g.nodeFeatures = Tensor({atoms, width_}, DType::F32);
  std::copy_n(values_.data() + ptr_[i] * width_, atoms * width_, g.nodeFeatures.data<float>());
  return g;
}

std::shared_ptr<const Dataset> attachAtomFeatures(const AtomFeatureOptions& o, const MoleculeData& data,
                                                  std::shared_ptr<const Dataset> all, RunConfig& config,
                                                  MoleculeModelSpec& spec, const std::string& source) {
  spec.nodeFeatures = 0;
  if (!o.any()) return all;
  AtomFeatureMatrix m = gatherAtomFeatures(AtomFeatureFile::read(o.file), *data.dataset, data.size);
  AtomFeatureScaling s = config.deriveOnce(
      "atom_features", [&] { return AtomFeatureScaling::fit(m, data.split.train, o.file, o.scaling); },
      [&](const nlohmann::json& j) { return AtomFeatureScaling::fromJson(j, source); },
      [](const AtomFeatureScaling& x) { return x.toJson(); });
  s.check(m, source.empty() ? std::string("the run") : source);
  spec.nodeFeatures = s.width;
  return std::make_shared<AtomFeatureDataset>(std::move(all), s.apply(m), std::move(m.ptr), s.width);
}

std::optional<AtomFeatureScaling> checkpointAtomFeatures(const nlohmann::json& config, const std::string& checkpoint) {
  const bool saved = config.is_object() && config.contains("derived") && config["derived"].is_object() &&
                     config["derived"].contains("atom_features");
  if (saved) return AtomFeatureScaling::fromJson(config["derived"]["atom_features"], checkpoint);
  const nlohmann::json v = config.is_object() ? config.value("atom_features", nlohmann::json()) : nlohmann::json();
  if (v.is_string() && !v.get<std::string>().empty())
    throw std::runtime_error(checkpoint + ": its configuration names --atom-features " + v.get<std::string>() +
                             " but holds no 'derived.atom_features' (their statistics); the checkpoint cannot be used");
  return std::nullopt;
}

std::shared_ptr<const Dataset> attachCheckpointAtomFeatures(const nlohmann::json& config, const std::string& checkpoint,
                                                            const NpzDataset& dataset, std::shared_ptr<const Dataset> ds,
                                                            const std::string& file) {
  std::optional<AtomFeatureScaling> saved = checkpointAtomFeatures(config, checkpoint);
  if (!saved) {
    if (!file.empty())
      throw UsageError("--atom-features " + file + ": " + checkpoint + " was trained without atom features; drop the flag");
    return ds;
  }
  if (file.empty())
    throw UsageError(checkpoint + " was trained with " + std::to_string(saved->width) + " atom features per atom (" +
                     saved->file + "): give --atom-features FILE with the same columns for these molecules");
  if (!fs::is_regular_file(file)) throw UsageError("--atom-features " + file + ": no such file");
  const AtomFeatureFile f = AtomFeatureFile::read(file);
  AtomFeatureMatrix columns;  // the width and names first: another width is the checkpoint's error, not a row's
  columns.width = f.width;
  columns.names = f.names;
  columns.fileHasHeader = f.header;
  saved->check(columns, checkpoint);
  AtomFeatureMatrix m = gatherAtomFeatures(f, dataset, static_cast<int64_t>(dataset.size()));
  return std::make_shared<AtomFeatureDataset>(std::move(ds), saved->apply(m), std::move(m.ptr), saved->width);
}

}  // namespace gnn::app
