#include "data/SmilesBounds.h"

#include <GraphMol/GraphMol.h>
#include <GraphMol/SmilesParse/SmilesParse.h>

#include <memory>

namespace gnn {

namespace {

enum class AtomKind { Heavy, Hydrogen, Dummy, None };

// The kind of the bracket atom whose text starts at `s[i]` (just after '['): its symbol after an optional isotope,
// or its atomic number after '#' (OpenSMILES). Hydrogen is 'H' not followed by the lower-case letter of He, Hf,
// Hg, Ho or Hs; '*' is a dummy.
AtomKind bracketAtomKind(const std::string& s, size_t i) {
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;  // isotope
  if (i >= s.size()) return AtomKind::None;
  if (s[i] == '#') {
    int z = 0;
    bool digits = false;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9' && z < 1000; ++i, digits = true) z = z * 10 + (s[i] - '0');
    if (!digits) return AtomKind::None;
    return z > 1 ? AtomKind::Heavy : z == 1 ? AtomKind::Hydrogen : AtomKind::Dummy;
  }
  if (s[i] == '*') return AtomKind::Dummy;
  if (s[i] == 'H') {
    const char next = i + 1 < s.size() ? s[i + 1] : ']';
    const bool heavy = next == 'e' || next == 'f' || next == 'g' || next == 'o' || next == 's';
    return heavy ? AtomKind::Heavy : AtomKind::Hydrogen;
  }
  return (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ? AtomKind::Heavy : AtomKind::None;
}

}  // namespace

AtomCounts smilesAtomCounts(const std::string& s) {
  AtomCounts c;
  bool inBracket = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (inBracket) {
      inBracket = ch != ']';
      continue;
    }
    switch (ch) {
      case '[':
        inBracket = true;
        switch (bracketAtomKind(s, i + 1)) {
          case AtomKind::Heavy: ++c.heavy; break;
          case AtomKind::Hydrogen: ++c.hydrogens; break;
          case AtomKind::Dummy: ++c.dummies; break;
          case AtomKind::None: break;
        }
        break;
      // The organic subset (OpenSMILES): "Cl" and "Br" count at their first letter.
      case 'B': case 'C': case 'N': case 'O': case 'P': case 'S': case 'F': case 'I':
      case 'b': case 'c': case 'n': case 'o': case 'p': case 's':
        ++c.heavy;
        break;
      case '*':
        ++c.dummies;
        break;
      default:
        break;
    }
  }
  return c;
}

int64_t smilesHeavyAtoms(const std::string& s) { return smilesAtomCounts(s).heavy; }

AtomCounts molAtomCounts(const RDKit::ROMol& mol) {
  AtomCounts c;
  for (const RDKit::Atom* a : mol.atoms()) {
    const int z = a->getAtomicNum();
    ++(z > 1 ? c.heavy : z == 1 ? c.hydrogens : c.dummies);
  }
  return c;
}

std::string atomBoundsError(const AtomCounts& c, int64_t maxAtoms) {
  if (maxAtoms <= 0) return "";
  const std::string limit = "--max-atoms " + std::to_string(maxAtoms);
  if (c.heavy + c.dummies > maxAtoms) {
    if (c.dummies == 0) return std::to_string(c.heavy) + " heavy atoms, more than " + limit;
    return std::to_string(c.heavy) + " heavy and " + std::to_string(c.dummies) + " dummy ('*') atoms, more than " +
           limit + " (dummies count as heavy atoms)";
  }
  if (c.total() > 2 * maxAtoms)
    return std::to_string(c.total()) + " atoms (" + std::to_string(c.hydrogens) +
           " of them written hydrogens), more than twice " + limit;
  return "";
}

int64_t smilesRingClosureBound(const std::string& s) {
  int64_t ends = 0;
  bool inBracket = false;
  for (const char c : s) {
    if (c == '[') inBracket = true;
    else if (c == ']') inBracket = false;
    else if (!inBracket && (c == '%' || (c >= '0' && c <= '9'))) ++ends;  // %nn counted at '%' and its digits: an over-count is harmless
  }
  return ends / 2;
}

std::unique_ptr<RDKit::RWMol> parseUnsanitized(const std::string& smiles) {
  RDKit::SmilesParserParams params;
  params.sanitize = false;
  params.removeHs = false;
  try {
    return std::unique_ptr<RDKit::RWMol>(RDKit::SmilesToMol(smiles, params));
  } catch (...) {
    return nullptr;
  }
}

int64_t unsanitizedHeavyAtoms(const std::string& smiles) {
  const std::unique_ptr<RDKit::RWMol> mol = parseUnsanitized(smiles);
  // ROMol::getNumHeavyAtoms counts atomic number > 1, on this molecule as on the sanitised one (removing Hs
  // removes only hydrogens).
  return mol ? static_cast<int64_t>(mol->getNumHeavyAtoms()) : -1;
}

}  // namespace gnn
