// Format 2 of the molecular .npz (narrowest dtypes; Graphormer's paths stored as path_via, edge_input gathered
// when read): every shipped molecule reads as format 1 stores it, for K = 1, 5 and 20; batches collated from
// either format are the same bits; the file is small, its size does not grow with K; format 1 still reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "data/GraphormerEncodings.h"
#include "data/MoleculeDatasetBuilder.h"
#include "data/MoleculeTestUtil.h"
#include "data/NpzDataset.h"
#include "data/NpzWriter.h"
#include "loaders/BatchFields.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;
using gnn::testing::moleculeData;

struct Source {
  std::string name, path;
  std::vector<std::string> targets;
};

// Every molecule shipped with the examples (examples/data/README.md), each set with one of its targets.
std::vector<Source> shippedSources() {
  return {{"pcqm4mv2_style", moleculeData("pcqm4mv2_style"), {}},
          {"esol", moleculeData("moleculenet/delaney-processed.csv.gz"), {"measured log solubility in mols per litre"}},
          {"freesolv", moleculeData("moleculenet/SAMPL.csv.gz"), {"expt"}},
          {"lipophilicity", moleculeData("moleculenet/Lipophilicity.csv.gz"), {"exp"}},
          {"bbbp", moleculeData("moleculenet/BBBP.csv.gz"), {"p_np"}},
          {"hiv", moleculeData("moleculenet/HIV.csv.gz"), {"HIV_active"}},
          {"qm7", moleculeData("qm7_3d/qm7.xyz.gz"), {"e_pbe0_atomization_kcal_mol"}}};
}

std::string build(const Source& s, int k, int version, const fs::path& out, int64_t limit = -1) {
  BuildOptions o;
  o.source.path = s.path;
  o.source.targetColumns = s.targets;
  o.graphormerMaxDist = k;
  o.formatVersion = version;
  o.threads = 2;
  o.limit = limit;
  o.outPath = out.string();
  MoleculeDatasetBuilder(o).run();
  return o.outPath;
}

// The bits of a tensor, or "undefined".
bool sameBits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() || a.bitEqual(b);
}

// A MoleculeGraph of g's atoms and bonds, for GraphormerEncodings (the code that wrote format 1's edge_input).
MoleculeGraph moleculeOf(const Graph& g) {
  MoleculeGraph m;
  m.numNodes = g.numNodes;
  const int64_t e = g.numEdges();
  const int64_t* ei = g.edgeIndex.data<int64_t>();
  m.src.assign(ei, ei + e);
  m.dst.assign(ei + e, ei + 2 * e);
  m.edgeAttr.assign(g.edgeAttr.data<int64_t>(), g.edgeAttr.data<int64_t>() + g.edgeAttr.numel());
  m.x.assign(g.x.data<int64_t>(), g.x.data<int64_t>() + g.x.numel());
  return m;
}

