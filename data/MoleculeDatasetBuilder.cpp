#include "data/MoleculeDatasetBuilder.h"

#include "data/RingSystemLimits.h"
#include "data/SmilesBounds.h"
#include "data/Utf8.h"

#include <GraphMol/FileParsers/FileParsers.h>
#include <GraphMol/GraphMol.h>
#include <GraphMol/SmilesParse/SmilesWrite.h>
#include <fcntl.h>
#include <omp.h>
#include <unistd.h>
#include <zlib.h>

#include <charconv>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_map>
#include <memory>
#include <nlohmann/json.hpp>

#include "data/GraphormerEncodings.h"
#include "data/GzLineReader.h"
#include "data/NpzDataset.h"
#include "data/Pcqm4mv2Reader.h"

namespace gnn {

namespace {

constexpr const char* kFormatName = "gnn-molecules-npz";

std::string tooManyAtoms(int64_t heavy, int64_t maxAtoms) {
  return std::to_string(heavy) + " heavy atoms, more than --max-atoms " + std::to_string(maxAtoms);
}

void copyPositions(const RDKit::ROMol& mol, MoleculeGraph& g) {
  const RDKit::Conformer& conf = mol.getConformer();
  g.pos.resize(static_cast<size_t>(g.numNodes) * 3);
  for (int64_t i = 0; i < g.numNodes; ++i) {
    const RDGeom::Point3D& p = conf.getAtomPos(static_cast<unsigned>(i));
    g.pos[3 * i] = static_cast<float>(p.x);
    g.pos[3 * i + 1] = static_cast<float>(p.y);
    g.pos[3 * i + 2] = static_cast<float>(p.z);
  }
}

// The targets as a JSON array: float32 values in their shortest round-trip form, null when missing.
void appendTargets(std::string& s, const MoleculeRecord& r) {
  s += "[";
  char buf[32];
  for (size_t t = 0; t < r.y.size(); ++t) {
    if (t) s += ',';
    if (t < r.yMask.size() && r.yMask[t] && std::isfinite(r.y[t])) {
      auto res = std::to_chars(buf, buf + sizeof buf, r.y[t]);
      s.append(buf, res.ptr);
    } else {
      s += "null";
    }
  }
  s += "]";
}

// Writes one --jsonl line. Hand-written rather than through nlohmann::json: it runs once per molecule.
void writeJsonLine(std::ostream& os, const MoleculeRecord& r, const MoleculeGraph* g, const std::string& error,
                   bool graphormer) {
  std::string s = "{\"line\":" + std::to_string(r.line) + ",\"smiles\":" + nlohmann::json(escapeInvalidUtf8(r.label())).dump();
  s += ",\"y\":";
  appendTargets(s, r);
  if (!g) {
    s += ",\"error\":" + nlohmann::json(error).dump() + "}\n";
    os << s;
    return;
  }
  auto rows = [&s](const std::vector<int64_t>& v, size_t width) {
    s += '[';
    for (size_t i = 0; i < v.size(); i += width) {
      if (i) s += ',';
      s += '[';
      for (size_t k = 0; k < width; ++k) {
        if (k) s += ',';
        s += std::to_string(v[i + k]);
      }
      s += ']';
    }
    s += ']';
  };
  auto flat = [&s](const std::vector<int64_t>& v) {
    s += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) s += ',';
      s += std::to_string(v[i]);
    }
    s += ']';
  };
  s += ",\"x\":";
  rows(g->x, MoleculeGraph::kAtomFeatures);
  s += ",\"edge_index\":[";
  flat(g->src);
  s += ',';
  flat(g->dst);
  s += "],\"edge_attr\":";
  rows(g->edgeAttr, MoleculeGraph::kBondFeatures);
  if (graphormer) {
    s += ",\"spatial_pos\":";
    if (g->numNodes == 0)
      s += "[]";
    else
      rows(g->spatialPos, static_cast<size_t>(g->numNodes));
    s += ",\"degree\":";
    flat(g->inDegree);
  }
  s += "}\n";
  os << s;
}

}  // namespace

std::pair<uint32_t, uint64_t> fileChecksum(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "cannot open");
  std::vector<char> buf(1 << 20);
  uLong crc = crc32(0L, Z_NULL, 0);
  uint64_t bytes = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    crc = crc32(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(n));
    bytes += static_cast<uint64_t>(n);
  }
  return {static_cast<uint32_t>(crc), bytes};
}

