#include "data/MoleculeDatasetBuilder.h"

#include <GraphMol/DistGeomHelpers/Embedder.h>
#include <GraphMol/FileParsers/FileParsers.h>
#include <GraphMol/GraphMol.h>
#include <GraphMol/MolOps.h>
#include <GraphMol/SmilesParse/SmilesParse.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "data/GzLineReader.h"
#include "data/MoleculeTestUtil.h"
#include "data/NpzDataset.h"

using namespace gnn;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
}  // namespace

TEST(MoleculeDatasetBuilder, SameBytesForAnyThreadCount) {
  const auto dir = gnn::testing::tempDir("determinism");
  std::string files[2], jsonl[2];
  for (int t = 1; t <= 2; ++t) {
    BuildOptions o;
    o.source.path = gnn::testing::moleculeData("moleculenet/BBBP.csv.gz");
    o.source.targetColumns = {"p_np"};
    o.threads = t;
    o.chunkSize = 300;  // several chunks
    o.graphormerMaxDist = 3;
    o.outPath = (dir / ("bbbp" + std::to_string(t) + ".npz")).string();
    std::ostringstream js;
    o.jsonl = &js;
    BuildSummary s = MoleculeDatasetBuilder(o).run();
    EXPECT_EQ(s.accepted + s.rejected, 2050);
    EXPECT_EQ(s.rejected, 11);  // BBBP's known valence errors (../shared/data/README.md)
    files[t - 1] = slurp(o.outPath);
    jsonl[t - 1] = js.str();
  }
  EXPECT_FALSE(files[0].empty());
  EXPECT_TRUE(files[0] == files[1]) << "thread count changed the .npz bytes";
  EXPECT_TRUE(jsonl[0] == jsonl[1]);
  std::filesystem::remove_all(dir);
}

TEST(MoleculeDatasetBuilder, InvalidMoleculesAreReportedAndTheBuildGoesOn) {
  const auto dir = gnn::testing::tempDir("invalid");
  const std::string smi = (dir / "mixed.smi").string();
  std::ofstream(smi) << "CCO ethanol\nC1CC unclosed\nFBr(F)(F)(F)F brf5\nnot_a_smiles\nc1ccccc1 benzene\n";
  BuildOptions o;
  o.source.path = smi;
  o.outPath = (dir / "out.npz").string();
  std::ostringstream js;
  o.jsonl = &js;
  BuildSummary s = MoleculeDatasetBuilder(o).run();
  EXPECT_EQ(s.accepted, 2);
  ASSERT_EQ(s.rejected, 3);
  EXPECT_EQ(s.rejectedMolecules[0].line, 2);
  EXPECT_NE(s.rejectedMolecules[0].reason.find("unclosed ring"), std::string::npos) << s.rejectedMolecules[0].reason;
  EXPECT_EQ(s.rejectedMolecules[1].line, 3);
  EXPECT_NE(s.rejectedMolecules[1].reason.find("valence"), std::string::npos);
  EXPECT_EQ(s.rejectedMolecules[2].line, 4);
  EXPECT_TRUE(s.written);
  // --jsonl: one object per input molecule, in order, errors included.
  std::istringstream lines(js.str());
  std::string line;
  std::vector<nlohmann::json> objs;
  while (std::getline(lines, line)) objs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(objs.size(), 5u);
  EXPECT_EQ(objs[1]["line"], 2);
  EXPECT_TRUE(objs[1].contains("error"));
  EXPECT_EQ(objs[4]["x"].size(), 6u);
  // The dataset lists the rejected molecules in its metadata.
  NpzDataset ds(o.outPath);
  EXPECT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds.sourceLine(1), 5);
  auto meta = nlohmann::json::parse(ds.metadataJson());
  EXPECT_EQ(meta["num_rejected"], 3);
  EXPECT_EQ(meta["rejected"][1]["line"], 3);
  // Strict: the same input fails and leaves no dataset.
  o.strict = true;
  o.jsonl = nullptr;
  o.outPath = (dir / "strict.npz").string();
  s = MoleculeDatasetBuilder(o).run();
  EXPECT_FALSE(s.written);
  EXPECT_FALSE(std::filesystem::exists(o.outPath));
  std::filesystem::remove_all(dir);
}

TEST(MoleculeDatasetBuilder, TruncatedGzipLeavesNoDataset) {
  const auto dir = gnn::testing::tempDir("truncbuild");
  const std::string bytes = slurp(gnn::testing::moleculeData("moleculenet/HIV.csv.gz"));
  const std::string cut = (dir / "HIV_cut.csv.gz").string();
  std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() * 3 / 4));
  BuildOptions o;
  o.source.path = cut;
  o.outPath = (dir / "hiv.npz").string();
  o.chunkSize = 1000;
  try {
    MoleculeDatasetBuilder(o).run();
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("HIV_cut.csv.gz"), std::string::npos);
  }
  // Nothing but the input is left in the folder: no .npz, no temp files.
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  std::filesystem::remove_all(dir);
}

