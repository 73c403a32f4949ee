#include "data/DatasetSplit.h"

#include <GraphMol/ChemTransforms/ChemTransforms.h>
#include <GraphMol/GraphMol.h>
#include <GraphMol/MolOps.h>
#include <GraphMol/SmilesParse/SmilesWrite.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "data/GzLineReader.h"
#include "data/NpzDataset.h"
#include "data/SmilesFeaturizer.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/Random.h"

namespace gnn {

nlohmann::json DatasetSplit::toJson() const {
  nlohmann::json j = {{"kind", kind},
                      {"train", static_cast<int64_t>(train.size())},
                      {"valid", static_cast<int64_t>(valid.size())},
                      {"test", static_cast<int64_t>(test.size())}};
  if (kind == "random") j["seed"] = seed;
  if (kind == "scaffold") j["include_chirality"] = includeChirality;
  if (kind == "column") j["column"] = column;
  if (kind == "file") {
    j["path"] = path;
    j["dropped_rejected"] = droppedRejected;
    j["dropped_beyond_limit"] = droppedBeyondLimit;
  }
  return j;
}

namespace {
void sortSets(DatasetSplit& s) {
  for (auto* v : {&s.train, &s.valid, &s.test}) std::sort(v->begin(), v->end());
}
}  // namespace

DatasetSplit randomSplit(int64_t n, uint64_t seed, double trainFraction, double validFraction) {
  if (n < 0 || !(trainFraction >= 0 && validFraction >= 0 && trainFraction + validFraction <= 1))
    throw std::invalid_argument("randomSplit: need n >= 0 and fractions >= 0 that sum to at most 1, got n = " +
                                std::to_string(n) + ", " + std::to_string(trainFraction) + " + " +
                                std::to_string(validFraction));
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
  Generator gen(seed);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(perm[static_cast<size_t>(i)], perm[gen.nextBelow(static_cast<uint64_t>(i + 1))]);
  // int(fraction * n), as the Python splitters compute their sizes.
  const auto nTrain = static_cast<int64_t>(static_cast<double>(n) * trainFraction);
  const auto nValid = static_cast<int64_t>(static_cast<double>(n) * validFraction);
  DatasetSplit s;
  s.kind = "random";
  s.seed = seed;
  s.train.assign(perm.begin(), perm.begin() + nTrain);
  s.valid.assign(perm.begin() + nTrain, perm.begin() + nTrain + nValid);
  s.test.assign(perm.begin() + nTrain + nValid, perm.end());
  sortSets(s);
  return s;
}

std::string murckoScaffold(const std::string& smiles, bool includeChirality) {
  // Python's MurckoScaffoldSmiles refuses an empty SMILES ("No molecule provided"); RDKit's C++ parser would
  // return an empty molecule, whose scaffold "" would silently group it with the acyclic ones.
  if (smiles.empty()) throw std::runtime_error("empty SMILES");
  // Parsed as the featuriser parses (Chem.MolFromSmiles, after its bounds on RDKit's sanitisation time).
  std::string error;
  std::unique_ptr<RDKit::RWMol> mol = SmilesFeaturizer().parse(smiles, error);
  if (!mol) throw std::runtime_error("'" + smiles + "': " + error);
  // rdkit/Chem/Scaffolds/MurckoScaffold.py GetScaffoldForMol: MurckoDecompose, computed properties cleared
  // and recomputed, rings re-perceived (GetSymmSSSR); then MolToSmiles(scaffold, isomericSmiles=
  // includeChirality). Unlike Python's UpdatePropertyCache() the cache update is not strict: a scaffold
  // with an unusual valence still gets a SMILES instead of failing the whole split.
  std::unique_ptr<RDKit::ROMol> scaffold(RDKit::MurckoDecompose(*mol));
  if (!scaffold || scaffold->getNumAtoms() == 0) return "";
  scaffold->clearComputedProps();
  scaffold->updatePropertyCache(false);
  RDKit::MolOps::symmetrizeSSSR(*scaffold);
  return RDKit::MolToSmiles(*scaffold, includeChirality);
}

DatasetSplit scaffoldSplit(const std::vector<std::string>& smiles, double trainFraction, double validFraction,
                           bool includeChirality) {
  if (!(trainFraction >= 0 && validFraction >= 0 && trainFraction + validFraction <= 1))
    throw std::invalid_argument("scaffoldSplit: fractions must be >= 0 and sum to at most 1");
  const auto n = static_cast<int64_t>(smiles.size());
  std::vector<std::string> scaffolds(smiles.size()), errors(smiles.size());
  {
    RdkitLogSilencer quiet;  // a parse failure is reported below, with its position
    // Exceptions cannot leave a parallel loop: each molecule records its own, the first one is thrown after.
    parallelFor(n, 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        try {
          scaffolds[static_cast<size_t>(i)] = murckoScaffold(smiles[static_cast<size_t>(i)], includeChirality);
        } catch (const std::exception& e) {
          errors[static_cast<size_t>(i)] = e.what();
        }
      }
    });
  }
  std::unordered_map<std::string, std::vector<int64_t>> groups;
  for (int64_t i = 0; i < n; ++i) {
    if (!errors[static_cast<size_t>(i)].empty())
      throw std::runtime_error("scaffold split: molecule " + std::to_string(i) + ": " + errors[static_cast<size_t>(i)]);
    groups[scaffolds[static_cast<size_t>(i)]].push_back(i);  // members ascending: i grows
  }
  std::vector<const std::vector<int64_t>*> order;
  order.reserve(groups.size());
  for (const auto& [scaffold, members] : groups) order.push_back(&members);
  // snap-stanford/pretrain-gnns chem/splitters.py scaffold_split and deepchem ScaffoldSplitter:
  // sorted(groups, key=lambda x: (len(x), x[0]), reverse=True): larger groups first, equal sizes by the
  // larger first position. First positions are distinct, so the order is total and the split deterministic.
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    if (a->size() != b->size()) return a->size() > b->size();
    return a->front() > b->front();
  });
  // The cutoffs in the same double arithmetic as Python: (0.8 + 0.1) * n is 0.9000000000000001 * n there
  // too, and the comparisons below decide group by group on it.
  const double trainCutoff = trainFraction * static_cast<double>(n);
  const double validCutoff = (trainFraction + validFraction) * static_cast<double>(n);
  DatasetSplit s;
  s.kind = "scaffold";
  s.includeChirality = includeChirality;
  for (const auto* g : order) {
    const auto size = static_cast<double>(g->size());
    if (static_cast<double>(s.train.size()) + size > trainCutoff) {
      if (static_cast<double>(s.train.size() + s.valid.size()) + size > validCutoff)
        s.test.insert(s.test.end(), g->begin(), g->end());
      else
        s.valid.insert(s.valid.end(), g->begin(), g->end());
    } else {
      s.train.insert(s.train.end(), g->begin(), g->end());
    }
  }
  sortSets(s);
  return s;
}

