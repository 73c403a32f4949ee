#include "data/NpzDataset.h"

#include <gtest/gtest.h>

#include <cmath>

#include "data/GraphormerEncodings.h"
#include "data/MoleculeTestUtil.h"
#include "data/SmilesFeaturizer.h"

using namespace gnn;

// Both formats: 2 (the default: narrow dtypes, path_via) and 1 (edge_input stored).
class NpzDatasetFormats : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Format, NpzDatasetFormats, ::testing::Values(1, 2));

TEST_P(NpzDatasetFormats, RoundTripEqualsTheFeaturiser) {
  const int version = GetParam();
  const auto dir = gnn::testing::tempDir("npz" + std::to_string(version));
  const std::vector<std::string> smiles{"Cl[C@H](/C=C/C)Br", "[Na+].[Cl-]", "c1ccccc1O", "C"};
  SmilesFeaturizer f;
  GraphormerEncodings enc(4);
  std::vector<MoleculeGraph> graphs(smiles.size());
  NpzDatasetWriter w({(dir / "d.npz").string(), 2, false, 4, "", version});
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
  EXPECT_EQ(ds.formatVersion(), version);
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
                            ", 9); assert list(d['node_ptr'][:2]) == [0, 6]; assert d['edge_index'].shape[0] == 2; " +
                            (version == 1 ? "assert d['edge_input'].shape[1:] == (4, 3); "
                                          : "assert d['edge_index'].dtype == np.uint8 and d['path_via'].shape == d['spatial_pos'].shape; "
                                            "assert list(d['multi_hop_max_dist']) == [4]; ") +
                            "assert bytes(d['metadata']) == b'{\\\"hello\\\": 1}'\"";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  std::filesystem::remove_all(dir);
}

TEST(NpzDataset, UnfinishedWriterLeavesNothing) {
  const auto dir = gnn::testing::tempDir("npzabort");
  {
    NpzDatasetWriter w({(dir / "d.npz").string(), 0, false, 0, ""});
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

TEST(NpzDataset, SmilesRoundTrip) {
  const auto dir = gnn::testing::tempDir("npzsmiles");
  const std::vector<std::string> smiles{"Cl[C@@H](/C=C/C)Br", "F/C=C\\F", "C", "[2H]C([2H])([2H])[N+](=O)[O-]"};
  SmilesFeaturizer f;
  NpzDatasetWriter w({(dir / "d.npz").string(), 0, false, 0, ""});
  for (size_t i = 0; i < smiles.size(); ++i) {
    MoleculeGraph g;
    std::string why;
    ASSERT_TRUE(f.featurize(smiles[i], g, why)) << why;
    EXPECT_EQ(g.smiles, smiles[i]);
    w.add(g, static_cast<int64_t>(i), static_cast<int64_t>(i + 1));
  }
  MoleculeGraph unnamed;  // a graph without SMILES (as from XYZ) stores ""
  unnamed.numNodes = 1;
  unnamed.x.assign(9, 0);
  w.add(unnamed, 4, 5);
  w.finish("{}");
  NpzDataset ds((dir / "d.npz").string());
  ASSERT_EQ(ds.size(), 5u);
  for (size_t i = 0; i < smiles.size(); ++i) EXPECT_EQ(ds.smiles(i), smiles[i]);
  EXPECT_EQ(ds.smiles(4), "");
  EXPECT_EQ(ds.file().get("smiles_ptr").shape, (std::vector<int64_t>{6}));
  EXPECT_THROW(ds.smiles(5), std::invalid_argument);
  std::filesystem::remove_all(dir);
}

TEST(NpzDataset, ReadsDatasetsWrittenBeforeSmilesWereStored) {
  // The arrays of an older build of a target-less .smi: no smiles / smiles_ptr, y and y_mask as [0, 0].
  const auto dir = gnn::testing::tempDir("npzold");
  const std::string path = (dir / "old.npz").string();
  {
    NpzWriter w(path);
    const int64_t ptr[] = {0, 1};
    const uint8_t x[9] = {5, 0, 0, 5, 4, 0, 3, 0, 0};
    const int64_t zero = 0, zeros[] = {0, 0};
    w.append(w.addArray("x", "|u1", 1, {9}), x, 9);
    w.addArray("edge_index", "<i4", 4, {}, 2);
    w.addArray("edge_attr", "|u1", 1, {3});
    w.append(w.addArray("node_ptr", "<i8", 8), ptr, 16);
    w.append(w.addArray("edge_ptr", "<i8", 8), zeros, 16);
    w.addArray("y", "<f4", 4, {0});
    w.addArray("y_mask", "|u1", 1, {0});
    w.append(w.addArray("source_index", "<i8", 8), &zero, 8);
    w.append(w.addArray("source_line", "<i8", 8), ptr + 1, 8);
    const std::string meta = "{\"targets\": []}";
    w.append(w.addArray("metadata", "|u1", 1), meta.data(), meta.size());
    w.finish();
  }
  NpzDataset ds(path);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_FALSE(ds.hasSmiles());
  EXPECT_EQ(ds.smiles(0), "");
  EXPECT_EQ(ds.numTargets(), 0);
  EXPECT_EQ(ds.get(0).y.dim(0), 0);
  std::filesystem::remove_all(dir);
}

TEST(NpzWriter, RowsOfZeroWidthAndAnAbandonedFinish) {
  const auto dir = gnn::testing::tempDir("npzrows");
  {
    NpzWriter w((dir / "a.npz").string());
    const int empty = w.addArray("empty", "<f4", 4, {0});
    const int bytes = w.addArray("b", "|u1", 1, {2});
    w.setRows(empty, 3);
    w.append(bytes, "abcd", 4);
    w.finish();
  }
  NpzFile f((dir / "a.npz").string());
  EXPECT_EQ(f.get("empty").shape, (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(f.get("b").shape, (std::vector<int64_t>{2, 2}));
  {
    NpzWriter w((dir / "bad.npz").string());
    const int b = w.addArray("b", "|u1", 1, {2});
    w.append(b, "abcd", 4);
    w.setRows(b, 3);  // 4 bytes are not 3 rows of 2
    EXPECT_THROW(w.finish(), std::logic_error);
  }
  {
    NpzWriter w((dir / "stopped.npz").string());
    const int b = w.addArray("b", "|u1", 1);
    w.addArray("c", "|u1", 1);
    std::vector<char> big(3 << 20, 'x');  // several MB: polled while copying too
    w.append(b, big.data(), big.size());
    int polls = 0;
    EXPECT_THROW(w.finish([&polls] {
      if (++polls == 3) throw std::runtime_error("stop");
    }),
                 std::runtime_error);
    EXPECT_EQ(polls, 3);
  }  // the destructor removes the parts and the half-written zip
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.npz"));
  EXPECT_FALSE(std::filesystem::exists(dir / "stopped.npz"));
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.path().filename() != "a.npz";
  EXPECT_EQ(files, 0u);
  std::filesystem::remove_all(dir);
}
