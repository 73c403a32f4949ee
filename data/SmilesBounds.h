// SmilesBounds: sizes of a molecule read from its SMILES text, before RDKit sanitises it, so that a molecule over
// a build's limits is refused in about a millisecond instead of after RDKit's sanitisation (whose time grows
// steeply with the atoms: a 999-carbon chain takes 0.6 s to sanitise, 0.5 ms to parse without sanitising and
// 2 microseconds to scan).
//
//   if (smilesHeavyAtoms(s) > maxAtoms) reject(s);
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace RDKit {
class RWMol;
}  // namespace RDKit

namespace gnn {

/// The heavy atoms (atomic number > 1) of a SMILES, from one scan of its text: each organic-subset atom (B C N O P
/// S F Cl Br I, aromatic b c n o p s) and each bracket atom that is not a hydrogen ([H], [2H+], [#1]) or a dummy
/// ([*], [#0]). Exact for a valid SMILES (every atom of one is a token); a bound on nothing for an invalid one.
int64_t smilesHeavyAtoms(const std::string& smiles);

/// Ring closures a SMILES can hold: digits and %nn outside brackets, two per ring. Every ring of a SMILES is made
/// by a closure, so no ring system of the molecule has more rings than this.
int64_t smilesRingClosureBound(const std::string& smiles);

/// The SMILES parsed without sanitising or removing hydrogens (linear in its length; the cheap read the bounds
/// are checked on), or null when even that parse refuses it.
std::unique_ptr<RDKit::RWMol> parseUnsanitized(const std::string& smiles);

/// Heavy atoms of the SMILES parsed without sanitising (linear in its length), as RDKit counts them; -1 when
/// even that parse refuses it. The reference smilesHeavyAtoms() is tested against.
int64_t unsanitizedHeavyAtoms(const std::string& smiles);

}  // namespace gnn
