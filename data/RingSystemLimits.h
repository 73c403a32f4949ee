// RingSystemLimits: the size of a molecule's largest fused ring systems, read before RDKit sanitises it, so that
// a SMILES or mol block whose sanitisation would take RDKit seconds to minutes is refused in microseconds
// instead of stalling a build. Two measures, each bounding one of RDKit's super-linear steps (RDKit 2022.09,
// times of MolFromSmiles on this machine):
//
// - dummy atoms ('*', [#0]) in one fused ring system: when the first kekulé assignment of a system fails,
//   RDKit's Kekulize.cpp tries again with every subset of the system's dummy atoms switched off as double-bond
//   candidates, 2^q attempts. On one 30-atom system the time to reject it doubles with each dummy: 19 dummies
//   0.19 s, 21 dummies 0.82 s, 24 dummies 6.9 s, 28 dummies 127 s.
// - rings in one fused system of rings that could be aromatic (every atom aromatic, a dummy or on a multiple
//   bond): aromaticity perception checks combinations of a system's rings. Linear acenes: 25 rings 0.05 s,
//   30 rings 0.16 s, 35 rings 0.48 s, 40 rings 1.1 s, 50 rings 5.4 s, 60 rings 25 s (2D sheets of 55 rings,
//   and C60, take 3 ms). Real molecules stay far below: the largest such system in MoleculeNet's BBBP, HIV,
//   Lipophilicity, SAMPL, ESOL and the shipped PCQM4Mv2-format molecules has 14 rings.
//
// Rings are RDKit's SSSR; two rings are fused when they share a bond, as in RDKit's kekulisation.
#pragma once
#include <string>

namespace RDKit {
class ROMol;
}

namespace gnn {

struct RingSystemLimits {
  /// Default limits: 2^12 kekulisation attempts at most (about 4 ms for the system above; attachment points of
  /// fragments and polymers are usually chain atoms, which do not count), and 36 rings, which admits C60 (31
  /// SSSR rings) and C70 (36) and bounds an acene at about 0.6 s.
  static constexpr int kDefaultMaxDummies = 12;
  static constexpr int kDefaultMaxRings = 36;

  /// 0: no limit.
  int maxDummies = kDefaultMaxDummies;
  int maxRings = kDefaultMaxRings;

  /// Why `mol` (sanitised or not) is over a limit, or "" when it is within them.
  std::string check(const RDKit::ROMol& mol) const;

  /// The same for a SMILES. Most SMILES are decided by one scan of the text (no dummy atom and fewer ring
  /// closures than maxRings); the others are parsed without sanitising. A SMILES even that parse refuses is
  /// left to the real parse, which says why.
  std::string check(const std::string& smiles) const;
};

/// The largest fused ring systems of `mol`: most dummy atoms in one system, most rings in one system of
/// rings that could be aromatic.
struct RingSystemSize {
  int dummies = 0;
  int rings = 0;
};
RingSystemSize largestRingSystems(const RDKit::ROMol& mol);

}  // namespace gnn
