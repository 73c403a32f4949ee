#include "data/GraphormerEncodings.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "data/MoleculeSource.h"
#include "data/MoleculeTestUtil.h"
#include "data/SmilesFeaturizer.h"

using namespace gnn;

namespace {
MoleculeGraph encoded(const std::string& smiles, int k) {
  SmilesFeaturizer f;
  MoleculeGraph g;
  std::string why;
  EXPECT_TRUE(f.featurize(smiles, g, why)) << why;
  GraphormerEncodings(k).compute(g);
  return g;
}
int64_t hop(const MoleculeGraph& g, int i, int j, int h, int f) {
  const int64_t n = g.numNodes;
  return g.edgeInput[((static_cast<size_t>(i) * n + j) * g.maxDist + h) * 3 + f];
}
}  // namespace

TEST(GraphormerEncodings, ChainDistancesDegreesAndHops) {
  // C-C=C-O: distances along the chain; bond features offset by 2 + 512 f (wrapper.py).
  MoleculeGraph g = encoded("CC=CO", 2);
  ASSERT_EQ(g.numNodes, 4);
  EXPECT_EQ(g.spatialPos, (std::vector<int64_t>{0, 1, 2, 3, 1, 0, 1, 2, 2, 1, 0, 1, 3, 2, 1, 0}));
  EXPECT_EQ(g.inDegree, (std::vector<int64_t>{1, 2, 2, 1}));
  // 0 -> 3: hops C0-C1 (single, not conjugated), C1=C2 (double, conjugated with O? RDKit: not), truncated at K=2.
  EXPECT_EQ(hop(g, 0, 3, 0, 0), 0 + 2);
  EXPECT_EQ(hop(g, 0, 3, 1, 0), 1 + 2);  // double bond type index 1
  EXPECT_EQ(hop(g, 0, 3, 0, 1), 0 + 2 + 512);
  EXPECT_EQ(hop(g, 0, 0, 0, 0), -1);  // diagonal: no hops
  EXPECT_EQ(hop(g, 0, 1, 1, 0), -1);  // one-hop path: second slot empty
}

TEST(GraphormerEncodings, DisconnectedIs510) {
  MoleculeGraph g = encoded("CC.O", 3);
  EXPECT_EQ(g.spatialPos[0 * 3 + 2], 510);
  EXPECT_EQ(g.spatialPos[2 * 3 + 0], 510);
  EXPECT_EQ(hop(g, 0, 2, 0, 0), -1);
  EXPECT_EQ(g.inDegree[2], 0);
}

TEST(GraphormerEncodings, TieBreakFollowsFloydWarshall) {
  // Cyclobutane-like ring 0-1-2-3-0 with different bond types: 0 -> 2 has two shortest paths (via 1 or via 3).
  // Floyd-Warshall records the last intermediate that strictly improves: k = 1 improves 0->2 first, k = 3 then
  // only ties, so Graphormer's path is 0-1-2.
  MoleculeGraph g = encoded("C1=CCC1", 2);  // bond 0: C0=C1 double, others single
  EXPECT_EQ(g.spatialPos[0 * 4 + 2], 2);
  EXPECT_EQ(hop(g, 0, 2, 0, 0), 1 + 2);  // first hop is the double bond 0=1
}

TEST(GraphormerEncodings, RejectsNonPositiveK) { EXPECT_THROW(GraphormerEncodings(0), std::invalid_argument); }

// Against the reference script's plain-Python restatement of Graphormer's preprocess_item, on 1500 real
// molecules (ESOL, BBBP, HIV): distances, degrees and every hop of edge_input.
TEST(GraphormerEncodings, MatchesReferenceOnRealMolecules) {
  if (!gnn::testing::pythonRdkitAvailable()) GTEST_SKIP() << "/usr/bin/python3 with rdkit not available";
  const auto dir = gnn::testing::tempDir("graphormer");
  std::vector<std::string> smiles;
  for (const char* f : {"moleculenet/delaney-processed.csv.gz", "moleculenet/BBBP.csv.gz", "moleculenet/HIV.csv.gz"}) {
    MoleculeSourceOptions o;
    o.path = gnn::testing::moleculeData(f);
    auto src = openMoleculeSource(o);
    MoleculeRecord r;
    for (int n = 0; n < 500 && src->next(r); ++n) smiles.push_back(r.smiles);
  }
  const std::string file = (dir / "g.smi").string();
  {
    std::ofstream out(file);
    for (const auto& s : smiles) out << s << "\n";
  }
  const int k = 5;
  std::istringstream ref(gnn::testing::runReference(file, "--graphormer 5"));
  RdkitLogSilencer quiet;
  SmilesFeaturizer f;
  GraphormerEncodings enc(k);
  MoleculeGraph g;
  std::string line, why;
  size_t i = 0, compared = 0;
  while (std::getline(ref, line)) {
    const nlohmann::json r = nlohmann::json::parse(line);
    const bool ok = f.featurize(smiles[i], g, why);
    ASSERT_EQ(ok, !r.contains("error")) << smiles[i];
    ++i;
    if (!ok) continue;
    enc.compute(g);
    std::vector<int64_t> sp;
    std::vector<int16_t> ei;
    for (const auto& row : r["spatial_pos"]) for (int64_t v : row) sp.push_back(v);
    for (const auto& a : r["edge_input"]) for (const auto& b : a) for (const auto& c : b) for (int64_t v : c) ei.push_back(static_cast<int16_t>(v));
    ASSERT_EQ(sp, g.spatialPos) << smiles[i - 1];
    ASSERT_EQ(r["in_degree"].get<std::vector<int64_t>>(), g.inDegree) << smiles[i - 1];
    ASSERT_EQ(ei, g.edgeInput) << smiles[i - 1];
    ++compared;
  }
  EXPECT_EQ(i, smiles.size());
  EXPECT_GT(compared, 1400u);
  std::filesystem::remove_all(dir);
}