namespace {

// The file whose bytes the metadata's checksum covers: the input itself, or a PCQM4Mv2 folder's data file.
std::string inputFileOf(const std::string& path) {
  if (std::filesystem::is_directory(path))
    for (const char* f : {"raw/data.csv.gz", "raw/data.csv"})
      if (std::filesystem::exists(std::filesystem::path(path) / f)) return (std::filesystem::path(path) / f).string();
  return path;
}

// What a resumed build must share with the one that saved the state: every option that changes the output,
// and the input file as it was (size and modification time, as make judges a file unchanged).
nlohmann::json resumeFingerprint(const BuildOptions& o, const std::string& inputFile) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(inputFile, ec);
  const auto mtime = std::filesystem::last_write_time(inputFile, ec).time_since_epoch().count();
  // writer_state 2: NpzWriter's snapshot holds each array's largest value (narrow dtypes); a state saved by an
  // earlier build is refused here, with the advice to remove it, rather than misread.
  return {{"format_version", o.formatVersion},
          {"writer_state", 2},
          {"input", std::filesystem::absolute(o.source.path).string()},
          {"input_bytes", static_cast<uint64_t>(size)},
          {"input_mtime", static_cast<int64_t>(mtime)},
          {"format", o.source.format},
          {"smiles_column", o.source.smilesColumn},
          {"targets", o.source.targetColumns},
          {"split_column", o.source.splitColumn},
          {"explicit_hydrogens", o.featurizer.explicitHydrogens},
          {"max_ring_dummies", o.featurizer.ringLimits.maxDummies},
          {"max_fused_rings", o.featurizer.ringLimits.maxRings},
          {"conformers", o.conformers},
          {"conformer_seed", o.conformer.seed},
          {"max_conformer_atoms", o.conformer.maxHeavyAtoms},
          {"graphormer_max_dist", o.graphormerMaxDist},
          {"max_smiles_length", o.maxSmilesLength},
          {"max_atoms", o.maxAtoms},
          {"limit", o.limit},
          {"strict", o.strict},
          {"out", std::filesystem::absolute(o.outPath).string()}};
}