class NpzFormat2 : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = gnn::testing::tempDir("npz_format2"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Whether `got` [n, n, k, 3] holds the first k hop slots of `want` [n, n, K >= k, 3].
bool firstHops(const Tensor& got, const Tensor& want) {
  if (got.rank() != 4 || want.rank() != 4 || got.dim(0) != want.dim(0) || got.dim(1) != want.dim(1) ||
      got.dim(2) > want.dim(2) || got.dim(3) != want.dim(3))
    return false;
  const int64_t pairs = got.dim(0) * got.dim(1), k = got.dim(2) * 3, wide = want.dim(2) * 3;
  const int64_t* g = got.data<int64_t>();
  const int64_t* w = want.data<int64_t>();
  for (int64_t p = 0; p < pairs; ++p)
    if (!std::equal(g + p * k, g + (p + 1) * k, w + p * wide)) return false;
  return true;
}

// (a) For every shipped molecule: the atoms, bonds, targets and coordinates of a format-2 file equal a
// format-1 file's, and spatial_pos, in_degree and edge_input equal what GraphormerEncodings (which wrote
// format 1's edge_input, walking Floyd-Warshall's via matrix itself) gives for K = 1, 5 and 20: the K a
// format-1 build with that K stores, widened to K where the build capped it. (GraphormerEncodings with K = 20
// fills the first K slots exactly as with a smaller K: its hops are cut at the slot count, nothing else.)
TEST_F(NpzFormat2, EveryShippedMoleculeReadsAsFormat1StoresItForAnyK) {
  int64_t molecules = 0, pairsWithHops = 0;
  for (const Source& s : shippedSources()) {
    SCOPED_TRACE(s.name);
    NpzDataset v1(build(s, 0, 1, dir_ / (s.name + "_v1.npz")));
    NpzDataset v2(build(s, 5, 2, dir_ / (s.name + "_v2.npz")));
    ASSERT_EQ(v1.formatVersion(), 1);
    ASSERT_EQ(v2.formatVersion(), 2);
    ASSERT_EQ(v1.size(), v2.size());
    ASSERT_GT(v2.size(), 500u);
    ASSERT_EQ(v2.graphormerMaxDist(), std::min<int64_t>(5, v2.maxNodes() - 1));
    GraphormerEncodings enc(20);
    for (size_t i = 0; i < v1.size(); ++i) {
      const Graph a = v1.get(i);
      v2.setGraphormerMaxDist(20);
      const Graph b = v2.get(i);
      for (const BatchField& f : batchFields()) {
        if (f.inGraph == &Graph::spatialPos || f.inGraph == &Graph::inDegree || f.inGraph == &Graph::edgeInput) continue;
        ASSERT_TRUE(sameBits(a.*f.inGraph, b.*f.inGraph)) << f.name << " of molecule " << i;
      }
      ASSERT_EQ(v1.smiles(i), v2.smiles(i));
      ASSERT_EQ(v1.sourceLine(i), v2.sourceLine(i));
      MoleculeGraph m = moleculeOf(a);
      enc.compute(m);
      const Graph want = m.toGraph();
      ASSERT_TRUE(b.spatialPos.bitEqual(want.spatialPos)) << "spatial_pos of molecule " << i;
      ASSERT_TRUE(b.inDegree.bitEqual(want.inDegree)) << "in_degree of molecule " << i;
      ASSERT_TRUE(b.edgeInput.bitEqual(want.edgeInput)) << "edge_input of molecule " << i << ", K 20";
      for (int k : {1, 5}) {
        v2.setGraphormerMaxDist(k);
        const Tensor got = v2.get(i).edgeInput;
        ASSERT_EQ(got.dim(2), k);
        ASSERT_TRUE(firstHops(got, want.edgeInput)) << "edge_input of molecule " << i << ", K " << k;
      }
      for (int64_t p = 0; p < b.numNodes * b.numNodes; ++p) pairsWithHops += b.edgeInput.data<int64_t>()[p * 60] >= 0;
    }
    molecules += static_cast<int64_t>(v2.size());
  }
  // 16,674 + 1,128 + 642 + 4,200 + 2,050 + 41,127 + 7,101 records, less the few RDKit rejects.
  EXPECT_GT(molecules, 72800);
  EXPECT_GT(pairsWithHops, 10000000);
}

// (a), (c) Whole files: PCQM4Mv2-style molecules built in format 1 and format 2 with K = 5 read to the same
// Graphs, and a fixed-size loader collates the same batches, bit for bit, from either (what a Graphormer run
// trains on). Format 2 is the smaller by far.
TEST_F(NpzFormat2, Format1AndFormat2FilesGiveTheSameGraphsAndBatches) {
  const Source pcqm = shippedSources()[0];
  const std::string p1 = build(pcqm, 5, 1, dir_ / "v1.npz"), p2 = build(pcqm, 5, 2, dir_ / "v2.npz");
  auto v1 = std::make_shared<NpzDataset>(p1);
  auto v2 = std::make_shared<NpzDataset>(p2);
  ASSERT_EQ(v1->formatVersion(), 1);
  ASSERT_EQ(v2->formatVersion(), 2);
  ASSERT_EQ(v1->size(), v2->size());
  EXPECT_EQ(v1->graphormerMaxDist(), 5);
  EXPECT_EQ(v2->graphormerMaxDist(), 5);
  EXPECT_EQ(v1->metadataJson().find("\"format_version\": 1") != std::string::npos, true);
  EXPECT_EQ(v2->metadataJson().find("\"format_version\": 2") != std::string::npos, true);
  for (size_t i = 0; i < v1->size(); ++i) {
    const Graph a = v1->get(i), b = v2->get(i);
    for (const BatchField& f : batchFields()) ASSERT_TRUE(sameBits(a.*f.inGraph, b.*f.inGraph)) << f.name << " of molecule " << i;
  }
  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::PlannedPack;
  lo.seed = 3;
  lo.prefetch = 0;
  const FixedSizeOptions fixed = FixedSizeOptions::fromDataset(*v1, 33);
  FixedSizeDataLoader l1(v1, fixed, lo), l2(v2, fixed, lo);
  int64_t batches = 0;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    l1.startEpoch(epoch);
    l2.startEpoch(epoch);
    Batch a, b;
    while (l1.next(a)) {
      ASSERT_TRUE(l2.next(b));
      for (const BatchField& f : batchFields()) ASSERT_TRUE(sameBits(a.*f.inBatch, b.*f.inBatch)) << f.name;
      for (const CollatorField& f : collatorFields()) ASSERT_TRUE(sameBits(a.*f.inBatch, b.*f.inBatch)) << f.name;
      ASSERT_TRUE(a.edgeInput.defined());
      ++batches;
    }
    EXPECT_FALSE(l2.next(b));
  }
  EXPECT_GT(batches, 900);
  const double per1 = static_cast<double>(fs::file_size(p1)) / static_cast<double>(v1->size());
  const double per2 = static_cast<double>(fs::file_size(p2)) / static_cast<double>(v2->size());
  ::testing::Test::RecordProperty("bytes_per_molecule_format1", std::to_string(per1));
  ::testing::Test::RecordProperty("bytes_per_molecule_format2", std::to_string(per2));
  EXPECT_LE(per2, 1500.0) << "format 1: " << per1 << " bytes per molecule";
  EXPECT_GT(per1 / per2, 5.0) << per1 << " vs " << per2;
}

