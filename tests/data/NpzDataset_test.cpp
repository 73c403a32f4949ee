#include "data/NpzDataset.h"

#include <gtest/gtest.h>

#include <cmath>

#include "data/GraphormerEncodings.h"
#include "data/MoleculeTestUtil.h"
#include "data/SmilesFeaturizer.h"

using namespace gnn;

TEST(NpzDataset, RoundTripEqualsTheFeaturiser) {
  const auto dir = gnn::testing::tempDir("npz");
  const std::vector<std::string> smiles{"Cl[C@H](/C=C/C)Br", "[Na+].[Cl-]", "c1ccccc1O", "C"};
  SmilesFeaturizer f;
  GraphormerEncodings enc(4);
  std::vector<MoleculeGraph> graphs(smiles.size());
  NpzDatasetWriter w({(dir / "d.npz").string(), 2, false, 4});
  for (size_t i = 0; i < smiles.size(); ++i) {
    std::string why;
    ASSERT_TRUE(f.featurize(smiles[i], graphs[i], why));
    enc.compute(graphs[i]);
    graphs[i].y = {static_cast<float>(i), std::nanf("")};
    graphs[i].yMask = {1, 0};
    w.add(graphs[i], static_cast<int64_t>(100 + i), static_cast<int64_t>(i + 2));
  }
  w.addSplit("train", {0, 2});
  w.finish("{\"hello\": 1}");
  NpzDataset ds((dir / "d.npz").string());
  ASSERT_EQ(ds.size(), smiles.size());
  EXPECT_EQ(ds.metadataJson(), "{\"hello\": 1}");
  EXPECT_EQ(ds.split("train"), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(ds.graphormerMaxDist(), 4);
  for (size_t i = 0; i < smiles.size(); ++i) {
    Graph a = graphs[i].toGraph(), b = ds.get(i);
    b.validate();
    EXPECT_TRUE(a.x.bitEqual(b.x)) << smiles[i];
    EXPECT_TRUE(a.edgeIndex.bitEqual(b.edgeIndex)) << smiles[i];
    EXPECT_TRUE(a.edgeAttr.bitEqual(b.edgeAttr)) << smiles[i];
    EXPECT_TRUE(a.y.bitEqual(b.y));
    EXPECT_TRUE(a.yMask.bitEqual(b.yMask));
    EXPECT_TRUE(a.spatialPos.bitEqual(b.spatialPos));
    EXPECT_TRUE(a.inDegree.bitEqual(b.inDegree));
    EXPECT_TRUE(a.edgeInput.bitEqual(b.edgeInput));
    EXPECT_EQ(ds.sourceIndex(i), static_cast<int64_t>(100 + i));
    EXPECT_EQ(ds.numNodes(i), graphs[i].numNodes);
  }
  // NumPy reads it with numpy.load alone (when NumPy is installed).
  if (std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") == 0) {
    const std::string cmd = "/usr/bin/python3 -c \"import numpy as np; d = np.load('" + (dir / "d.npz").string() +
                            "'); assert d['x'].shape == (" + std::to_string(ds.numNodes(0) + ds.numNodes(1) + ds.numNodes(2) + ds.numNodes(3)) +
                            ", 9); assert list(d['node_ptr'][:2]) == [0, 6]; assert d['edge_index'].shape[0] == 2; "
                            "assert d['edge_input'].shape[1:] == (4, 3); assert bytes(d['metadata']) == b'{\\\"hello\\\": 1}'\"";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  std::filesystem::remove_all(dir);
}

TEST(NpzDataset, UnfinishedWriterLeavesNothing) {
  const auto dir = gnn::testing::tempDir("npzabort");
  {
    NpzDatasetWriter w({(dir / "d.npz").string(), 0, false, 0});
    MoleculeGraph g;
    std::string why;
    SmilesFeaturizer().featurize("CCO", g, why);
    w.add(g, 0, 1);
  }  // destroyed without finish(), as when a build throws
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST(NpzDataset, RejectsNonNpz) {
  const auto dir = gnn::testing::tempDir("npzbad");
  std::ofstream(dir / "x.npz") << "this is not a zip file at all, just text";
  EXPECT_THROW(NpzDataset((dir / "x.npz").string()), std::runtime_error);
  std::filesystem::remove_all(dir);
}