// Written to a temp file, fsync'd and renamed over the old state, so a kill leaves the old state or the new.
void saveResumeState(const std::string& dir, const nlohmann::json& state) {
  const std::string path = dir + "/state.json", tmp = path + ".tmp";
  {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw std::runtime_error(tmp + ": cannot write the resume state: " + std::strerror(errno));
    const std::string text = state.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
                    ::fsync(::fileno(f)) == 0;
    if (std::fclose(f) != 0 || !ok) throw std::runtime_error(tmp + ": cannot write the resume state: " + std::strerror(errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(path + ": cannot save the resume state: " + ec.message());
  if (const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); d >= 0) {
    ::fsync(d);
    ::close(d);
  }
}

// The state a killed or stopped build saved in resumeDir, when it is one of this input and options (null when
// there is none: the folder is then emptied).
nlohmann::json loadResumeState(const std::string& resumeDir, const nlohmann::json& fingerprint) {
  nlohmann::json saved;
  const std::filesystem::path statePath = std::filesystem::path(resumeDir) / "state.json";
  if (std::filesystem::exists(statePath)) {
    std::ifstream in(statePath);
    saved = nlohmann::json::parse(in, nullptr, false);
    if (!saved.is_object() || !saved.contains("fingerprint") || !saved.contains("writer"))
      throw std::runtime_error(statePath.string() + ": not a resume state (damaged?): remove " + resumeDir +
                               " to build from the start");
    if (saved["fingerprint"] != fingerprint)
      throw std::runtime_error(resumeDir + " holds a build of other input or options (" +
                               saved["fingerprint"].dump() + "): remove it to build from the start");
  } else {
    // Anything else there (array files of a build killed before its first chunk) is not trusted.
    std::filesystem::remove_all(resumeDir);
    std::filesystem::create_directories(resumeDir);
  }
  return saved;
}

nlohmann::json rejectedJson(const std::vector<RejectedMolecule>& molecules) {
  nlohmann::json rejected = nlohmann::json::array();
  for (const RejectedMolecule& m : molecules)
    rejected.push_back({{"line", m.line}, {"index", m.index}, {"smiles", m.smiles}, {"reason", m.reason}});
  return rejected;
}

// What a resumed build starts from: everything written so far (the writer's snapshot, flushed to disk) and the
// counts after the `seen` input records it covers.
nlohmann::json resumeState(const nlohmann::json& fingerprint, int64_t seen, const BuildSummary& summary,
                           NpzDatasetWriter& writer) {
  nlohmann::json rejected = rejectedJson(summary.rejectedMolecules);
  return {{"fingerprint", fingerprint},
          {"records", seen},
          {"accepted", summary.accepted},
          {"nodes", summary.nodes},
          {"edges", summary.edges},
          {"rejected", rejected},
          {"writer", writer.snapshot()}};
}

// The counts a saved state holds, into summary; returns the input records it covers.
int64_t restoreSummary(const nlohmann::json& saved, BuildSummary& summary) {
  const int64_t seen = saved.value("records", int64_t{0});
  summary.resumedRecords = seen;
  summary.accepted = saved.value("accepted", int64_t{0});
  summary.nodes = saved.value("nodes", int64_t{0});
  summary.edges = saved.value("edges", int64_t{0});
  for (const nlohmann::json& r : saved.value("rejected", nlohmann::json::array()))
    summary.rejectedMolecules.push_back({r.value("line", int64_t{0}), r.value("index", int64_t{0}),
                                         r.value("smiles", std::string()), r.value("reason", std::string())});
  summary.rejected = static_cast<int64_t>(summary.rejectedMolecules.size());
  return seen;
}

// A stop request is read once per check and thrown from this thread only: OpenMP threads just skip the
// rest of their chunk, and the chunk is then abandoned here.
struct StopCheck {
  const std::function<int()>& requested;
  int code() const { return requested ? requested() : 0; }
  void throwIfStopped() const {
    if (const int c = code()) throw BuildInterrupted(c);
  }
};

// The dataset's splits as positions among the accepted molecules: a PCQM4Mv2 folder's split lists of source ids
// (mapped once every molecule is read: a rejected molecule drops out of its split), or a split column's sets
// (filled as molecules are accepted).
class DatasetSplits {
 public:
  DatasetSplits(const std::string& format, const MoleculeSourceOptions& source) {
    if (format == "pcqm4mv2") listed_ = Pcqm4mv2Reader::readSplits(source.path);
    column_ = !source.splitColumn.empty();
    if (column_) columnSplits_ = {{"train", {}}, {"valid", {}}, {"test", {}}};
  }
  /// Record r accepted as the dataset's molecule `position`.
  void accept(const MoleculeRecord& r, int64_t position) {
    if (column_) columnSplits_[r.split].push_back(position);
    if (!listed_.empty()) acceptedIds_.push_back(r.index);
  }
  void addTo(NpzDatasetWriter& writer) const {
    // Source ids -> positions among accepted molecules.
    if (!listed_.empty()) {
      std::unordered_map<int64_t, int64_t> position;
      position.reserve(acceptedIds_.size());
      for (size_t i = 0; i < acceptedIds_.size(); ++i) position.emplace(acceptedIds_[i], static_cast<int64_t>(i));
      for (const auto& [name, ids] : listed_) {
        std::vector<int64_t> pos;
        for (int64_t id : ids) {
          auto it = position.find(id);
          if (it != position.end()) pos.push_back(it->second);
        }
        writer.addSplit(name, pos);
      }
    }
    for (const auto& [name, positions] : columnSplits_) writer.addSplit(name, positions);
  }

 private:
  std::map<std::string, std::vector<int64_t>> listed_;  // source ids per split
  std::vector<int64_t> acceptedIds_;                    // of accepted molecules, in order, only with listed_
  bool column_ = false;
  std::map<std::string, std::vector<int64_t>> columnSplits_;  // dataset positions per set
};

// Reads the first `seen` records again after a resume (no featurising), to give the splits the records the
// saved build accepted: those the summary does not list as rejected.
void rereadAccepted(MoleculeSource& source, int64_t seen, const BuildSummary& summary, DatasetSplits& splits,
                    MoleculeRecord& r, const std::string& resumeDir, const StopCheck& stop) {
  std::unordered_map<int64_t, char> rejectedLines;
  for (const RejectedMolecule& m : summary.rejectedMolecules) rejectedLines[m.line] = 1;
  int64_t accepted = 0;
  for (int64_t i = 0; i < seen; ++i) {
    if ((i & 4095) == 0) stop.throwIfStopped();
    if (!source.next(r)) throw std::runtime_error(resumeDir + ": the input is shorter than the saved state");
    if (rejectedLines.count(r.line)) continue;
    splits.accept(r, accepted);
    ++accepted;
  }
  if (accepted != summary.accepted)
    throw std::runtime_error(resumeDir +
                             ": the saved state does not match the input: remove it to build from the start");
}

// A chunk's records and what featurising each gave (slot i holds record i's), reused from chunk to chunk, with
// one Graphormer encoder per thread when encodings are asked for (k > 0).
struct ChunkSlots {
  ChunkSlots(size_t chunk, int threads, int k)
      : records(chunk), graphs(chunk), errors(chunk), ok(chunk), encoders(static_cast<size_t>(threads)) {
    if (k > 0)
      for (auto& e : encoders) e = std::make_unique<GraphormerEncodings>(k, /*capAtLongestPath=*/true);
  }
  std::vector<MoleculeRecord> records;
  std::vector<MoleculeGraph> graphs;
  std::vector<std::string> errors;
  std::vector<char> ok;
  std::vector<std::unique_ptr<GraphormerEncodings>> encoders;

  // Slots are reused, but a slot must not keep the capacity of the largest molecule it ever held: over a
  // long run every slot would ratchet up to the tail of the size distribution and memory would grow with
  // the input. Graphormer's N^2 buffers are freed after every chunk (one allocation per molecule is
  // nothing next to RDKit's parse); the small O(N) ones only when a large molecule inflated them.
  void release(size_t count) {
    for (size_t i = 0; i < count; ++i) {
      MoleculeGraph& g = graphs[i];
      std::vector<int64_t>().swap(g.spatialPos);
      std::vector<int16_t>().swap(g.edgeInput);
      std::vector<int32_t>().swap(g.pathVia);
      if (g.x.capacity() > (1u << 10) || g.edgeAttr.capacity() > (1u << 11)) g = MoleculeGraph();
    }
  }
};

// Reads the next chunk of records into the slots: as many as fit, up to the end of the input or `limit` records
// in all (-1: no limit); `more` turns false when nothing is left to read. Returns how many were read.
size_t readChunk(MoleculeSource& source, ChunkSlots& slots, int64_t limit, int64_t& seen, bool& more,
                 const StopCheck& stop) {
  const size_t chunk = slots.records.size();
  size_t count = 0;
  while (count < chunk && (limit < 0 || seen < limit)) {
    stop.throwIfStopped();
    if (!source.next(slots.records[count])) {
      more = false;
      break;
    }
    ++count;
    ++seen;
  }
  if (limit >= 0 && seen >= limit) more = false;
  return count;
}

// Featurises the chunk's first `count` records in parallel, with Graphormer's encodings (format 2: the paths
// only) when k > 0. Slot i gets record i's graph whatever the thread count.
void featurizeChunk(const MoleculeDatasetBuilder& builder, ChunkSlots& slots, size_t count, int threads, int k,
                    bool pathsOnly, const StopCheck& stop) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8)
  for (long i = 0; i < static_cast<long>(count); ++i) {
    if (stop.code()) continue;  // conformers or encodings can take long per molecule: stop between them
    std::string& err = slots.errors[i];
    err.clear();
    slots.ok[i] = builder.featurize(slots.records[i], slots.graphs[i], err);
    if (slots.ok[i] && k > 0) {
      GraphormerEncodings& enc = *slots.encoders[static_cast<size_t>(omp_get_thread_num())];
      if (pathsOnly)
        enc.computePaths(slots.graphs[i]);
      else
        enc.compute(slots.graphs[i]);
    }
  }
}

