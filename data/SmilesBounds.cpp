#include "data/SmilesBounds.h"

#include <GraphMol/GraphMol.h>
#include <GraphMol/SmilesParse/SmilesParse.h>

#include <memory>

namespace gnn {

namespace {

// Whether the bracket atom whose text starts at `s[i]` (just after '[') is heavy: its symbol after an optional
// isotope, or its atomic number after '#' (OpenSMILES). Hydrogen is 'H' not followed by the lower-case letter
// of He, Hf, Hg, Ho or Hs; '*' is a dummy.
bool bracketAtomIsHeavy(const std::string& s, size_t i) {
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;  // isotope
  if (i >= s.size()) return false;
  if (s[i] == '#') {
    int z = 0;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9' && z < 1000; ++i) z = z * 10 + (s[i] - '0');
    return z > 1;
  }
  if (s[i] == '*') return false;
  if (s[i] == 'H') {
    const char next = i + 1 < s.size() ? s[i + 1] : ']';
    return next == 'e' || next == 'f' || next == 'g' || next == 'o' || next == 's';
  }
  return (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z');
}

}  // namespace

int64_t smilesHeavyAtoms(const std::string& s) {
  int64_t heavy = 0;
  bool inBracket = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (inBracket) {
      inBracket = c != ']';
      continue;
    }
    switch (c) {
      case '[':
        inBracket = true;
        if (bracketAtomIsHeavy(s, i + 1)) ++heavy;
        break;
      // The organic subset (OpenSMILES): "Cl" and "Br" count at their first letter; '*' is not heavy.
      case 'B': case 'C': case 'N': case 'O': case 'P': case 'S': case 'F': case 'I':
      case 'b': case 'c': case 'n': case 'o': case 'p': case 's':
        ++heavy;
        break;
      default:
        break;
    }
  }
  return heavy;
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
