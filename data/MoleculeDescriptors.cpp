#include "data/MoleculeDescriptors.h"

// RDConfig.h first: BCUT.h declares BCUT2D only when RDK_HAS_EIGEN3 is defined.
#include <RDGeneral/RDConfig.h>

#include <GraphMol/Descriptors/BCUT.h>
#include <GraphMol/Descriptors/MQN.h>
#include <GraphMol/Descriptors/MolSurf.h>
#include <GraphMol/Descriptors/Property.h>
#include <GraphMol/Fingerprints/MorganGenerator.h>
#include <GraphMol/GraphMol.h>
#include <omp.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <iterator>
#include <stdexcept>

#include "data/SmilesFeaturizer.h"

namespace gnn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Bins of RDKit's VSA descriptors (MolSurf.cpp): 12 SlogP, 10 SMR and 14 PEOE ranges.
constexpr int kSlogPBins = 12, kSmrBins = 10, kPeoeBins = 14, kMqns = 42;
const char* const kBcutNames[] = {"BCUT2D_MWHI",   "BCUT2D_MWLOW",   "BCUT2D_CHGHI", "BCUT2D_CHGLO",
                                  "BCUT2D_LOGPHI", "BCUT2D_LOGPLOW", "BCUT2D_MRHI",  "BCUT2D_MRLOW"};
constexpr int kBcuts = static_cast<int>(std::size(kBcutNames));

// RDKit's registry of descriptors, built on first use: made once here, before any parallel loop reads it.
const RDKit::Descriptors::Properties& registeredProperties() {
  static const RDKit::Descriptors::Properties properties;
  return properties;
}

std::vector<std::string> rdkit2dNames() {
  std::vector<std::string> n = registeredProperties().getPropertyNames();
  auto family = [&](const std::string& prefix, int count) {
    for (int i = 1; i <= count; ++i) n.push_back(prefix + std::to_string(i));
  };
  family("SlogP_VSA", kSlogPBins);
  family("SMR_VSA", kSmrBins);
  family("PEOE_VSA", kPeoeBins);
  family("MQN", kMqns);
  n.insert(n.end(), std::begin(kBcutNames), std::end(kBcutNames));
  return n;
}

// Copies `values` into row[at, at + count) (NaN where fewer came), and returns at + count.
template <class V>
size_t place(const V& values, double* row, size_t at, size_t count) {
  for (size_t i = 0; i < count; ++i) row[at + i] = i < values.size() ? static_cast<double>(values[i]) : kNaN;
  return at + count;
}

// A family of descriptors RDKit may refuse for a molecule (BCUT2D: an element without Gasteiger parameters):
// its columns are NaN then.
template <class F>
size_t family(F compute, double* row, size_t at, size_t count) {
  try {
    return place(compute(), row, at, count);
  } catch (...) {
    std::fill(row + at, row + at + count, kNaN);
    return at + count;
  }
}

void rdkit2d(const RDKit::ROMol& mol, double* row, size_t width) {
  namespace D = RDKit::Descriptors;
  const size_t props = registeredProperties().getPropertyNames().size();
  size_t at = family([&] { return registeredProperties().computeProperties(mol); }, row, 0, props);
  at = family([&] { return D::calcSlogP_VSA(mol); }, row, at, kSlogPBins);
  at = family([&] { return D::calcSMR_VSA(mol); }, row, at, kSmrBins);
  at = family([&] { return D::calcPEOE_VSA(mol); }, row, at, kPeoeBins);
  at = family([&] { return D::calcMQNs(mol); }, row, at, kMqns);
  // BCUT2D of a molecule without atoms (the SMILES "") fails an Eigen assertion inside RDKit (Debian's build
  // keeps them: the process aborts, Python's too): NaN without asking.
  if (mol.getNumAtoms() > 0)
    at = family([&] { return D::BCUT2D(mol); }, row, at, kBcuts);
  else
    at = place(std::vector<double>(), row, at, kBcuts);
  std::fill(row + std::min(at, width), row + width, kNaN);  // the names and the families agree: nothing is left
}