// The report of a rejected record; `error` gains the parse error's reason when RDKit gave it only in its log.
RejectedMolecule rejection(const MoleculeRecord& r, std::string& error, const SmilesFeaturizer& featurizer) {
  // A syntax error's reason is only in RDKit's log: fetch it now that no other thread is in RDKit.
  if (error == "SMILES parse error") error = featurizer.explainFailure(r.smiles);
  // Reports quote the molecule; a 400,000-character line is shown by its start and its length.
  std::string label = escapeInvalidUtf8(r.label());
  if (label.size() > 200) label = label.substr(0, 200) + "... (" + std::to_string(r.label().size()) + " characters)";
  return {r.line, r.index, std::move(label), error};
}

BuildProgress chunkProgress(int64_t seen, int64_t line, const BuildSummary& summary, double seconds, int64_t limit) {
  BuildProgress p;
  p.records = seen;
  p.line = line;
  p.accepted = summary.accepted;
  p.rejected = summary.rejected;
  p.seconds = seconds;
  if (limit > 0) p.fraction = static_cast<double>(seen) / static_cast<double>(limit);
  return p;
}

// The dataset's metadata JSON. Nothing here may depend on the thread count or the clock: the file's bytes must
// not.
nlohmann::json datasetMetadata(const BuildOptions& o, const std::string& format, const MoleculeSource& source,
                               const BuildSummary& summary, const NpzDatasetWriter& writer,
                               const std::string& checksumFile) {
  const auto [crc, bytes] = fileChecksum(checksumFile);
  char crcHex[16];
  std::snprintf(crcHex, sizeof crcHex, "%08x", crc);
  nlohmann::json rejected = rejectedJson(summary.rejectedMolecules);
  return {
      {"format", kFormatName},
      {"format_version", o.formatVersion},
      {"feature_vocabulary", SmilesFeaturizer::kVocabularyVersion},
      {"atom_feature_dims", SmilesFeaturizer::kAtomFeatureDims},
      {"bond_feature_dims", SmilesFeaturizer::kBondFeatureDims},
      {"rdkit_version", rdkitVersion()},
      {"source",
       {{"path", std::filesystem::path(checksumFile).filename().string()},
        {"format", format},
        {"crc32", crcHex},
        {"bytes", bytes}}},
      {"targets", source.targetNames()},
      {"num_graphs", summary.accepted},
      {"num_nodes", summary.nodes},
      {"num_edges", summary.edges},
      {"options",
       {{"explicit_hydrogens", o.featurizer.explicitHydrogens},
        {"conformers", o.conformers},
        {"conformer_seed", o.conformer.seed},
        // The K stored: the requested one capped at the longest possible path (NpzDatasetWriter), so a build
        // asking for more hops than any molecule has writes the same bytes as one asking for just enough.
        {"graphormer_max_dist", writer.graphormerMaxDist()},
        {"limit", o.limit},
        {"split_column", o.source.splitColumn}}},
      {"num_rejected", summary.rejected},
      {"rejected", rejected},
  };
}

}  // namespace

