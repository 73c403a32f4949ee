// Bounded work per input: a count in a file is a claim, never a size to allocate before the data is there.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/GraphormerEncodings.h"
#include "data/MoleculeRecord.h"
#include "data/NpzDataset.h"
#include "data/SmilesFeaturizer.h"
#include "data/XyzReader.h"
#include "gnn/system/Check.h"

namespace gnn {
namespace {

std::string writeTemp(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("gnn_bounded_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p.string();
}

std::string errorOf(const std::string& path) {
  try {
    XyzReader r(path, {});
    MoleculeRecord rec;
    while (r.next(rec)) {
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(BoundedWork, XyzAtomCountsAreClaimsNotSizes) {
  // The case: three lines claiming a billion atoms. Refused at once, naming the line.
  const std::string huge = writeTemp("huge.xyz", "1000000000\ncomment\nC 0 0 0\n");
  EXPECT_NE(errorOf(huge).find(":1: atom count 1000000000 is more than"), std::string::npos) << errorOf(huge);
  // Under the cap, the file ends long before the claimed atoms: nothing was sized from the claim.
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  const std::string claim = writeTemp("claim.xyz", "99999\ncomment\nC 0 0 0\n");
  EXPECT_NE(errorOf(claim).find("file ends inside a molecule"), std::string::npos) << errorOf(claim);
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024);  // KiB: far below 99999 atoms' worth of reserve
  std::filesystem::remove(huge);
  std::filesystem::remove(claim);
}

}  // namespace
}  // namespace gnn

#include <chrono>
#include <sstream>

#include "data/DatasetSplit.h"
#include "data/MoleculeDatasetBuilder.h"
#include "data/MoleculeSource.h"
#include "data/RingSystemLimits.h"
#include "data/SmilesBounds.h"

#include <GraphMol/FileParsers/FileParsers.h>
#include <GraphMol/GraphMol.h>
#include <GraphMol/SmilesParse/SmilesParse.h>

namespace gnn {
namespace {

// Builds a CSV of molecules with target column y; a stall (an input that is not bounded) fails the test rather
// than hanging it for minutes.
BuildSummary buildWithoutStalling(const std::string& name, const std::string& text, BuildOptions o = {},
                                  std::chrono::seconds bound = std::chrono::seconds(10)) {
  const std::string path = writeTemp(name, text);
  o.source.path = path;
  o.source.targetColumns = {"y"};
  const auto t0 = std::chrono::steady_clock::now();
  BuildSummary s = MoleculeDatasetBuilder(o).run();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, bound);
  std::filesystem::remove(path);
  return s;
}

// The stalls: very long SMILES are rejected before RDKit parses them, and too many atoms after; the
// build goes on and takes no time.
TEST(BoundedWork, LongSmilesAndLargeMoleculesAreRejectedNotParsedForMinutes) {
  std::ostringstream csv;
  csv << "smiles,y\n" << std::string(400000, 'C') << ",1\nCCO,2\n" << std::string(600, 'C') << ",3\n";
  BuildSummary s = buildWithoutStalling("long.csv", csv.str());
  EXPECT_EQ(s.accepted, 1);
  ASSERT_EQ(s.rejected, 2);
  EXPECT_NE(s.rejectedMolecules[0].reason.find("longer than --max-smiles-length 10000"), std::string::npos);
  EXPECT_NE(s.rejectedMolecules[0].smiles.find("(400000 characters)"), std::string::npos);
  EXPECT_LT(s.rejectedMolecules[0].smiles.size(), 300u);
  EXPECT_NE(s.rejectedMolecules[1].reason.find("600 heavy atoms, more than --max-atoms 500"), std::string::npos);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// --graphormer-max-dist 100,000 used to allocate n^2 x K per molecule (5.5 GB) and a file of P x K x 3 int16.
// No shortest path in a graph of n atoms has more than n - 1 hops, so the stored K is capped at the largest
// molecule's atoms - 1: a build asking for more writes the very bytes of a build asking for the cap.
TEST(BoundedWork, GraphormerKIsCappedAtTheLongestPossiblePath) {
  // Largest molecule: phenol, 7 heavy atoms, so paths of at most 6 hops; "C" alone has none.
  const std::string csv = writeTemp("k.csv", "smiles,y\nCCO,1\nc1ccccc1O,2\nC,3\nCC(=O)N,4\n");
  auto build = [&](int k) {
    BuildOptions o;
    o.source.path = csv;
    o.source.targetColumns = {"y"};
    o.graphormerMaxDist = k;
    o.outPath = csv + "." + std::to_string(k) + ".npz";
    MoleculeDatasetBuilder(o).run();
    return o.outPath;
  };
  const std::string huge = build(100000), cap = build(6), small = build(3);
  EXPECT_TRUE(slurp(huge) == slurp(cap)) << "K = 100000 and K = 6 (the cap) gave different files";
  NpzDataset ds(huge), ds3(small);
  EXPECT_EQ(ds.graphormerMaxDist(), 6);
  int64_t stored = 0;
  std::memcpy(&stored, ds.file().get("multi_hop_max_dist").data, 8);
  EXPECT_EQ(stored, 6);
  EXPECT_EQ(ds3.graphormerMaxDist(), 3);  // below the cap: as asked

  // Each graph's encodings equal Graphormer's own for any K, once widened with "no hop" slots.
  ds.widenMaxDist(10);
  EXPECT_EQ(ds.graphormerMaxDist(), 10);
  SmilesFeaturizer f;
  const char* smiles[] = {"CCO", "c1ccccc1O", "C", "CC(=O)N"};
  for (size_t i = 0; i < 4; ++i) {
    MoleculeGraph g;
    std::string why;
    ASSERT_TRUE(f.featurize(smiles[i], g, why));
    GraphormerEncodings(10).compute(g);
    EXPECT_TRUE(ds.get(i).edgeInput.bitEqual(g.toGraph().edgeInput)) << smiles[i];
  }
  // A format-1 dataset whose K is below its longest path cannot be widened: the hops past K are not in it.
  // Format 2 keeps whole paths (path_via), so any K reads exactly.
  EXPECT_NO_THROW(ds3.widenMaxDist(10));
  BuildOptions o;
  o.source.path = csv;
  o.source.targetColumns = {"y"};
  o.graphormerMaxDist = 3;
  o.formatVersion = 1;
  o.outPath = csv + ".v1.npz";
  MoleculeDatasetBuilder(o).run();
  NpzDataset v1(o.outPath);
  EXPECT_EQ(v1.file().get("edge_input").shape[1], 3);
  EXPECT_THROW(v1.widenMaxDist(10), std::invalid_argument);
  for (const std::string& p : {csv, huge, cap, small, o.outPath}) std::filesystem::remove(p);
}

TEST(BoundedWork, GraphormerEncodingsPerGraphStopAtItsLongestPath) {
  SmilesFeaturizer f;
  MoleculeGraph capped, plain;
  std::string why;
  ASSERT_TRUE(f.featurize("CC=CO", capped, why));
  plain = capped;
  GraphormerEncodings(100000, /*capAtLongestPath=*/true).compute(capped);
  GraphormerEncodings(3).compute(plain);
  EXPECT_EQ(capped.maxDist, 3);
  EXPECT_EQ(capped.edgeInput, plain.edgeInput);
  EXPECT_EQ(capped.spatialPos, plain.spatialPos);
  EXPECT_EQ(GraphormerEncodings(5, true).hopSlots(1), 1);  // a lone atom keeps one (empty) slot
  EXPECT_EQ(GraphormerEncodings(5, true).hopSlots(4), 3);
  EXPECT_EQ(GraphormerEncodings(5, true).hopSlots(40), 5);
  EXPECT_EQ(GraphormerEncodings(5).hopSlots(2), 5);
}


// A linear acene of k rings ("c1ccc2cc3...": anthracene for k = 3), the shape on which RDKit's aromaticity
// perception is slowest per ring.
std::string acene(int k) {
  auto label = [](int i) { return i < 10 ? std::to_string(i) : "%" + std::to_string(i); };
  std::string s = "c1ccc" + label(2);
  for (int i = 3; i <= k; ++i) s += "cc" + label(i);
  s += "cccc" + label(k);
  for (int i = k - 1; i >= 2; --i) s += "cc" + label(i);
  return s + "cc1";
}

// The smiles fuzz target's timeout: 21 dummy atoms in one fused system, 0.8 s of RDKit kekulisation to refuse.
const char* kDummyRingSystem = "c1ccc2c(cc)c31cc2cC*****ccc4c**************cc5cc5ccc4**3********";

RingSystemSize sizeOf(const std::string& smiles) {
  RDKit::SmilesParserParams params;
  params.sanitize = false;
  std::unique_ptr<RDKit::RWMol> mol(RDKit::SmilesToMol(smiles, params));
  EXPECT_TRUE(mol) << smiles;
  return mol ? largestRingSystems(*mol) : RingSystemSize{};
}

TEST(BoundedWork, RingSystemsAreMeasuredAsRdkitKekulisesThem) {
  EXPECT_EQ(sizeOf("CCO").dummies, 0);
  EXPECT_EQ(sizeOf("c1ccc****c1").dummies, 4);
  EXPECT_EQ(sizeOf("c1ccc****c1").rings, 1);
  // Spiro systems share an atom, not a bond: two systems (4 and 5 dummies, the shared one in both).
  EXPECT_EQ(sizeOf("*1***12****2").dummies, 5);
  // Dummies off the rings (attachment points) do not branch kekulisation.
  EXPECT_EQ(sizeOf("*c1ccc(*)cc1[*:3]").dummies, 0);
  EXPECT_EQ(sizeOf(kDummyRingSystem).dummies, 21);
  // Rings that could be aromatic, fused by bonds: naphthalene + benzene apart is 2; saturated rings do not count
  // (cyclohexane, and a dummy in an otherwise saturated ring).
  EXPECT_EQ(sizeOf("c1ccc2ccccc2c1.c1ccccc1").rings, 2);
  EXPECT_EQ(sizeOf("C1CCCCC1").rings, 0);
  EXPECT_EQ(sizeOf("C1CC2CCC1*2").rings, 0);
  EXPECT_EQ(sizeOf("C1=CC=CC=C1").rings, 1);
  EXPECT_EQ(sizeOf(acene(40)).rings, 40);
  // C60: 90 bonds, 60 atoms, 31 SSSR rings, under the default limit of 36.
  EXPECT_EQ(sizeOf("c12c3c4c5c1c1c6c7c2c2c8c3c3c9c4c4c%10c5c5c1c1c6c6c%11c7c2c2c7c8c3c3c8c9c4c4c9c%10c5c5c1c1c6c6c%11"
                   "c2c2c7c3c3c8c4c4c9c5c1c1c6c2c3c41")
                .rings,
            31);
}

// RDKit spends 0.8 s refusing kDummyRingSystem and 3 s accepting a 45-ring acene (RDKit 2022.09, release build),
// and both grow exponentially with one more dummy or a few more rings. They are refused before RDKit sanitises
// them, each with its line, and the molecules around them are built.
TEST(BoundedWork, RingSystemsThatStallRdkitAreRefusedByTheirLine) {
  std::ostringstream csv;
  csv << "smiles,y\n"
      << kDummyRingSystem << ",1\n"
      << "CCO,2\n"
      << acene(45) << ",3\n"
      << acene(20) << ",4\n"
      << "*c1ccc(*)cc1,5\n";
  BuildSummary s = buildWithoutStalling("rings.csv", csv.str());
  EXPECT_EQ(s.accepted, 3);
  ASSERT_EQ(s.rejected, 2);
  EXPECT_EQ(s.rejectedMolecules[0].line, 2);
  EXPECT_NE(s.rejectedMolecules[0].reason.find("21 dummy atoms ('*') in one fused ring system, more than "
                                               "--max-ring-dummies 12"),
            std::string::npos)
      << s.rejectedMolecules[0].reason;
  EXPECT_EQ(s.rejectedMolecules[1].line, 4);
  EXPECT_NE(s.rejectedMolecules[1].reason.find("45 rings in one fused unsaturated ring system, more than "
                                               "--max-fused-rings 36"),
            std::string::npos)
      << s.rejectedMolecules[1].reason;

  // The limits are options: at 0 (no limit) RDKit decides, here on a system just over the dummy limit.
  const std::string thirteen = "c1ccc2c(cc)c31cc2cC*****ccc4c******cc5cc5ccc4**3";
  SmilesFeaturizer bounded;
  MoleculeGraph g;
  std::string why;
  EXPECT_FALSE(bounded.featurize(thirteen, g, why));
  EXPECT_NE(why.find("13 dummy atoms"), std::string::npos) << why;
  SmilesFeaturizer::Options unbounded;
  unbounded.ringLimits.maxDummies = 0;
  EXPECT_FALSE(SmilesFeaturizer(unbounded).featurize(thirteen, g, why));
  EXPECT_NE(why.find("kekulize"), std::string::npos) << why;
}

// The same limits on the other ways a molecule arrives: a mol block (SDF) and a scaffold split's SMILES.
TEST(BoundedWork, RingSystemLimitsHoldForMolBlocksAndScaffolds) {
  RDKit::SmilesParserParams params;
  params.sanitize = false;
  std::unique_ptr<RDKit::RWMol> raw(RDKit::SmilesToMol(kDummyRingSystem, params));
  ASSERT_TRUE(raw);
  raw->updatePropertyCache(false);
  MoleculeRecord record;
  record.molBlock = RDKit::MolToMolBlock(*raw, true, -1, /*kekulize=*/false);
  MoleculeGraph g;
  std::string why;
  EXPECT_FALSE(MoleculeDatasetBuilder(BuildOptions{}).featurize(record, g, why));
  EXPECT_NE(why.find("21 dummy atoms"), std::string::npos) << why;
  try {
    murckoScaffold(acene(45), false);
    ADD_FAILURE() << "a 45-ring acene was given a scaffold";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("45 rings in one fused"), std::string::npos) << e.what();
  }
}

// 3D embedding (--conformers) is bounded by size as well: a 150-carbon chain kept ETKDG busy for 12 s only to
// fail. Over --max-conformer-atoms (default 100 heavy atoms) a molecule is refused before embedding.
TEST(BoundedWork, ConformersAreNotAttemptedForMoleculesOverTheLimit) {
  BuildOptions o;
  o.conformers = true;
  BuildSummary s =
      buildWithoutStalling("conf.csv", "smiles,y\n" + std::string(150, 'C') + ",1\nCCO,2\n", o, std::chrono::seconds(5));
  EXPECT_EQ(s.accepted, 1);
  ASSERT_EQ(s.rejected, 1);
  EXPECT_EQ(s.rejectedMolecules[0].line, 2);
  EXPECT_NE(s.rejectedMolecules[0].reason.find("150 heavy atoms, more than --max-conformer-atoms 100"),
            std::string::npos)
      << s.rejectedMolecules[0].reason;
}
// --max-atoms is decided before RDKit sanitises: a 999-carbon chain took 0.6 s to sanitise only to be refused.
// Made observable by a molecule that is both over the limit and invalid (a pentavalent carbon): sanitising first
// would have rejected it for its valence; counting first rejects it for its size.
TEST(BoundedWork, MaxAtomsIsCheckedBeforeSanitising) {
  BuildOptions o;
  o.maxAtoms = 50;
  MoleculeDatasetBuilder builder(o);
  MoleculeRecord r;
  r.smiles = "C(C)(C)(C)(C)C" + std::string(60, 'C');
  MoleculeGraph g;
  std::string why;
  EXPECT_FALSE(builder.featurize(r, g, why));
  EXPECT_EQ(why, "66 heavy atoms, more than --max-atoms 50");
  // Explicit hydrogens in the text are tokens but not heavy atoms: 51 tokens, 50 heavy atoms, accepted.
  r.smiles = "[H]" + std::string(50, 'C');
  ASSERT_TRUE(builder.featurize(r, g, why)) << why;
  EXPECT_EQ(g.numNodes, 50);
  // The same bound on a mol block, read once without sanitising.
  std::unique_ptr<RDKit::RWMol> chain(RDKit::SmilesToMol(std::string(60, 'C')));
  ASSERT_TRUE(chain);
  MoleculeRecord block;
  block.molBlock = RDKit::MolToMolBlock(*chain);
  EXPECT_FALSE(builder.featurize(block, g, why));
  EXPECT_EQ(why, "60 heavy atoms, more than --max-atoms 50");
}

// The text count that decides --max-atoms is RDKit's heavy-atom count for every valid SMILES (so no molecule
// under the limit is refused): checked on hand-made cases and on every molecule of the shipped MoleculeNet sets.
TEST(BoundedWork, SmilesHeavyAtomsFromTheTextAreRdkitsCount) {
  EXPECT_EQ(smilesHeavyAtoms("Cl[C@H](/C=C/C)Br"), 6);
  EXPECT_EQ(smilesHeavyAtoms("c1ccccc1[N+](=O)[O-].[Na+]"), 10);
  EXPECT_EQ(smilesHeavyAtoms("[2H]OC(=O)*"), 3);
  EXPECT_EQ(smilesHeavyAtoms("[H][Hg][He][Hf][Ho][Hs][H+][2H-][#1][#6][#0][*][13CH4]"), 7);
  EXPECT_EQ(smilesRingClosureBound("C1CC2CCC1C2"), 2);
  EXPECT_EQ(unsanitizedHeavyAtoms("[H]OC(=O)C"), 4);
  EXPECT_EQ(unsanitizedHeavyAtoms("C1CC("), -1);
  for (const std::string hand : {"[H][Hg][He][Hf][Ho][Hs][H+][2H-][#1][#6][#0][*][13CH4]", "[se]1cccc1", "[Cl-].[K+]"})
    EXPECT_EQ(smilesHeavyAtoms(hand), unsanitizedHeavyAtoms(hand)) << hand;
  int checked = 0;
  for (const char* file : {"BBBP", "HIV", "Lipophilicity", "SAMPL", "delaney-processed"}) {
    MoleculeSourceOptions so;
    so.path = std::string(GNN_SOURCE_DIR) + "/examples/data/moleculenet/" + file + ".csv.gz";
    so.smilesColumn = "smiles";
    std::unique_ptr<MoleculeSource> src = openMoleculeSource(so);
    MoleculeRecord rec;
    while (src->next(rec)) {
      if (!rec.error.empty()) continue;
      const int64_t rdkit = unsanitizedHeavyAtoms(rec.smiles);
      if (rdkit < 0) continue;
      ASSERT_EQ(smilesHeavyAtoms(rec.smiles), rdkit) << file << ": " << rec.smiles;
      ++checked;
    }
  }
  EXPECT_GT(checked, 47000);
}
}  // namespace
}  // namespace gnn