void morgan(const RDKit::ROMol& mol, double* row, bool counts) {
  // Chemprop v2's MorganBinaryFeaturizer / MorganCountFeaturizer: radius 2, 2048 bits, no chirality, bond
  // types used (the generator's defaults, the same bits as GetMorganFingerprintAsBitVect).
  using Generator = RDKit::FingerprintGenerator<std::uint32_t>;
  std::unique_ptr<Generator> gen(RDKit::MorganFingerprint::getMorganGenerator<std::uint32_t>(
      MoleculeDescriptors::kMorganRadius, /*countSimulation=*/false, /*includeChirality=*/false,
      /*useBondTypes=*/true, /*onlyNonzeroInvariants=*/false, nullptr, nullptr, MoleculeDescriptors::kMorganBits));
  std::fill(row, row + MoleculeDescriptors::kMorganBits, 0.0);
  if (counts) {
    std::unique_ptr<RDKit::SparseIntVect<std::uint32_t>> fp(gen->getCountFingerprint(mol));
    for (const auto& [bit, count] : fp->getNonzeroElements()) row[bit] = static_cast<double>(count);
  } else {
    std::unique_ptr<ExplicitBitVect> fp(gen->getFingerprint(mol));
    std::vector<int> on;
    fp->getOnBits(on);
    for (int bit : on) row[bit] = 1.0;
  }
}

}  // namespace

const std::vector<std::string>& MoleculeDescriptors::kinds() {
  static const std::vector<std::string> k = {"morgan", "morgan-count", "rdkit2d"};
  return k;
}

MoleculeDescriptors::MoleculeDescriptors(const std::string& kind) : kind_(kind) {
  if (kind == "rdkit2d") {
    names_ = rdkit2dNames();
  } else if (kind == "morgan" || kind == "morgan-count") {
    for (int i = 0; i < kMorganBits; ++i) names_.push_back("morgan_" + std::to_string(i));
  } else {
    throw std::invalid_argument("molecule descriptors '" + kind + "': expected morgan, morgan-count or rdkit2d");
  }
}

int64_t MoleculeDescriptors::column(const std::string& name) const {
  auto it = std::find(names_.begin(), names_.end(), name);
  return it == names_.end() ? -1 : static_cast<int64_t>(it - names_.begin());
}

void MoleculeDescriptors::compute(const RDKit::ROMol& mol, double* row) const {
  if (kind_ == "rdkit2d")
    rdkit2d(mol, row, names_.size());
  else
    morgan(mol, row, kind_ == "morgan-count");
}

bool MoleculeDescriptors::computeSmiles(const std::string& smiles, double* row) const {
  std::string error;
  std::unique_ptr<RDKit::RWMol> mol = SmilesFeaturizer().parse(smiles, error);
  if (mol) {
    try {
      compute(*mol, row);
      return true;
    } catch (...) {
      // A molecule RDKit cannot describe at all: a row of NaN, like one that does not parse.
    }
  }
  std::fill(row, row + width(), kNaN);
  return false;
}

std::vector<double> MoleculeDescriptors::computeAll(const std::vector<std::string>& smiles, int threads,
                                                    std::vector<int64_t>* failed) const {
  const auto n = static_cast<int64_t>(smiles.size());
  const size_t w = names_.size();
  std::vector<double> out(static_cast<size_t>(n) * w);
  std::vector<uint8_t> ok(static_cast<size_t>(n), 0);
  registeredProperties();  // the registry, before the threads read it
  RdkitLogSilencer quiet;  // Gasteiger's "no parameters for Na" and the like: the NaN says it
#pragma omp parallel for num_threads(std::max(threads, 1)) schedule(dynamic, 16)
  for (int64_t i = 0; i < n; ++i)
    ok[static_cast<size_t>(i)] = computeSmiles(smiles[static_cast<size_t>(i)], out.data() + static_cast<size_t>(i) * w);
  if (failed)
    for (int64_t i = 0; i < n; ++i)
      if (!ok[static_cast<size_t>(i)]) failed->push_back(i);
  return out;
}

}  // namespace gnn