MoleculeDatasetBuilder::MoleculeDatasetBuilder(BuildOptions options)
    : options_(std::move(options)), featurizer_(options_.featurizer), conformers_(options_.conformer) {
  GNN_CHECK_ARG(options_.threads >= 1, "threads must be >= 1, got ", options_.threads);
  GNN_CHECK_ARG(options_.chunkSize >= 1, "chunk size must be >= 1");
  GNN_CHECK_ARG(options_.graphormerMaxDist >= 0, "--graphormer-max-dist must be >= 0");
  GNN_CHECK_ARG(options_.formatVersion == 1 || options_.formatVersion == 2, "--format-version must be 1 or 2, got ",
                options_.formatVersion);
}

bool MoleculeDatasetBuilder::featurize(const MoleculeRecord& r, MoleculeGraph& g, std::string& error) const {
  g.clear();
  if (!r.error.empty()) {
    error = r.error;
    return false;
  }
  // Text that is not UTF-8 cannot be a SMILES, and could not be written to the dataset's JSON either.
  for (const std::string* text : {&r.smiles, &r.name, &r.molBlock}) {
    size_t at = 0;
    if (!isValidUtf8(*text, &at)) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>((*text)[at]));
      error = std::string(text == &r.smiles ? "the SMILES" : text == &r.name ? "the name" : "the mol block") +
              " holds a byte that is not UTF-8 (" + byte + " at byte " + std::to_string(at + 1) + ")";
      return false;
    }
  }
  try {
    if (!r.atomicNumbers.empty() || (r.smiles.empty() && r.molBlock.empty())) {
      // XYZ: atoms and coordinates, no bonds (OGB's other atom features need bonds; they stay 0).
      const int64_t n = static_cast<int64_t>(r.atomicNumbers.size());
      if (options_.maxAtoms > 0 && n > options_.maxAtoms) {
        error = std::to_string(n) + " atoms, more than --max-atoms " + std::to_string(options_.maxAtoms);
        return false;
      }
      g.numNodes = n;
      g.x.assign(static_cast<size_t>(n) * MoleculeGraph::kAtomFeatures, 0);
      g.z.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const int z = r.atomicNumbers[i];
        g.x[i * MoleculeGraph::kAtomFeatures] = (z >= 1 && z <= 118) ? z - 1 : 118;
        g.z[i] = z;
      }
      g.pos = r.pos;
    } else {
      std::unique_ptr<RDKit::RWMol> mol;
      std::string smiles;
      if (!r.smiles.empty()) {
        if (options_.maxSmilesLength > 0 && static_cast<int64_t>(r.smiles.size()) > options_.maxSmilesLength) {
          error = "SMILES of " + std::to_string(r.smiles.size()) + " characters, longer than --max-smiles-length " +
                  std::to_string(options_.maxSmilesLength);
          return false;
        }
        // --max-atoms before RDKit sanitises: its time grows steeply with the atoms (0.6 s for a 999-carbon
        // chain), so the heavy atoms are counted from the text (exact for a valid SMILES) and a molecule over the
        // limit is refused in microseconds. An invalid SMILES over it is refused for its size, not its syntax.
        // Dummy atoms count as heavy here and written hydrogens against twice the limit (data/SmilesBounds.h).
        if (std::string why = atomBoundsError(smilesAtomCounts(r.smiles), options_.maxAtoms); !why.empty()) {
          error = why;
          return false;
        }
        mol = featurizer_.parse(r.smiles, error);
        smiles = r.smiles;
      } else {
        try {
          // The ring-system limits need the molecule before sanitisation; a mol block has no cheap text test
          // as a SMILES has, so it is read twice (the unsanitised read is the cheap part).
          // --max-atoms is checked on the same unsanitised read, before the sanitisation whose time it bounds.
          const RingSystemLimits& limits = options_.featurizer.ringLimits;
          if (limits.maxDummies > 0 || limits.maxRings > 0 || options_.maxAtoms > 0) {
            std::unique_ptr<RDKit::RWMol> raw(RDKit::MolBlockToMol(r.molBlock, false, false));
            if (raw) error = atomBoundsError(molAtomCounts(*raw), options_.maxAtoms);
            if (raw && error.empty())
              error = limits.check(*raw);
            if (!error.empty()) return false;
          }
          mol.reset(RDKit::MolBlockToMol(r.molBlock, true, !options_.featurizer.explicitHydrogens));
        } catch (const std::exception& e) {
          error = e.what();
          return false;
        }
        if (!mol) error = "RDKit could not read the mol block";
        // The record has no SMILES: store RDKit's canonical one of the molecule as read (before AddHs).
        if (mol) smiles = RDKit::MolToSmiles(*mol);
        if (mol && options_.featurizer.explicitHydrogens) RDKit::MolOps::addHs(*mol, false, true);
      }
      if (!mol) return false;
      // Checked before the parse above; kept here so that no input the text count could have missed skips it.
      if (options_.maxAtoms > 0 && static_cast<int64_t>(mol->getNumHeavyAtoms()) > options_.maxAtoms) {
        error = tooManyAtoms(mol->getNumHeavyAtoms(), options_.maxAtoms);
        return false;
      }
      SmilesFeaturizer::featurizeMol(*mol, g);
      g.smiles = std::move(smiles);
      if (positions_) {
        g.z.resize(static_cast<size_t>(g.numNodes));
        for (int64_t i = 0; i < g.numNodes; ++i) g.z[i] = mol->getAtomWithIdx(static_cast<unsigned>(i))->getAtomicNum();
        const bool has3d = mol->getNumConformers() > 0 && mol->getConformer().is3D();
        if (mol->getNumConformers() > 0 && (has3d || !options_.conformers)) {
          copyPositions(*mol, g);
        } else if (!conformers_.generate(*mol, g.pos, error)) {
          g.clear();
          return false;
        }
      }
    }
  } catch (const std::exception& e) {
    error = e.what();
    g.clear();
    return false;
  }
  g.y = r.y;
  g.yMask = r.yMask;
  return true;
}

