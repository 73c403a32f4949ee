#include "data/SmilesFeaturizer.h"

#include <GraphMol/GraphMol.h>
#include <GraphMol/MolOps.h>
#include <GraphMol/SmilesParse/SmilesParse.h>
#include <RDGeneral/RDLog.h>
#include <RDGeneral/versions.h>

#include <mutex>
#include <sstream>
#include <stdexcept>

namespace gnn {

namespace {

// Each function returns the index OGB's safe_index gives (ogb/utils/features.py, allowable_features):
// the position of the value in OGB's list, or the list's last ("misc") index when the value is absent.

int64_t atomicNumIndex(int z) { return (z >= 1 && z <= 118) ? z - 1 : 118; }

// possible_chirality_list = [CHI_UNSPECIFIED, CHI_TETRAHEDRAL_CW, CHI_TETRAHEDRAL_CCW, CHI_OTHER, misc]; the
// first four are RDKit's enum values 0..3 in the same order. Newer tags (CHI_TETRAHEDRAL, CHI_ALLENE,
// CHI_SQUAREPLANAR, ...) are not in OGB's list -> misc.
int64_t chiralityIndex(RDKit::Atom::ChiralType t) {
  switch (t) {
    case RDKit::Atom::CHI_UNSPECIFIED: return 0;
    case RDKit::Atom::CHI_TETRAHEDRAL_CW: return 1;
    case RDKit::Atom::CHI_TETRAHEDRAL_CCW: return 2;
    case RDKit::Atom::CHI_OTHER: return 3;
    default: return 4;
  }
}

// Lists of consecutive integers [lo, hi] + misc.
int64_t rangeIndex(int64_t v, int64_t lo, int64_t hi) { return (v >= lo && v <= hi) ? v - lo : hi - lo + 1; }

// possible_hybridization_list = [SP, SP2, SP3, SP3D, SP3D2, misc] (matched by name: RDKit's enum also has
// UNSPECIFIED, S, SP2D and OTHER, which all go to misc).
int64_t hybridizationIndex(RDKit::Atom::HybridizationType h) {
  switch (h) {
    case RDKit::Atom::SP: return 0;
    case RDKit::Atom::SP2: return 1;
    case RDKit::Atom::SP3: return 2;
    case RDKit::Atom::SP3D: return 3;
    case RDKit::Atom::SP3D2: return 4;
    default: return 5;
  }
}

// possible_bond_type_list = [SINGLE, DOUBLE, TRIPLE, AROMATIC, misc].
int64_t bondTypeIndex(RDKit::Bond::BondType t) {
  switch (t) {
    case RDKit::Bond::SINGLE: return 0;
    case RDKit::Bond::DOUBLE: return 1;
    case RDKit::Bond::TRIPLE: return 2;
    case RDKit::Bond::AROMATIC: return 3;
    default: return 4;
  }
}

// possible_bond_stereo_list = [STEREONONE, STEREOZ, STEREOE, STEREOCIS, STEREOTRANS, STEREOANY]. OGB uses
// list.index here (no misc bucket), so a value outside the list is an error, as in OGB. Note the order
// differs from RDKit's enum (STEREOANY is 1 there).
int64_t bondStereoIndex(RDKit::Bond::BondStereo s) {
  switch (s) {
    case RDKit::Bond::STEREONONE: return 0;
    case RDKit::Bond::STEREOZ: return 1;
    case RDKit::Bond::STEREOE: return 2;
    case RDKit::Bond::STEREOCIS: return 3;
    case RDKit::Bond::STEREOTRANS: return 4;
    case RDKit::Bond::STEREOANY: return 5;
    default:
      throw std::invalid_argument("bond stereo value " + std::to_string(static_cast<int>(s)) +
                                  " is not in OGB's possible_bond_stereo_list");
  }
}

std::mutex& logMutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::unique_ptr<RDKit::RWMol> SmilesFeaturizer::parse(const std::string& smiles, std::string& error) const {
  std::unique_ptr<RDKit::RWMol> mol;
  try {
    error = options_.ringLimits.check(smiles);
    if (!error.empty()) return nullptr;
    mol.reset(RDKit::SmilesToMol(smiles));  // sanitize + removeHs, as Chem.MolFromSmiles
  } catch (const std::exception& e) {
    // Sanitisation failures (valence, kekulisation) arrive as MolSanitizeException with RDKit's reason.
    error = e.what();
    return nullptr;
  } catch (...) {
    error = "RDKit raised an unknown exception";
    return nullptr;
  }
  if (!mol) {
    error = smiles.empty() ? "empty SMILES" : "SMILES parse error";
    return nullptr;
  }
  if (options_.explicitHydrogens) RDKit::MolOps::addHs(*mol);
  return mol;
}

bool SmilesFeaturizer::featurize(const std::string& smiles, MoleculeGraph& out, std::string& error) const {
  out.clear();
  std::unique_ptr<RDKit::RWMol> mol = parse(smiles, error);
  if (!mol) return false;
  try {
    featurizeMol(*mol, out);
  } catch (const std::exception& e) {
    error = e.what();
    out.clear();
    return false;
  }
  out.smiles = smiles;
  return true;
}

void SmilesFeaturizer::featurizeMol(const RDKit::ROMol& mol, MoleculeGraph& out) {
  const unsigned n = mol.getNumAtoms();
  out.numNodes = n;
  out.x.resize(static_cast<size_t>(n) * MoleculeGraph::kAtomFeatures);
  const RDKit::RingInfo* rings = mol.getRingInfo();
  int64_t* x = out.x.data();
  for (unsigned i = 0; i < n; ++i, x += MoleculeGraph::kAtomFeatures) {
    const RDKit::Atom* a = mol.getAtomWithIdx(i);
    // ogb/utils/features.py atom_to_feature_vector, in its order.
    x[0] = atomicNumIndex(a->getAtomicNum());
    x[1] = chiralityIndex(a->getChiralTag());
    x[2] = rangeIndex(a->getTotalDegree(), 0, 10);
    x[3] = rangeIndex(a->getFormalCharge(), -5, 5);
    x[4] = rangeIndex(a->getTotalNumHs(), 0, 8);
    x[5] = rangeIndex(a->getNumRadicalElectrons(), 0, 4);
    x[6] = hybridizationIndex(a->getHybridization());
    x[7] = a->getIsAromatic() ? 1 : 0;
    x[8] = rings->numAtomRings(i) != 0 ? 1 : 0;  // Atom.IsInRing()
  }
  const unsigned m = mol.getNumBonds();
  out.src.resize(2 * static_cast<size_t>(m));
  out.dst.resize(2 * static_cast<size_t>(m));
  out.edgeAttr.resize(2 * static_cast<size_t>(m) * MoleculeGraph::kBondFeatures);
  for (unsigned k = 0; k < m; ++k) {
    const RDKit::Bond* b = mol.getBondWithIdx(k);
    const int64_t i = b->getBeginAtomIdx(), j = b->getEndAtomIdx();
    // ogb/utils/mol.py smiles2graph: edge 2k is i->j, edge 2k+1 is j->i, both with the bond's features.
    out.src[2 * k] = i;
    out.dst[2 * k] = j;
    out.src[2 * k + 1] = j;
    out.dst[2 * k + 1] = i;
    int64_t* e = out.edgeAttr.data() + 6 * static_cast<size_t>(k);
    e[0] = bondTypeIndex(b->getBondType());
    e[1] = bondStereoIndex(b->getStereo());
    e[2] = b->getIsConjugated() ? 1 : 0;
    e[3] = e[0];
    e[4] = e[1];
    e[5] = e[2];
  }
}

std::string SmilesFeaturizer::explainFailure(const std::string& smiles) const {
  std::lock_guard<std::mutex> lock(logMutex());
  if (!rdErrorLog) {
    // A C++ program has no RDKit logs until InitLogs (Python's rdkit module calls it on import). Create them
    // once, silenced, so that only this function ever hears from them.
    RDLog::InitLogs();
    boost::logging::disable_logs("rdApp.*");
  }
  std::ostringstream captured;
  std::string error;
  {
    // Point RDKit's error log at our stream for one re-parse (and nowhere else: no echo on stderr).
    RDLogger log = rdErrorLog;
    std::ostream* oldDest = log ? log->dp_dest : nullptr;
    bool oldEnabled = log ? log->df_enabled : false;
    if (log && !log->teestream) {
      log->dp_dest = &captured;
      log->df_enabled = true;
    }
    parse(smiles, error);
    if (log && log->dp_dest == &captured) {
      log->dp_dest = oldDest;
      log->df_enabled = oldEnabled;
    }
  }
  // RDKit prefixes lines with a timestamp ("[12:00:00] SMILES Parse Error: ..."); keep the messages, join
  // them with "; ", and drop the prefix and RDKit's ASCII-art pointer lines.
  std::string out, line;
  std::istringstream in(captured.str());
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[') {
      size_t close = line.find("] ");
      if (close != std::string::npos) line = line.substr(close + 2);
    }
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (line.empty() || line.find_first_not_of(" ^") == std::string::npos) continue;
    bool echo = line.find_first_not_of(' ') != std::string::npos && line.find(':') == std::string::npos &&
                line.find(smiles.substr(0, 20)) != std::string::npos;
    if (echo) continue;  // RDKit reprints the input under the message
    if (!out.empty()) out += "; ";
    out += line;
  }
  return out.empty() ? error : out;
}

RdkitLogSilencer::RdkitLogSilencer() : state_(new RDLog::LogStateSetter()) {}
RdkitLogSilencer::~RdkitLogSilencer() { delete static_cast<RDLog::LogStateSetter*>(state_); }

std::string rdkitVersion() { return RDKit::rdkitVersion; }

}  // namespace gnn
