// The default bounds on work per molecule against real molecules and hostile lines: every molecule of the
// shipped MoleculeNet sets that RDKit parses is accepted with default options, and so are the largest
// molecules of MoleculeNet's SIDER (peptides of 1,001-1,340 characters and up to 492 heavy atoms, which the
// earlier default of 1,000 characters refused); the inputs that stall RDKit are still refused from their
// text, in microseconds.
#include <GraphMol/GraphMol.h>
#include <GraphMol/SmilesParse/SmilesParse.h>
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "data/MoleculeDatasetBuilder.h"
#include "data/MoleculeSource.h"
#include "data/SmilesBounds.h"
#include "data/SmilesFeaturizer.h"

namespace gnn {
namespace {

// Whether RDKit itself (MolFromSmiles: sanitised, hydrogens removed, no bound of ours) reads the SMILES.
bool rdkitParses(const std::string& smiles) {
  try {
    return std::unique_ptr<RDKit::RWMol>(RDKit::SmilesToMol(smiles)) != nullptr;
  } catch (...) {
    return false;
  }
}

// Builds the file with default options and checks every molecule it rejected against RDKit: a bound of ours
// must never be why a molecule RDKit reads is lost. Returns the molecules accepted.
int64_t acceptedWithDefaults(const std::string& file, const std::string& target) {
  BuildOptions o;
  o.source.path = std::string(GNN_SOURCE_DIR) + "/examples/data/moleculenet/" + file;
  o.source.targetColumns = {target};
  o.threads = 2;
  const BuildSummary s = MoleculeDatasetBuilder(o).run();
  std::map<int64_t, std::string> byLine;  // the rejected lines' SMILES as read (a report may shorten them)
  {
    std::unique_ptr<MoleculeSource> src = openMoleculeSource(o.source);
    MoleculeRecord r;
    while (src->next(r)) byLine[r.line] = r.smiles;
  }
  for (const RejectedMolecule& m : s.rejectedMolecules)
    EXPECT_FALSE(rdkitParses(byLine.at(m.line)))
        << file << " line " << m.line << " was refused (" << m.reason << ") but RDKit reads it";
  std::cout << file << ": " << s.accepted << " accepted, " << s.rejected
            << " rejected (RDKit refuses them too)\n";
  return s.accepted;
}

TEST(DefaultBounds, EveryShippedMoleculeRdkitParsesIsAccepted) {
  RdkitLogSilencer quiet;
  // Rows of each file; BBBP's 11 are the SMILES RDKit 2022.09 refuses (valence errors;
  // examples/data/README.md).
  EXPECT_EQ(acceptedWithDefaults("BBBP.csv.gz", "p_np"), 2050 - 11);
  EXPECT_EQ(acceptedWithDefaults("HIV.csv.gz", "HIV_active"), 41127);
  EXPECT_EQ(acceptedWithDefaults("Lipophilicity.csv.gz", "exp"), 4200);
  EXPECT_EQ(acceptedWithDefaults("SAMPL.csv.gz", "expt"), 642);
  EXPECT_EQ(acceptedWithDefaults("delaney-processed.csv.gz", "measured log solubility in mols per litre"),
            1128);
}

// MoleculeNet's SIDER (chemprop/chemprop data/sider.csv): the shortest SMILES over 1,000 characters (1,001,
// 405 heavy atoms), the molecule with the most heavy atoms of any MoleculeNet or OGB set (492 in 1,179
// characters) and the longest SMILES (1,340 characters, an oligonucleotide of 476 heavy atoms).
const char* const kLargeSider[] = {
    "CC[C@H](C)[C@@H](C(=O)N[C@@H](C(C)C)C(=O)N[C@@H](CCC(=O)O)C(=O)N[C@@H](CCC(=O)N)C(=O)N[C@@H](CS)C(=O"
    ")N[C@@H](CS)C(=O)N[C@@H]([C@@H](C)O)C(=O)N[C@@H](CO)C(=O)N[C@@H]([C@@H](C)CC)C(=O)N[C@@H](CS)C(=O)N["
    "C@@H](CO)C(=O)N[C@@H](CC(C)C)C(=O)N[C@@H](CC1=CC=C(C=C1)O)C(=O)N[C@@H](CCC(=O)N)C(=O)N[C@@H](CC(C)C)"
    "C(=O)N[C@@H](CCC(=O)O)C(=O)N[C@@H](CC(=O)N)C(=O)N[C@@H](CC2=CC=C(C=C2)O)C(=O)N[C@@H](CS)C(=O)N[C@@H]"
    "(CC(=O)N)C(=O)O)NC(=O)CN.C[C@H]([C@@H](C(=O)N[C@@H](CCCCN)C(=O)N1CCC[C@H]1C(=O)N[C@@H]([C@@H](C)O)C("
    "=O)O)NC(=O)[C@H](CC2=CC=C(C=C2)O)NC(=O)[C@H](CC3=CC=CC=C3)NC(=O)[C@H](CC4=CC=CC=C4)NC(=O)CNC(=O)[C@H"
    "](CCCNC(=N)N)NC(=O)[C@H](CCC(=O)O)NC(=O)CNC(=O)[C@H](CS)NC(=O)[C@H](C(C)C)NC(=O)[C@H](CC(C)C)NC(=O)["
    "C@H](CC5=CC=C(C=C5)O)NC(=O)[C@H](CC(C)C)NC(=O)[C@H](C)NC(=O)[C@H](CCC(=O)O)NC(=O)[C@H](C(C)C)NC(=O)["
    "C@H](CC(C)C)NC(=O)[C@H](CC6=CN=CN6)NC(=O)[C@H](CO)NC(=O)CNC(=O)[C@H](CS)NC(=O)[C@H](CC(C)C)NC(=O)[C@"
    "H](CC7=CN=CN7)NC(=O)[C@H](CCC(=O)N)NC(=O)[C@H](CC(=O)N)NC(=O)[C@H](C(C)C)NC(=O)[C@H](CC8=CC=CC=C8)N)"
    "O",
    "CC[C@H](C)[C@@H](C(=O)N[C@@H](CC1=CC=C(C=C1)O)C(=O)NCC(=O)NCC(=O)N[C@@H](CS)C(=O)N[C@@H](CCC(=O)O)C("
    "=O)NCC(=O)N[C@@H](CC(=O)N)C(=O)N[C@@H](CCC(=O)N)C(=O)N[C@@H](CC(=O)N)C(=O)N[C@@H](CCCNC(=N)N)C(=O)N["
    "C@@H](CC2=CC=CC=C2)C(=O)N[C@@H](CCC(=O)O)C(=O)N[C@@H](CO)C(=O)N[C@@H](CC(C)C)C(=O)N[C@@H](CCC(=O)O)C"
    "(=O)N[C@@H](CCC(=O)O)C(=O)N[C@@H](CS)C(=O)N[C@@H](CCCCN)C(=O)N[C@@H](CCCCN)C(=O)N[C@@H](CCSC)C(=O)N["
    "C@@H](CS)C(=O)N[C@@H]([C@@H](C)O)C(=O)N[C@@H](CCCNC(=N)N)C(=O)N[C@@H](CC(=O)O)C(=O)O)NC(=O)[C@H](CC3"
    "=CC=CC=C3)NC(=O)[C@H](CCC(=O)O)NC(=O)[C@H](CCC(=O)O)NC(=O)[C@H](CS)NC(=O)[C@H](CCC(=O)N)NC(=O)[C@H]("
    "CCCNC(=N)N)NC(=O)[C@H]([C@@H](C)O)NC(=O)[C@H](CC4=CC=CC=C4)NC(=O)[C@H]([C@@H](C)CC)NC(=O)[C@H](CC(=O"
    ")N)NC(=O)[C@H](CC5=CC=CC=C5)NC(=O)[C@H](CC6=CC=CC=C6)NC(=O)[C@H](CC7=CNC8=CC=CC=C87)NC(=O)[C@H](CCCN"
    "C(=N)N)NC(=O)[C@@H]9CCCN9C(=O)[C@H](CC1=CN=CN1)NC(=O)[C@H](C)NC(=O)[C@H](C)NC(=O)[C@H](CCCNC(=N)N)NC"
    "(=O)[C@H](CS)NC(=O)[C@@H]1CCCN1C(=O)CNC(=O)[C@H](CC(=O)O)NC(=O)[C@H](CC(=O)O)NC(=O)[C@H](C)NC(=O)[C@"
    "H](CCCCN)NC(=O)[C@H](CC1=CC=CC=C1)NC(=O)[C@H](C)NC(=O)[C@H](CS)NC(=O)[C@H](CC1=CC=CC=C1)NC(=O)[C@H]("
    "CO)NC(=O)[C@H](CC1=CN=CN1)NC(=O)[C@H](CCSC)NC(=O)[C@H](C)NC(=O)[C@H](CCC(=O)O)N",
    "CC1=CN(C(=O)NC1=O)[C@H]2C[C@@H]([C@H](O2)COP(=O)([O-])S[C@H]3C[C@@H](O[C@@H]3COP(=O)([O-])S[C@H]4C[C"
    "@@H](O[C@@H]4COP(=O)([O-])S[C@H]5C[C@@H](O[C@@H]5COP(=O)([O-])S[C@H]6C[C@@H](O[C@@H]6COP(=O)([O-])S["
    "C@H]7C[C@@H](O[C@@H]7COP(=O)([O-])S[C@H]8C[C@@H](O[C@@H]8COP(=O)([O-])S[C@H]9C[C@@H](O[C@@H]9COP(=O)"
    "([O-])S[C@@H]1[C@H](O[C@H]([C@@H]1OCCOC)N1C=C(C(=NC1=O)N)C)COP(=O)([O-])S[C@@H]1[C@H](O[C@H]([C@@H]1"
    "OCCOC)N1C=C(C(=O)NC1=O)C)COP(=O)([O-])S[C@@H]1[C@H](O[C@H]([C@@H]1OCCOC)N1C=C(C(=NC1=O)N)C)COP(=O)(["
    "O-])S[C@@H]1[C@H](O[C@H]([C@@H]1OCCOC)N1C=C(C(=NC1=O)N)C)COP(=O)([O-])S[C@@H]1[C@H](O[C@H]([C@@H]1OC"
    "COC)N1C=NC2=C1N=C(NC2=O)N)CO)N1C=NC2=C1N=CN=C2N)N1C=NC2=C1N=C(NC2=O)N)N1C=C(C(=O)NC1=O)C)N1C=C(C(=NC"
    "1=O)N)C)N1C=C(C(=O)NC1=O)C)N1C=NC2=C1N=C(NC2=O)N)N1C=C(C(=NC1=O)N)C)SP(=O)([O-])OC[C@@H]1[C@H](C[C@@"
    "H](O1)N1C=C(C(=O)NC1=O)C)SP(=O)([O-])OC[C@@H]1[C@H](C[C@@H](O1)N1C=C(C(=NC1=O)N)C)SP(=O)([O-])OC[C@@"
    "H]1[C@H]([C@H]([C@@H](O1)N1C=NC2=C1N=C(NC2=O)N)OCCOC)SP(=O)([O-])OC[C@H]1[C@@H]([C@@H]([C@H](O1)N1C="
    "C(C(=NC1=O)N)C)OCCOC)SP(=O)([O-])OC[C@H]1[C@@H]([C@@H]([C@H](O1)N1C=NC2=C1N=CN=C2N)OCCOC)SP(=O)([O-]"
    ")OC[C@H]1[C@@H]([C@@H]([C@H](O1)N1C=C(C(=NC1=O)N)C)OCCOC)SP(=O)([O-])OC[C@H]1[C@@H]([C@@H]([C@H](O1)"
    "N1C=C(C(=NC1=O)N)C)OCCOC)O.[Na+].[Na+].[Na+].[Na+].[Na+].[Na+].[Na+].[Na+].[Na+].[Na+].[Na+].[Na+].["
    "Na+].[Na+].[Na+].[Na+].[Na+].[Na+].[Na+]"};

TEST(DefaultBounds, MoleculeNetsLargestMoleculesAreAccepted) {
  const MoleculeDatasetBuilder builder{BuildOptions{}};
  for (const char* smiles : kLargeSider) {
    MoleculeRecord r;
    r.smiles = smiles;
    MoleculeGraph g;
    std::string why;
    ASSERT_TRUE(builder.featurize(r, g, why)) << r.smiles.size() << " characters: " << why;
    EXPECT_EQ(g.numNodes, smilesHeavyAtoms(r.smiles));
    EXPECT_GT(r.smiles.size(), 1000u);
  }
}

// A chain of '*' the length of a real molecule's SMILES: dummies are atoms RDKit ranks like carbons.
std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// The lines that stall RDKit, each refused before RDKit parses it, for what it is.
TEST(DefaultBounds, HostileLinesAreStillRefusedFromTheirText) {
  const MoleculeDatasetBuilder builder{BuildOptions{}};
  const struct {
    std::string smiles, reason;
  } cases[] = {
      {std::string(400000, 'C'), "SMILES of 400000 characters, longer than --max-smiles-length 10000"},
      {std::string(9999, 'C'), "9999 heavy atoms, more than --max-atoms 500"},
      {std::string(999, 'C'), "999 heavy atoms, more than --max-atoms 500"},
      // 1,000 dummies: 0.76 s of RDKit's stereo perception, under the length bound.
      {std::string(1000, '*'),
       "0 heavy and 1000 dummy ('*') atoms, more than --max-atoms 500 (dummies count as heavy atoms)"},
      {std::string(400, 'C') + std::string(101, '*'),
       "400 heavy and 101 dummy ('*') atoms, more than --max-atoms 500 (dummies count as heavy atoms)"},
      // 500 carbons and 600 lone hydrogens (kept by RDKit: they are alone): 1,100 atoms to rank.
      {std::string(500, 'C') + repeat(".[H]", 600),
       "1100 atoms (600 of them written hydrogens), more than twice --max-atoms 500"},
  };
  for (const auto& c : cases) {
    MoleculeRecord r;
    r.smiles = c.smiles;
    MoleculeGraph g;
    std::string why;
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(builder.featurize(r, g, why)) << c.reason;
    // Refused from the text, in microseconds: RDKit would spend 75 ms (the 501-atom chain) to 0.8 s on them.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(50)) << c.reason;
    EXPECT_EQ(why, c.reason);
  }
  // Within the bounds: the largest accepted lines (500 atoms that are not hydrogens, and as many hydrogens).
  for (const std::string& ok :
       {std::string(500, 'C'), std::string(499, 'C') + "*", std::string(500, 'C') + repeat(".[H]", 500),
        "[2H]C([2H])([2H])" + repeat("C([2H])([2H])", 248) + "C([2H])([2H])[2H]"}) {
    MoleculeRecord r;
    r.smiles = ok;
    MoleculeGraph g;
    std::string why;
    EXPECT_TRUE(builder.featurize(r, g, why)) << ok.substr(0, 40) << ": " << why;
  }
}

TEST(DefaultBounds, AtomCountsFromTheTextAreRdkitsOnTheUnsanitisedMolecule) {
  for (const std::string s :
       {"[H]OC(=O)*", "[2H]C([2H])([2H])[#0]", "*c1ccc(*)cc1[*:3].[H+].[#1]", "[HH]", "CC[Hg]C"}) {
    const AtomCounts text = smilesAtomCounts(s);
    std::unique_ptr<RDKit::RWMol> raw = parseUnsanitized(s);
    ASSERT_TRUE(raw) << s;
    const AtomCounts mol = molAtomCounts(*raw);
    EXPECT_EQ(text.heavy, mol.heavy) << s;
    EXPECT_EQ(text.hydrogens, mol.hydrogens) << s;
    EXPECT_EQ(text.dummies, mol.dummies) << s;
  }
  EXPECT_EQ(smilesAtomCounts("*c1ccc(*)cc1[*:3].[H+].[#1]").dummies, 3);
  EXPECT_EQ(smilesAtomCounts("*c1ccc(*)cc1[*:3].[H+].[#1]").hydrogens, 2);
  EXPECT_EQ(atomBoundsError(AtomCounts{500, 500, 0}, 500), "");
  EXPECT_EQ(atomBoundsError(AtomCounts{450, 0, 51}, 0), "");  // 0: no limit
}

}  // namespace
}  // namespace gnn
