#include "data/SmilesBounds.h"

#include <GraphMol/GraphMol.h>
#include <GraphMol/SmilesParse/SmilesParse.h>

#include <memory>

namespace gnn {

int64_t smilesAtomTokens(const std::string& s) {
  int64_t atoms = 0;
  bool inBracket = false;
  for (const char c : s) {
    if (inBracket) {
      inBracket = c != ']';
      continue;
    }
    switch (c) {
      case '[':  // a bracket atom, whatever it holds
        inBracket = true;
        ++atoms;
        break;
      // The organic subset (OpenSMILES): "Cl" and "Br" count at their first letter.
      case 'B': case 'C': case 'N': case 'O': case 'P': case 'S': case 'F': case 'I':
      case 'b': case 'c': case 'n': case 'o': case 'p': case 's':
      case '*':
        ++atoms;
        break;
      default:
        break;
    }
  }
  return atoms;
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

int64_t unsanitizedHeavyAtoms(const std::string& smiles) {
  RDKit::SmilesParserParams params;
  params.sanitize = false;
  params.removeHs = false;
  std::unique_ptr<RDKit::RWMol> mol;
  try {
    mol.reset(RDKit::SmilesToMol(smiles, params));
  } catch (...) {
    return -1;
  }
  // ROMol::getNumHeavyAtoms counts atomic number > 1, on this molecule as on the sanitised one (removing Hs
  // removes only hydrogens).
  return mol ? static_cast<int64_t>(mol->getNumHeavyAtoms()) : -1;
}

}  // namespace gnn