// (b) The size: format 2 holds each array in the narrowest dtype, so the file is its payload counted at one
// byte per local index, distance, degree and path node (every PCQM4Mv2-style molecule has < 255 atoms) plus
// the zip's per-array overhead; and K changes nothing but the one number that says it.
TEST_F(NpzFormat2, BytesPerMoleculeAreBoundedByThePayloadAndDoNotGrowWithK) {
  const Source pcqm = shippedSources()[0];
  std::map<int, std::string> files;
  for (int k : {1, 5, 20, 100000}) files[k] = build(pcqm, k, 2, dir_ / ("k" + std::to_string(k) + ".npz"), 4000);
  NpzDataset ds(files[5]);
  ASSERT_EQ(ds.size(), 4000u);
  uint64_t payload = 0;
  for (size_t i = 0; i < ds.size(); ++i) {
    const uint64_t n = static_cast<uint64_t>(ds.numNodes(i)), e = static_cast<uint64_t>(ds.numEdges(i));
    ASSERT_LT(n, 255u);
    // x 9 n, edge_index 2 e, edge_attr 3 e, y + y_mask 5, six int64 offsets and ids, the SMILES, spatial_pos
    // and path_via n^2 each, in_degree n.
    payload += 9 * n + 5 * e + 5 + 6 * 8 + ds.smiles(i).size() + 2 * n * n + n;
  }
  for (const std::string& name : ds.splitNames()) payload += 8 * ds.split(name).size();
  // The last entries of the four offset arrays, K, the metadata JSON; then each array's zip and .npy headers
  // and its alignment padding.
  const uint64_t arrays = ds.file().arrays().size(), overhead = 4 * 8 + 8 + ds.metadataJson().size();
  EXPECT_LE(fs::file_size(files[5]), payload + overhead + arrays * 256) << "payload " << payload;
  EXPECT_EQ(ds.file().get("edge_index").descr, "|u1");
  EXPECT_EQ(ds.file().get("spatial_pos").descr, "|u1");
  EXPECT_EQ(ds.file().get("path_via").descr, "|u1");
  EXPECT_EQ(ds.file().get("in_degree").descr, "|u1");
  EXPECT_FALSE(ds.file().has("edge_input"));
  // The same arrays, byte for byte, for every K; only multi_hop_max_dist and the metadata's K differ.
  for (const auto& [k, path] : files) {
    NpzDataset other(path);
    EXPECT_EQ(other.graphormerMaxDist(), std::min<int64_t>(k, other.maxNodes() - 1));
    for (const auto& [name, a] : ds.file().arrays()) {
      if (name == "metadata" || name == "multi_hop_max_dist") continue;
      const NpzFile::Array& b = other.file().get(name);
      ASSERT_EQ(a.bytes, b.bytes) << name << " at K " << k;
      EXPECT_EQ(std::memcmp(a.data, b.data, a.bytes), 0) << name << " at K " << k;
    }
    const auto size = static_cast<int64_t>(fs::file_size(path)), size5 = static_cast<int64_t>(fs::file_size(files[5]));
    EXPECT_LE(std::abs(size - size5), 8) << "K " << k;
  }
}