BuildSummary MoleculeDatasetBuilder::run() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  RdkitLogSilencer quiet;
  const StopCheck stop{options_.stopRequested};
  std::unique_ptr<MoleculeSource> source = openMoleculeSource(options_.source);
  const std::string format = source->format();
  positions_ = options_.conformers || format == "sdf" || format == "xyz";
  const int k = options_.graphormerMaxDist;
  const int numTargets = static_cast<int>(source->targetNames().size());

  // A resumable build: the state a killed or stopped build saved, if it is one of this input and options.
  const std::string& resumeDir = options_.resumeDir;
  const std::string inputFile = inputFileOf(options_.source.path);
  nlohmann::json fingerprint, saved;
  if (!resumeDir.empty()) {
    GNN_CHECK_ARG(!options_.outPath.empty(), "a resumable build needs an output .npz");
    GNN_CHECK_ARG(options_.jsonl == nullptr, "a resumable build cannot write JSON lines");
    fingerprint = resumeFingerprint(options_, inputFile);
    saved = loadResumeState(resumeDir, fingerprint);
  }

  std::unique_ptr<NpzDatasetWriter> writer;
  if (!options_.outPath.empty())
    writer = std::make_unique<NpzDatasetWriter>(
        NpzDatasetWriter::Options{options_.outPath, numTargets, positions_, k, resumeDir, options_.formatVersion});
  // Format 2 stores the paths and leaves edge_input to the reader: no n^2 K buffer per molecule here.
  const bool pathsOnly = options_.formatVersion >= 2;

  const int threads = options_.threads;
  ChunkSlots slots(static_cast<size_t>(options_.chunkSize), threads, k);
  BuildSummary summary;
  summary.threads = threads;
  DatasetSplits splits(format, options_.source);
  int64_t seen = 0;
  if (saved.is_object()) {
    // Resume: the writer goes back to the last finished chunk; the input is read again up to there (reading
    // is cheap next to featurising) to find which records the splits need, without featurising them.
    writer->restore(saved["writer"].get<std::vector<int64_t>>());
    seen = restoreSummary(saved, summary);
    rereadAccepted(*source, seen, summary, splits, slots.records[0], resumeDir, stop);
  }
  bool more = !(options_.limit >= 0 && seen >= options_.limit);
  while (more) {
    const size_t count = readChunk(*source, slots, options_.limit, seen, more, stop);
    if (count == 0) break;
    featurizeChunk(*this, slots, count, threads, k, pathsOnly, stop);
    stop.throwIfStopped();

    for (size_t i = 0; i < count; ++i) {
      const MoleculeRecord& r = slots.records[i];
      if (!slots.ok[i]) {
        summary.rejectedMolecules.push_back(rejection(r, slots.errors[i], featurizer_));
        ++summary.rejected;
        if (options_.jsonl) writeJsonLine(*options_.jsonl, r, nullptr, slots.errors[i], k > 0);
        continue;
      }
      splits.accept(r, summary.accepted);
      ++summary.accepted;
      summary.nodes += slots.graphs[i].numNodes;
      summary.edges += slots.graphs[i].numEdges();
      if (writer) writer->add(slots.graphs[i], r.index, r.line);
      if (options_.jsonl) writeJsonLine(*options_.jsonl, r, &slots.graphs[i], "", k > 0);
    }
    slots.release(count);
    if (!resumeDir.empty() && writer) saveResumeState(resumeDir, resumeState(fingerprint, seen, summary, *writer));
    if (options_.progress)
      options_.progress(chunkProgress(seen, slots.records[count - 1].line, summary,
                                      std::chrono::duration<double>(Clock::now() - start).count(), options_.limit));
  }
  stop.throwIfStopped();

  if (writer && !(options_.strict && summary.rejected > 0)) {
    splits.addTo(*writer);
    const nlohmann::json meta = datasetMetadata(options_, format, *source, summary, *writer, inputFile);
    writer->finish(meta.dump(1, ' ', false, nlohmann::json::error_handler_t::replace),
                   [&stop] { stop.throwIfStopped(); });
    summary.written = true;
  }
  writer.reset();  // an unfinished writer removes its temp files
  if (!resumeDir.empty()) std::filesystem::remove_all(resumeDir);  // complete: nothing left to resume
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

}  // namespace gnn
