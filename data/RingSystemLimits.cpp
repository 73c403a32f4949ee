#include "data/RingSystemLimits.h"

#include <GraphMol/GraphMol.h>
#include <GraphMol/MolOps.h>
#include <GraphMol/SmilesParse/SmilesParse.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "data/SmilesBounds.h"

namespace gnn {

namespace {

// Rings sharing a bond are one system: union-find over the rings given by their bonds.
std::vector<size_t> fusedSystems(const std::vector<const std::vector<int>*>& bondRings, unsigned numBonds) {
  const size_t n = bondRings.size();
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<long> ringOfBond(numBonds, -1);
  for (size_t r = 0; r < n; ++r) {
    for (int b : *bondRings[r]) {
      if (ringOfBond[b] >= 0) parent[find(r)] = find(static_cast<size_t>(ringOfBond[b]));
      else ringOfBond[b] = static_cast<long>(r);
    }
  }
  for (size_t r = 0; r < n; ++r) parent[r] = find(r);
  return parent;
}

// An atom that could be part of an aromatic ring: flagged aromatic (lower case in SMILES), a dummy, or on a
// bond that is not single.
bool couldBeAromatic(const RDKit::ROMol& mol, const RDKit::Atom* a) {
  if (a->getIsAromatic() || a->getAtomicNum() == 0) return true;
  for (const RDKit::Bond* b : mol.atomBonds(a)) {
    if (b->getBondType() != RDKit::Bond::SINGLE || b->getIsAromatic()) return true;
  }
  return false;
}

}  // namespace

RingSystemSize largestRingSystems(const RDKit::ROMol& mol) {
  RingSystemSize size;
  if (mol.getNumBonds() < 3) return size;
  // A copy, so the caller's molecule keeps whatever ring information it had.
  RDKit::ROMol copy(mol);
  RDKit::MolOps::findSSSR(copy);
  const RDKit::RingInfo* info = copy.getRingInfo();
  const auto& atomRings = info->atomRings();
  const auto& bondRings = info->bondRings();
  if (atomRings.empty()) return size;

  // Dummy atoms per system of all rings, each atom counted once per system (a spiro atom in both: each
  // system is kekulised on its own).
  {
    std::vector<const std::vector<int>*> rings;
    for (const auto& r : bondRings) rings.push_back(&r);
    const std::vector<size_t> system = fusedSystems(rings, copy.getNumBonds());
    std::vector<std::pair<size_t, int>> dummyInSystem;
    for (size_t r = 0; r < atomRings.size(); ++r) {
      for (int a : atomRings[r]) {
        if (copy.getAtomWithIdx(static_cast<unsigned>(a))->getAtomicNum() == 0) dummyInSystem.emplace_back(system[r], a);
      }
    }
    std::sort(dummyInSystem.begin(), dummyInSystem.end());
    dummyInSystem.erase(std::unique(dummyInSystem.begin(), dummyInSystem.end()), dummyInSystem.end());
    std::vector<int> dummies(atomRings.size(), 0);
    for (const auto& entry : dummyInSystem) size.dummies = std::max(size.dummies, ++dummies[entry.first]);
  }
  // Rings per system of rings that could be aromatic.
  {
    std::vector<const std::vector<int>*> rings;
    for (size_t r = 0; r < atomRings.size(); ++r) {
      const bool candidate = std::all_of(atomRings[r].begin(), atomRings[r].end(), [&](int a) {
        return couldBeAromatic(copy, copy.getAtomWithIdx(static_cast<unsigned>(a)));
      });
      if (candidate) rings.push_back(&bondRings[r]);
    }
    const std::vector<size_t> system = fusedSystems(rings, copy.getNumBonds());
    std::vector<int> count(rings.size(), 0);
    for (size_t s : system) size.rings = std::max(size.rings, ++count[s]);
  }
  return size;
}

std::string RingSystemLimits::check(const RDKit::ROMol& mol) const {
  if (maxDummies <= 0 && maxRings <= 0) return "";
  const RingSystemSize size = largestRingSystems(mol);
  if (maxDummies > 0 && size.dummies > maxDummies) {
    return std::to_string(size.dummies) + " dummy atoms ('*') in one fused ring system, more than --max-ring-dummies " +
           std::to_string(maxDummies) + " (RDKit's kekulisation time doubles with each)";
  }
  if (maxRings > 0 && size.rings > maxRings) {
    return std::to_string(size.rings) + " rings in one fused unsaturated ring system, more than --max-fused-rings " +
           std::to_string(maxRings) + " (RDKit's aromaticity perception time grows steeply with them)";
  }
  return "";
}

std::string RingSystemLimits::check(const std::string& smiles) const {
  const bool mayHaveDummy = smiles.find('*') != std::string::npos || smiles.find("#0") != std::string::npos;
  const bool mayHaveManyRings = maxRings > 0 && smilesRingClosureBound(smiles) > maxRings;
  if (!(maxDummies > 0 && mayHaveDummy) && !mayHaveManyRings) return "";
  const std::unique_ptr<RDKit::RWMol> mol = parseUnsanitized(smiles);
  return mol ? check(*mol) : "";
}

}  // namespace gnn