// (c) A format-1 file (as every build before format 2 wrote it) reads, at its K and at the K's it covers; a
// format-2 file reads at any K, including past the one it was built with.
TEST_F(NpzFormat2, Format1FilesStillReadAndKIsAReadTimeChoice) {
  std::ofstream(dir_ / "m.csv") << "smiles,y\nCCO,1\nc1ccccc1O,2\n[Na+].[Cl-],3\nC1CC2CCC1C2,4\nCCCCCCCCCC,5\n";
  const Source s{"m", (dir_ / "m.csv").string(), {"y"}};
  NpzDataset v1(build(s, 3, 1, dir_ / "m1.npz")), v2(build(s, 3, 2, dir_ / "m2.npz"));
  ASSERT_EQ(v1.formatVersion(), 1);
  EXPECT_EQ(v1.file().get("edge_index").descr, "<i4");
  EXPECT_EQ(v1.file().get("edge_input").shape[1], 3);
  EXPECT_EQ(v1.graphormerMaxDist(), 3);
  EXPECT_TRUE(v1.coversMaxDist(2));
  EXPECT_FALSE(v1.coversMaxDist(9));  // the decane's 9-hop paths are cut at 3 in format 1
  EXPECT_THROW(v1.widenMaxDist(9), std::invalid_argument);
  EXPECT_TRUE(v2.coversMaxDist(9));
  for (int k : {1, 2, 3, 9, 12}) {
    if (v1.coversMaxDist(k)) v1.setGraphormerMaxDist(k);
    v2.setGraphormerMaxDist(k);
    for (size_t i = 0; i < v2.size(); ++i) {
      MoleculeGraph m = moleculeOf(v1.get(i));
      GraphormerEncodings(k).compute(m);
      const Graph want = m.toGraph();
      EXPECT_TRUE(v2.get(i).edgeInput.bitEqual(want.edgeInput)) << "format 2, molecule " << i << ", K " << k;
      EXPECT_TRUE(v2.get(i).spatialPos.bitEqual(want.spatialPos)) << i;
      if (v1.coversMaxDist(k)) {
        EXPECT_TRUE(v1.get(i).edgeInput.bitEqual(want.edgeInput)) << "format 1, molecule " << i << ", K " << k;
      }
    }
  }
  // widenMaxDist never narrows (as before format 2); setGraphormerMaxDist does.
  v2.setGraphormerMaxDist(3);
  v2.widenMaxDist(2);
  EXPECT_EQ(v2.graphormerMaxDist(), 3);
  v2.widenMaxDist(7);
  EXPECT_EQ(v2.graphormerMaxDist(), 7);
  EXPECT_THROW(v2.setGraphormerMaxDist(0), std::invalid_argument);
}

