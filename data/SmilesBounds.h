// SmilesBounds: sizes of a molecule read from its SMILES text, before RDKit sanitises it, so that a molecule over
// a build's limits is refused in about a millisecond instead of after RDKit's sanitisation (whose time grows
// steeply with the atoms: a 999-carbon chain takes 0.6 s to sanitise, 0.5 ms to parse without sanitising and
// 2 microseconds to scan).
//
// The step that grows is RDKit's stereochemistry perception after sanitising (MolOps::assignStereochemistry,
// which MolFromSmiles runs): it ranks every atom left after hydrogens are removed, dummy atoms ('*') as much as
// carbons, and its time grows about with the cube of them (RDKit 2022.09 on this machine: a 500-atom chain 78 ms,
// 1,000 atoms 0.85 s, 2,000 atoms 8.6 s; a chain of 1,000 '*' 0.76 s). Hydrogens written as atoms are removed
// first unless they are isotopes, charged or alone, and cost the same per atom when they stay (500 carbons and
// 1,875 lone [H] 0.57 s). So the bound is on atoms, not characters: at most --max-atoms heavy and dummy atoms,
// and at most twice that many atoms of any kind.
//
//   if (std::string why = atomBoundsError(smilesAtomCounts(s), maxAtoms); !why.empty()) reject(s, why);
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace RDKit {
class ROMol;
class RWMol;
}  // namespace RDKit

namespace gnn {

/// The heavy atoms (atomic number > 1) of a SMILES, from one scan of its text: each organic-subset atom (B C N O P
/// S F Cl Br I, aromatic b c n o p s) and each bracket atom that is not a hydrogen ([H], [2H+], [#1]) or a dummy
/// ([*], [#0]). Exact for a valid SMILES (every atom of one is a token); a bound on nothing for an invalid one.
int64_t smilesHeavyAtoms(const std::string& smiles);

/// The atoms a SMILES writes, by kind.
struct AtomCounts {
  int64_t heavy = 0;      // atomic number > 1
  int64_t hydrogens = 0;  // atoms of atomic number 1 ([H], [2H+], [#1]; not the H counts inside [CH3])
  int64_t dummies = 0;    // '*', [*], [#0]
  int64_t total() const { return heavy + hydrogens + dummies; }
};
/// One scan of the text, as smilesHeavyAtoms (whose heavy count it holds): exact for a valid SMILES.
AtomCounts smilesAtomCounts(const std::string& smiles);
/// The same for a molecule read without sanitising (a mol block).
AtomCounts molAtomCounts(const RDKit::ROMol& mol);

/// Why a molecule of these atoms is over --max-atoms `maxAtoms` (0: no limit), or "" when it is within: more than
/// maxAtoms heavy and dummy atoms together, or more than 2 maxAtoms atoms in all (written hydrogens included).
/// "600 heavy atoms, more than --max-atoms 500" names what went over.
std::string atomBoundsError(const AtomCounts& counts, int64_t maxAtoms);

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
