// SmilesBounds: sizes of a molecule read from its SMILES text, before RDKit sanitises it, so that a molecule over
// a build's limits is refused in about a millisecond instead of after RDKit's sanitisation (whose time grows
// steeply with the atoms: a 999-carbon chain takes 0.6 s to sanitise, 0.5 ms to parse without sanitising).
//
//   if (smilesAtomTokens(s) > maxAtoms && unsanitizedHeavyAtoms(s) > maxAtoms) reject(s);
#pragma once
#include <cstdint>
#include <string>

namespace gnn {

/// The atoms a SMILES can hold, from one scan of its text: each bracket atom, each organic-subset atom (B C N O P S
/// F Cl Br I, aromatic b c n o p s) and each '*'. An upper bound on the atoms RDKit builds from it (and so on the
/// heavy atoms); exact for a valid SMILES.
int64_t smilesAtomTokens(const std::string& smiles);

/// Ring closures a SMILES can hold: digits and %nn outside brackets, two per ring. Every ring of a SMILES is made
/// by a closure, so no ring system of the molecule has more rings than this.
int64_t smilesRingClosureBound(const std::string& smiles);

/// Heavy atoms (atomic number > 1) of the SMILES parsed without sanitising (linear in its length), the count
/// RDKit's sanitised molecule would give; -1 when even that parse refuses it (the real parse then says why).
int64_t unsanitizedHeavyAtoms(const std::string& smiles);

}  // namespace gnn
