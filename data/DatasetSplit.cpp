#include "data/DatasetSplit.h"

#include <GraphMol/ChemTransforms/ChemTransforms.h>
#include <GraphMol/GraphMol.h>
#include <GraphMol/MolOps.h>
#include <GraphMol/SmilesParse/SmilesParse.h>
#include <GraphMol/SmilesParse/SmilesWrite.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "data/GzLineReader.h"
#include "data/NpzDataset.h"
#include "gnn/Random.h"

namespace gnn {

nlohmann::json DatasetSplit::toJson() const {
  nlohmann::json j = {{"kind", kind},
                      {"train", static_cast<int64_t>(train.size())},
                      {"valid", static_cast<int64_t>(valid.size())},
                      {"test", static_cast<int64_t>(test.size())}};
  if (kind == "random") j["seed"] = seed;
  if (kind == "file") {
    j["path"] = path;
    j["dropped_rejected"] = droppedRejected;
    j["dropped_beyond_limit"] = droppedBeyondLimit;
  }
  return j;
}

DatasetSplit randomSplit(int64_t n, uint64_t seed, double trainFraction, double validFraction) {
  if (n < 0 || !(trainFraction >= 0 && validFraction >= 0 && trainFraction + validFraction <= 1))
    throw std::invalid_argument("randomSplit: need n >= 0 and fractions that sum to at most 1");
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
  Generator gen(seed);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(perm[static_cast<size_t>(i)], perm[gen.nextBelow(static_cast<uint64_t>(i + 1))]);
  const auto nTrain = static_cast<int64_t>(static_cast<double>(n) * trainFraction);
  const auto nValid = static_cast<int64_t>(static_cast<double>(n) * validFraction);
  DatasetSplit s;
  s.kind = "random";
  s.seed = seed;
  s.train.assign(perm.begin(), perm.begin() + nTrain);
  s.valid.assign(perm.begin() + nTrain, perm.begin() + nTrain + nValid);
  s.test.assign(perm.begin() + nTrain + nValid, perm.end());
  for (auto* v : {&s.train, &s.valid, &s.test}) std::sort(v->begin(), v->end());
  return s;
}

std::string murckoScaffold(const std::string& smiles) {
  std::unique_ptr<RDKit::ROMol> mol;
  try {
    mol.reset(RDKit::SmilesToMol(smiles));
  } catch (const std::exception& e) {
    throw std::runtime_error("RDKit cannot parse '" + smiles + "': " + e.what());
  }
  if (!mol) throw std::runtime_error("RDKit cannot parse '" + smiles + "'");
  // As Python's MurckoScaffold.GetScaffoldForMol: MurckoDecompose, then properties and rings recomputed.
  std::unique_ptr<RDKit::ROMol> scaffold(RDKit::MurckoDecompose(*mol));
  if (!scaffold || scaffold->getNumAtoms() == 0) return "";
  auto* rw = static_cast<RDKit::RWMol*>(scaffold.get());
  rw->clearComputedProps();
  rw->updatePropertyCache(false);
  RDKit::MolOps::findSSSR(*rw);
  return RDKit::MolToSmiles(*scaffold, /*doIsomericSmiles=*/false);
}

DatasetSplit scaffoldSplit(const std::vector<std::string>& smiles, double trainFraction, double validFraction) {
  const auto n = static_cast<int64_t>(smiles.size());
  std::unordered_map<std::string, std::vector<int64_t>> groups;
  for (int64_t i = 0; i < n; ++i) {
    std::string sc;
    try {
      sc = murckoScaffold(smiles[static_cast<size_t>(i)]);
    } catch (const std::exception& e) {
      throw std::runtime_error("scaffold split: molecule " + std::to_string(i) + ": " + e.what());
    }
    groups[sc].push_back(i);
  }
  std::vector<const std::vector<int64_t>*> order;
  order.reserve(groups.size());
  for (const auto& [sc, members] : groups) order.push_back(&members);
  // sorted(key=lambda x: (len(x), x[0]), reverse=True): larger groups first, ties by the larger first index.
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    if (a->size() != b->size()) return a->size() > b->size();
    return a->front() > b->front();
  });
  const double trainCutoff = trainFraction * static_cast<double>(n);
  const double validCutoff = (trainFraction + validFraction) * static_cast<double>(n);
  DatasetSplit s;
  s.kind = "scaffold";
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
  for (auto* v : {&s.train, &s.valid, &s.test}) std::sort(v->begin(), v->end());
  return s;
}

DatasetSplit splitFromFiles(const std::string& dir, const NpzDataset& dataset, int64_t sourceLimit) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": not a folder (expected {train,valid,test}.csv[.gz])");
  // Source index -> dataset position; indices absent here belong to rejected molecules (or to none).
  std::unordered_map<int64_t, int64_t> position;
  int64_t maxIndex = -1;
  for (size_t i = 0; i < dataset.size(); ++i) {
    position[dataset.sourceIndex(i)] = static_cast<int64_t>(i);
    maxIndex = std::max(maxIndex, dataset.sourceIndex(i));
  }
  std::unordered_map<int64_t, std::string> rejected;  // indices the build rejected
  {
    nlohmann::json meta = nlohmann::json::parse(dataset.metadataJson(), nullptr, false);
    if (meta.is_object() && meta.contains("rejected") && meta["rejected"].is_array())
      for (const auto& r : meta["rejected"]) rejected[r.value("index", int64_t{-1})] = "";
  }
  DatasetSplit s;
  s.kind = "file";
  s.path = dir;
  std::unordered_map<int64_t, std::string> seenIn;
  for (const auto& [name, target] : {std::pair<const char*, std::vector<int64_t>*>{"train", &s.train},
                                     {"valid", &s.valid},
                                     {"test", &s.test}}) {
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
      int64_t idx = -1;
      auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), idx);
      const std::string where = file.string() + ":" + std::to_string(reader.lineNumber()) + ": ";
      if (ec != std::errc() || end != line.data() + line.size() || idx < 0)
        throw std::runtime_error(where + "'" + std::string(line) + "' is not a molecule index (a 0-based integer)");
      auto it = position.find(idx);
      if (it == position.end()) {
        if (rejected.count(idx)) {
          ++s.droppedRejected;
          continue;
        }
        if (sourceLimit >= 0 && idx >= sourceLimit) {
          ++s.droppedBeyondLimit;
          continue;
        }
        throw std::runtime_error(where + "index " + std::to_string(idx) + " is not a molecule of the source (" +
                                 std::to_string(maxIndex + 1) + " molecules, indices 0.." + std::to_string(maxIndex) + ")");
      }
      auto [prev, fresh] = seenIn.emplace(idx, name);
      if (!fresh) throw std::runtime_error(where + "index " + std::to_string(idx) + " is already in " + prev->second);
      target->push_back(it->second);
    }
  }
  for (auto* v : {&s.train, &s.valid, &s.test}) std::sort(v->begin(), v->end());
  return s;
}

}  // namespace gnn
