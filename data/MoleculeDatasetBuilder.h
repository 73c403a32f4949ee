// MoleculeDatasetBuilder: the whole build of a molecular dataset: read (streaming, in chunks), featurise in
// parallel (OGB features, optional conformers and Graphormer encodings), then write in input order to an
// .npz and/or JSON lines. Output bytes do not depend on the thread count; memory does not grow with the
// input (only the list of rejected molecules does). Rejected molecules are reported and the build goes on.
// A build can be stopped from outside (a signal): it throws BuildInterrupted and leaves no file behind.
//
//   std::atomic<int> stop{0};                  // e.g. set to the signal number by a SIGINT handler
//   BuildOptions o;
//   o.source.path = "HIV.csv.gz";  o.outPath = "hiv.npz";  o.threads = 2;
//   o.stopRequested = [&stop] { return stop.load(); };
//   BuildSummary s = MoleculeDatasetBuilder(o).run();
#pragma once
#include <cstdint>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/ConformerGenerator.h"
#include "data/MoleculeGraph.h"
#include "data/MoleculeRecord.h"
#include "data/MoleculeSource.h"
#include "data/SmilesFeaturizer.h"

namespace gnn {

struct RejectedMolecule {
  int64_t line = 0;
  int64_t index = 0;
  std::string smiles;  // or the record's name for SDF/XYZ
  std::string reason;
};

struct BuildProgress {
  int64_t records = 0, accepted = 0, rejected = 0;
  int64_t line = 0;  // input line of the last record read
  double seconds = 0;
  double fraction = -1;  // of the input read, when known (-1 otherwise)
};

struct BuildOptions {
  MoleculeSourceOptions source;
  SmilesFeaturizer::Options featurizer;
  bool conformers = false;          // ETKDG coordinates for molecules that have none
  ConformerGenerator::Options conformer;
  int graphormerMaxDist = 0;        // > 0: compute Graphormer encodings with multi_hop_max_dist = this
  /// The .npz layout (docs/datasets.md): 2, narrow dtypes and Graphormer's paths in O(n^2) per molecule; 1,
  /// the earlier layout with edge_input [P, K, 3], for readers that predate format 2.
  int formatVersion = 2;
  /// Bounded work per molecule (0: no limit). RDKit's parse time grows about with the cube of the atoms
  /// (1,000 atoms ~0.8 s, 2,000 ~9 s here), so a molecule is refused from its text before RDKit parses it: more
  /// than maxAtoms heavy and dummy atoms, or more than 2 maxAtoms atoms with written hydrogens
  /// (data/SmilesBounds.h; XYZ: atoms), and SMILES longer than maxSmilesLength characters. Every molecule of
  /// MoleculeNet's and OGB's sets passes both: the largest has 492 heavy atoms (SIDER), the longest SMILES 1,340
  /// characters; 10,000 characters hold 500 atoms however they are written. Graphormer's encodings are N^2 per
  /// molecule too.
  int64_t maxSmilesLength = 10000;
  int64_t maxAtoms = 500;
  int threads = 1;
  int64_t limit = -1;               // stop after this many input records (-1: all)
  int chunkSize = 4096;             // records featurised per parallel step
  bool strict = false;              // a rejected molecule fails the build: no dataset is written
  std::string outPath;              // .npz to write (empty: none)
  /// Non-empty: a resumable build. After every chunk, what is written so far and how far the input was read
  /// are saved (fsync'd) in this folder; a build finding a saved state there from the same input and options
  /// goes on after its last finished chunk instead of starting over, and writes the same bytes as a build that
  /// was never stopped. The folder stays when the build is stopped or killed, and goes when it completes.
  /// Needs outPath; not with jsonl.
  std::string resumeDir;
  std::ostream* jsonl = nullptr;    // one JSON object per input record, in input order
  std::function<void(const BuildProgress&)> progress;  // called after each chunk
  /// Polled between records, by the featurisation threads between molecules, and while the .npz is
  /// assembled (so from several threads at once: it must be thread-safe, e.g. an atomic load). Nonzero
  /// stops the build with BuildInterrupted carrying that value (e.g. the signal number).
  std::function<int()> stopRequested;
};

/// Thrown by MoleculeDatasetBuilder::run when BuildOptions::stopRequested returns nonzero. The builder has
/// removed its temp files by the time it reaches the caller.
class BuildInterrupted : public std::runtime_error {
 public:
  explicit BuildInterrupted(int code)
      : std::runtime_error("build interrupted (" + std::to_string(code) + ")"), code_(code) {}
  /// What stopRequested returned: the signal number when it relays a signal.
  int code() const { return code_; }

 private:
  int code_;
};

struct BuildSummary {
  int64_t resumedRecords = 0;  // input records a resumed build took from the saved state
  int64_t accepted = 0, rejected = 0;
  int64_t nodes = 0, edges = 0;
  double seconds = 0;
  int threads = 1;
  bool written = false;  // the .npz exists (false with strict and rejects, or without outPath)
  std::vector<RejectedMolecule> rejectedMolecules;
};

class MoleculeDatasetBuilder {
 public:
  explicit MoleculeDatasetBuilder(BuildOptions options);
  /// Throws InputError naming the file for unreadable input (e.g. a truncated .gz) and BuildInterrupted
  /// when stopped; either way no .npz and no temp file is left.
  BuildSummary run();

  /// Record -> graph (OGB features, targets, coordinates, encodings as the options ask, and out.smiles).
  /// False with `error` set when the molecule is rejected. Thread-safe for distinct `out` objects.
  bool featurize(const MoleculeRecord& record, MoleculeGraph& out, std::string& error) const;

 private:
  BuildOptions options_;
  SmilesFeaturizer featurizer_;
  ConformerGenerator conformers_;
  bool positions_ = false;
};

/// CRC-32 (zlib) and byte count of a file, read raw: the checksum recorded in dataset metadata.
std::pair<uint32_t, uint64_t> fileChecksum(const std::string& path);

}  // namespace gnn