TEST(MoleculeDatasetBuilder, XyzKeepsCoordinates) {
  const auto dir = gnn::testing::tempDir("xyz");
  BuildOptions o;
  o.source.path = gnn::testing::moleculeData("qm7_3d/qm7.xyz.gz");
  o.source.targetColumns = {"e_pbe0_atomization_kcal_mol"};
  o.limit = 50;
  o.outPath = (dir / "qm7.npz").string();
  BuildSummary s = MoleculeDatasetBuilder(o).run();
  EXPECT_EQ(s.accepted, 50);
  NpzDataset ds(o.outPath);
  Graph g = ds.get(0);
  g.validate();
  EXPECT_TRUE(g.pos.defined());
  EXPECT_EQ(g.z.dim(0), g.numNodes);
  EXPECT_EQ(g.numEdges(), 0);
  std::filesystem::remove_all(dir);
}

TEST(MoleculeDatasetBuilder, ConformersAreDeterministic) {
  const auto dir = gnn::testing::tempDir("conf");
  const std::string smi = (dir / "c.smi").string();
  std::ofstream(smi) << "CCO\nc1ccccc1O\nCC(=O)Nc1ccc(O)cc1\n";
  std::string bytes[2];
  for (int t = 1; t <= 2; ++t) {
    BuildOptions o;
    o.source.path = smi;
    o.conformers = true;
    o.threads = t;
    o.outPath = (dir / ("c" + std::to_string(t) + ".npz")).string();
    BuildSummary s = MoleculeDatasetBuilder(o).run();
    EXPECT_EQ(s.accepted, 3);
    bytes[t - 1] = slurp(o.outPath);
  }
  EXPECT_TRUE(bytes[0] == bytes[1]);
  NpzDataset ds((dir / "c1.npz").string());
  Graph g = ds.get(0);
  ASSERT_TRUE(g.pos.defined());
  // C-C bond length of ethanol from ETKDG: about 1.5 Angstrom.
  const float* p = g.pos.data<float>();
  const float d = std::sqrt((p[0] - p[3]) * (p[0] - p[3]) + (p[1] - p[4]) * (p[1] - p[4]) + (p[2] - p[5]) * (p[2] - p[5]));
  EXPECT_NEAR(d, 1.52, 0.1);
  std::filesystem::remove_all(dir);
}

TEST(MoleculeDatasetBuilder, SdfCoordinatesAndProperties) {
  // An SDF written by RDKit itself from an ETKDG conformer: the build must keep the heavy atoms' coordinates
  // (hydrogens are removed, as for SMILES) and read the property as the target.
  const auto dir = gnn::testing::tempDir("sdfbuild");
  std::unique_ptr<RDKit::RWMol> mol(RDKit::SmilesToMol("CCO"));
  RDKit::MolOps::addHs(*mol);
  RDKit::DGeomHelpers::EmbedParameters params = RDKit::DGeomHelpers::ETKDGv3;
  params.randomSeed = 7;
  ASSERT_GE(RDKit::DGeomHelpers::EmbedMolecule(*mol, params), 0);
  const std::string sdf = (dir / "e.sdf").string();
  {
    std::ofstream out(sdf);
    out << RDKit::MolToMolBlock(*mol) << "> <energy>\n-1.25\n\n$$$$\n";
    out << "broken\n  x\n\n  1  0  0  0  0  0  0  0  0  0999 V2000\n"
           "    0.0000    0.0000    0.0000 Xx  0  0\nM  END\n$$$$\n";
  }
  BuildOptions o;
  o.source.path = sdf;
  o.source.targetColumns = {"energy"};
  o.outPath = (dir / "e.npz").string();
  BuildSummary s = MoleculeDatasetBuilder(o).run();
  EXPECT_EQ(s.accepted, 1);
  EXPECT_EQ(s.rejected, 1);  // the unknown element is reported, not fatal
  NpzDataset ds(o.outPath);
  Graph g = ds.get(0);
  ASSERT_EQ(g.numNodes, 3);
  ASSERT_TRUE(g.pos.defined());
  const RDKit::Conformer& conf = mol->getConformer();
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(g.pos.data<float>()[3 * i + c], conf.getAtomPos(i)[c], 1e-3);
  EXPECT_FLOAT_EQ(g.y.data<float>()[0], -1.25f);
  EXPECT_EQ(g.z.data<int64_t>()[2], 8);
  std::filesystem::remove_all(dir);
}