// The NumPy recipe of docs/datasets.md, run as written: edge_input gathered from a format-2 file equals the
// edge_input a format-1 file stores, for every molecule (ties between equal paths, salts, rings, lone atoms).
TEST_F(NpzFormat2, TheDocumentedNumpyGatherEqualsFormat1) {
  if (std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") != 0) GTEST_SKIP() << "no NumPy";
  std::ifstream doc(std::string(GNN_SOURCE_DIR) + "/docs/datasets.md");
  std::stringstream text;
  text << doc.rdbuf();
  const std::string md = text.str();
  const size_t def = md.find("def edge_input(d, g, k):");
  ASSERT_NE(def, std::string::npos) << "docs/datasets.md lost its NumPy edge_input recipe";
  const size_t begin = md.rfind("```python\n", def), end = md.find("```", def);
  ASSERT_TRUE(begin != std::string::npos && end != std::string::npos);
  const std::string recipe = md.substr(begin + 10, end - begin - 10);

  const Source pcqm = shippedSources()[0];
  std::ofstream(dir_ / "m.csv") << "smiles,y\nC,1\n[Na+].[Cl-],2\nc1ccc2ccccc2c1,3\nC1CC2CC1CC2O,4\nOCC(O)CO.CCN,5\n";
  const Source tricky{"m", (dir_ / "m.csv").string(), {"y"}};
  for (const auto& [s, limit] : {std::pair{pcqm, int64_t{300}}, std::pair{tricky, int64_t{-1}}}) {
    const std::string p1 = build(s, 5, 1, dir_ / "g1.npz", limit), p2 = build(s, 5, 2, dir_ / "g2.npz", limit);
    std::ofstream(dir_ / "check.py") << "import sys\nimport numpy as np\n"
                                     << recipe
                                     << "\nd1, d2 = np.load(sys.argv[1]), np.load(sys.argv[2])\n"
                                        "k = d1['edge_input'].shape[1]\n"
                                        "assert int(d2['multi_hop_max_dist'][0]) == k\n"
                                        "for g in range(len(d2['node_ptr']) - 1):\n"
                                        "    n0, n1 = d1['node_ptr'][g:g + 2]; p0, p1 = d1['pair_ptr'][g:g + 2]\n"
                                        "    want = d1['edge_input'][p0:p1].astype(np.int64).reshape(n1 - n0, n1 - n0, k, 3)\n"
                                        "    got = edge_input(d2, g, k)\n"
                                        "    assert got.dtype == np.int64 and (got == want).all(), g\n"
                                        "    assert (spatial_pos(d2, g) == d1['spatial_pos'][p0:p1].reshape(n1 - n0, n1 - n0)).all(), g\n"
                                        "print('ok', len(d2['node_ptr']) - 1)\n";
    const std::string cmd = "/usr/bin/python3 " + (dir_ / "check.py").string() + " " + p1 + " " + p2;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
}

// NpzWriter's narrow arrays: the narrowest unsigned dtype for the values appended, the sentinel as its top
// value, and a resumed writer forgets the values appended after its snapshot.
TEST(NpzWriterNarrow, ChoosesTheNarrowestDtypeAndMapsTheSentinel) {
  const auto dir = gnn::testing::tempDir("npznarrow");
  const std::string path = (dir / "n.npz").string();
  {
    NpzWriter w(path);
    const int a = w.addNarrowArray("a"), b = w.addNarrowArray("b", {}, 1, -1), c = w.addNarrowArray("c", {}, 1, 510);
    const int d = w.addNarrowArray("d", {2}), e = w.addNarrowArray("e"), f = w.addNarrowArray("f", {}, 2);
    const int32_t av[] = {0, 255}, bv[] = {-1, 254, 3}, cv[] = {510, 255, 0}, dv[] = {1, 2, 3, 70000}, fv[] = {7};
    w.appendNarrow(a, av, 2);
    w.appendNarrow(b, bv, 3);
    w.appendNarrow(c, cv, 3);
    w.appendNarrow(d, dv, 4);
    w.appendNarrow(f, fv, 1, 0);
    w.appendNarrow(f, fv, 1, 1);
    const int32_t bad = -2;
    EXPECT_THROW(w.appendNarrow(b, &bad, 1), std::invalid_argument);
    EXPECT_EQ(w.descr(a), "|u1");  // 255 fits when no sentinel needs it
    EXPECT_EQ(w.descr(b), "|u1");
    EXPECT_EQ(w.descr(c), "<u2");  // 255 is a value here, so the sentinel needs 65535
    EXPECT_EQ(w.descr(d), "<u4");
    EXPECT_EQ(w.descr(e), "|u1");  // empty
    w.finish();
  }
  NpzFile f(path);
  auto bytes = [&](const std::string& name) {
    const NpzFile::Array& a = f.get(name);
    return std::vector<unsigned char>(a.data, a.data + a.bytes);
  };
  EXPECT_EQ(bytes("a"), (std::vector<unsigned char>{0, 255}));
  EXPECT_EQ(bytes("b"), (std::vector<unsigned char>{255, 254, 3}));
  EXPECT_EQ(bytes("c"), (std::vector<unsigned char>{0xff, 0xff, 255, 0, 0, 0}));
  EXPECT_EQ(f.get("d").shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(f.get("d").descr, "<u4");
  EXPECT_EQ(f.get("e").shape, (std::vector<int64_t>{0}));
  EXPECT_EQ(f.get("f").shape, (std::vector<int64_t>{2, 1}));
  // Resumable: a value past the snapshot is cut with its bytes, and the dtype follows what is left.
  const std::string state = (dir / "state").string(), resumed = (dir / "r.npz").string();
  fs::create_directories(state);
  std::vector<int64_t> saved;
  {
    NpzWriter w(resumed, state);
    const int a = w.addNarrowArray("a");
    const int32_t small = 300, big = 70000;
    w.appendNarrow(a, &small, 1);
    saved = w.snapshot();
    w.appendNarrow(a, &big, 1);
    EXPECT_EQ(w.descr(a), "<u4");
  }
  {
    NpzWriter w(resumed, state);
    const int a = w.addNarrowArray("a");
    w.restore(saved);
    EXPECT_EQ(w.descr(a), "<u2");
    w.finish();
  }
  NpzFile r(resumed);
  EXPECT_EQ(r.get("a").descr, "<u2");
  EXPECT_EQ(r.get("a").shape, (std::vector<int64_t>{1}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gnn