DatasetSplit splitFromFiles(const std::string& dir, const NpzDataset& dataset, int64_t sourceLimit) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir))
    throw std::runtime_error(dir + ": not a folder (expected {train,valid,test}.csv[.gz] in it)");
  // Source index -> dataset position; an index absent here belongs to a rejected molecule, to one past
  // --limit, or to none.
  std::unordered_map<int64_t, int64_t> position;
  position.reserve(dataset.size());
  for (size_t i = 0; i < dataset.size(); ++i) position.emplace(dataset.sourceIndex(i), static_cast<int64_t>(i));
  std::unordered_set<int64_t> rejected;
  int64_t sourceMolecules = static_cast<int64_t>(dataset.size());
  {
    const nlohmann::json meta = nlohmann::json::parse(dataset.metadataJson(), nullptr, false);
    if (meta.is_object()) {
      if (meta.contains("rejected") && meta["rejected"].is_array())
        for (const auto& r : meta["rejected"])
          if (r.is_object()) rejected.insert(r.value("index", int64_t{-1}));
      sourceMolecules += meta.value("num_rejected", int64_t{0});
      if (sourceLimit < 0 && meta.contains("options") && meta["options"].is_object())
        sourceLimit = meta["options"].value("limit", int64_t{-1});
    }
  }
  DatasetSplit s;
  s.kind = "file";
  s.path = dir;
  std::unordered_map<int64_t, const char*> seenIn;
  const std::pair<const char*, std::vector<int64_t>*> sets[] = {{"train", &s.train}, {"valid", &s.valid}, {"test", &s.test}};
  for (const auto& [name, target] : sets) {
    fs::path file = fs::path(dir) / (std::string(name) + ".csv.gz");
    if (!fs::exists(file)) file = fs::path(dir) / (std::string(name) + ".csv");
    if (!fs::exists(file)) {
      if (std::string(name) == "test") continue;  // a split without test molecules is allowed
      throw std::runtime_error(dir + ": no " + name + ".csv.gz or " + name + ".csv");
    }
    GzLineReader reader(file.string());
    std::string_view line;
    while (reader.next(line)) {
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      if (line.empty()) continue;
      const std::string where = file.string() + ":" + std::to_string(reader.lineNumber()) + ": ";
      int64_t idx = -1;
      auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), idx);
      if (ec != std::errc() || end != line.data() + line.size() || idx < 0)
        throw std::runtime_error(where + "'" + std::string(line) + "' is not a molecule index (a 0-based integer)");
      auto [prev, fresh] = seenIn.emplace(idx, name);
      if (!fresh) throw std::runtime_error(where + "index " + std::to_string(idx) + " is already in " + prev->second);
      auto it = position.find(idx);
      if (it != position.end()) {
        target->push_back(it->second);
      } else if (rejected.count(idx)) {
        ++s.droppedRejected;
      } else if (sourceLimit >= 0 && idx >= sourceLimit) {
        ++s.droppedBeyondLimit;
      } else {
        throw std::runtime_error(where + "index " + std::to_string(idx) + " is not a molecule of the source (" +
                                 std::to_string(sourceMolecules) + " molecules)");
      }
    }
  }
  sortSets(s);
  return s;
}

DatasetSplit storedSplit(const NpzDataset& dataset) {
  DatasetSplit s;
  const std::vector<std::string> names = dataset.splitNames();
  auto has = [&](const char* name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  if (!has("train") && !has("valid") && !has("test")) return s;
  if (has("train")) s.train = dataset.split("train");
  if (has("valid")) s.valid = dataset.split("valid");
  if (has("test")) s.test = dataset.split("test");
  s.kind = "source";
  const nlohmann::json meta = nlohmann::json::parse(dataset.metadataJson(), nullptr, false);
  if (meta.is_object() && meta.contains("options") && meta["options"].is_object()) {
    const nlohmann::json& column = meta["options"].value("split_column", nlohmann::json());
    if (column.is_string() && !column.get<std::string>().empty()) {
      s.kind = "column";
      s.column = column.get<std::string>();
    }
  }
  sortSets(s);
  return s;
}

}  // namespace gnn
