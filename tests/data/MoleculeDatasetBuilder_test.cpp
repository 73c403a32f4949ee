#include "data/MoleculeDatasetBuilder.h"

#include <GraphMol/DistGeomHelpers/Embedder.h>
#include <GraphMol/FileParsers/FileParsers.h>
#include <GraphMol/GraphMol.h>
#include <GraphMol/MolOps.h>
#include <GraphMol/SmilesParse/SmilesParse.h>
#include <GraphMol/SmilesParse/SmilesWrite.h>
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "data/DatasetSplit.h"
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

TEST(MoleculeDatasetBuilder, SplitColumnBecomesTheDatasetsSplit) {
  const auto dir = gnn::testing::tempDir("splitcol");
  const std::string csv = (dir / "m.csv").string();
  std::ofstream(csv) << "smiles,y,Set\n"
                        "CCO,1,train\n"         // line 2 -> position 0
                        "c1ccccc1,2, VAL \n"    // 1
                        "CCN,3,Validation\n"    // 2
                        "CC(=O)O,4,TEST\n"      // 3
                        "CCC,5,holdout\n"       // rejected
                        "CCCC,6,\n"             // rejected
                        "C1CC,7,train\n"        // rejected: RDKit
                        "c1ccncc1,8,Train\n"    // 4
                        "CCCl,9,valid\n";       // 5
  BuildOptions o;
  o.source.path = csv;
  o.source.targetColumns = {"y"};
  o.source.splitColumn = "set";  // matched case-insensitively, like the other columns
  o.outPath = (dir / "m.npz").string();
  BuildSummary s = MoleculeDatasetBuilder(o).run();
  EXPECT_EQ(s.accepted, 6);
  ASSERT_EQ(s.rejected, 3);
  EXPECT_EQ(s.rejectedMolecules[0].line, 6);
  EXPECT_NE(s.rejectedMolecules[0].reason.find("'holdout', not train, valid"), std::string::npos)
      << s.rejectedMolecules[0].reason;
  EXPECT_EQ(s.rejectedMolecules[1].line, 7);
  EXPECT_EQ(s.rejectedMolecules[2].line, 8);
  NpzDataset ds(o.outPath);
  EXPECT_EQ(ds.split("train"), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(ds.split("valid"), (std::vector<int64_t>{1, 2, 5}));
  EXPECT_EQ(ds.split("test"), (std::vector<int64_t>{3}));
  DatasetSplit stored = storedSplit(ds);
  EXPECT_EQ(stored.kind, "column");
  EXPECT_EQ(stored.column, "set");
  EXPECT_EQ(stored.valid, (std::vector<int64_t>{1, 2, 5}));
  EXPECT_EQ(stored.toJson()["column"], "set");
  EXPECT_EQ(nlohmann::json::parse(ds.metadataJson())["options"]["split_column"], "set");
  // A column the header lacks, or a split column for a format without columns, stops the build.
  o.source.splitColumn = "fold";
  EXPECT_THROW(MoleculeDatasetBuilder(o).run(), InputError);
  std::ofstream(dir / "m.smi") << "CCO\n";
  o.source.path = (dir / "m.smi").string();
  o.source.splitColumn = "set";
  try {
    MoleculeDatasetBuilder(o).run();
    ADD_FAILURE() << "a split column for .smi input was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("applies to CSV input"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(MoleculeDatasetBuilder, PcqmSplitIsTheSourceSplit) {
  const auto dir = gnn::testing::tempDir("pcqmsplit");
  BuildOptions o;
  o.source.path = gnn::testing::moleculeData("pcqm4mv2_style");
  o.outPath = (dir / "p.npz").string();
  o.threads = 2;
  MoleculeDatasetBuilder(o).run();
  NpzDataset ds(o.outPath);
  EXPECT_EQ(ds.targetNames(), (std::vector<std::string>{"homolumogap"}));
  DatasetSplit s = storedSplit(ds);
  EXPECT_EQ(s.kind, "source");
  EXPECT_FALSE(s.train.empty());
  EXPECT_FALSE(s.valid.empty());
  std::filesystem::remove_all(dir);
}

TEST(MoleculeDatasetBuilder, SmilesAndTargetNamesAreStored) {
  const auto dir = gnn::testing::tempDir("smiles");
  // Stereo marks, ring closures, charges and brackets must come back byte for byte.
  const std::vector<std::string> smiles{"Cl[C@@H](/C=C/C)Br", "F/C=C\\F", "[NH4+].[O-]C(=O)C", "C[C@H](N)C(=O)O",
                                        "c1ccc2c(c1)[nH]c1ccccc12"};
  const std::string csv = (dir / "m.csv").string();
  {
    std::ofstream out(csv);
    out << "SMILES,logp,\"weight, g/mol\"\n";
    for (size_t i = 0; i < smiles.size(); ++i) out << "\"" << smiles[i] << "\"," << i << "," << 10 * i << "\n";
  }
  BuildOptions o;
  o.source.path = csv;
  o.source.targetColumns = {"logp", "weight, g/mol"};
  o.outPath = (dir / "m.npz").string();
  MoleculeDatasetBuilder(o).run();
  NpzDataset ds(o.outPath);
  ASSERT_EQ(ds.size(), smiles.size());
  ASSERT_TRUE(ds.hasSmiles());
  for (size_t i = 0; i < smiles.size(); ++i) EXPECT_EQ(ds.smiles(i), smiles[i]);
  EXPECT_EQ(ds.targetNames(), (std::vector<std::string>{"logp", "weight, g/mol"}));
  if (std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") == 0) {
    // docs/datasets.md's recipe, exactly.
    std::ofstream(dir / "check.py") << "import json, sys, numpy as np\n"
                                       "d = np.load(sys.argv[1])\n"
                                       "p = d['smiles_ptr']\n"
                                       "print(json.dumps([bytes(d['smiles'][p[i]:p[i + 1]]).decode() "
                                       "for i in range(len(p) - 1)]))\n";
    const std::string cmd =
        "/usr/bin/python3 " + (dir / "check.py").string() + " " + o.outPath + " > " + (dir / "out.json").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::ifstream in(dir / "out.json");
    EXPECT_EQ(nlohmann::json::parse(in).get<std::vector<std::string>>(), smiles);
  }
  // SDF records: RDKit's canonical SMILES of the molecule read; XYZ records: none.
  std::unique_ptr<RDKit::RWMol> mol(RDKit::SmilesToMol("OCC"));
  std::ofstream(dir / "e.sdf") << RDKit::MolToMolBlock(*mol) << "$$$$\n";
  o.source.path = (dir / "e.sdf").string();
  o.source.targetColumns = {};
  o.outPath = (dir / "e.npz").string();
  MoleculeDatasetBuilder(o).run();
  EXPECT_EQ(NpzDataset(o.outPath).smiles(0), "CCO");
  o.source.path = gnn::testing::moleculeData("qm7_3d/qm7.xyz.gz");
  o.limit = 2;
  o.outPath = (dir / "q.npz").string();
  MoleculeDatasetBuilder(o).run();
  NpzDataset q(o.outPath);
  EXPECT_TRUE(q.hasSmiles());
  EXPECT_EQ(q.smiles(1), "");
  std::filesystem::remove_all(dir);
}

TEST(MoleculeDatasetBuilder, DatasetWithoutTargetsHasOneEmptyRowPerGraph) {
  const auto dir = gnn::testing::tempDir("notargets");
  std::ofstream(dir / "m.smi") << "CCO\nc1ccccc1\nCCN\n";
  BuildOptions o;
  o.source.path = (dir / "m.smi").string();
  o.outPath = (dir / "m.npz").string();
  MoleculeDatasetBuilder(o).run();
  NpzDataset ds(o.outPath);
  EXPECT_EQ(ds.numTargets(), 0);
  EXPECT_TRUE(ds.targetNames().empty());
  EXPECT_EQ(ds.file().get("y").shape, (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(ds.file().get("y_mask").shape, (std::vector<int64_t>{3, 0}));
  Graph g = ds.get(2);
  EXPECT_EQ(g.y.dim(0), 0);
  if (std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") == 0) {
    const std::string cmd = "/usr/bin/python3 -c \"import numpy as np; d = np.load('" + o.outPath +
                            "'); assert d['y'].shape == (3, 0) and d['y_mask'].shape == (3, 0), d['y'].shape\"";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  std::filesystem::remove_all(dir);
}

TEST(MoleculeDatasetBuilder, JsonlLinesCarryTheTargets) {
  const auto dir = gnn::testing::tempDir("jsonly");
  std::ofstream(dir / "m.csv") << "smiles,a,b\nCCO,0.1,\nC1CC,2,3\nCCN,-1.5e3,NaN\nCCC,x,1\n";
  BuildOptions o;
  o.source.path = (dir / "m.csv").string();
  o.source.targetColumns = {"a", "b"};
  std::ostringstream js;
  o.jsonl = &js;
  MoleculeDatasetBuilder(o).run();
  std::istringstream lines(js.str());
  std::string line;
  std::vector<nlohmann::json> objs;
  while (std::getline(lines, line)) objs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(objs.size(), 4u);
  // float32 values in their shortest form (0.1f prints as 0.1), null when missing.
  EXPECT_NE(js.str().find("\"y\":[0.1,null]"), std::string::npos) << js.str();
  EXPECT_EQ(objs[0]["y"][0].get<double>(), 0.1);
  EXPECT_TRUE(objs[0]["y"][1].is_null());
  EXPECT_TRUE(objs[1].contains("error"));  // rejected by RDKit, its labels still listed
  EXPECT_EQ(objs[1]["y"], nlohmann::json::parse("[2, 3]"));
  EXPECT_EQ(objs[2]["y"][0].get<double>(), -1500);
  EXPECT_TRUE(objs[2]["y"][1].is_null());
  EXPECT_TRUE(objs[3].contains("error"));  // a label that is not a number
  EXPECT_TRUE(objs[3]["y"][0].is_null());
  std::filesystem::remove_all(dir);
}

TEST(MoleculeDatasetBuilder, AStopRequestThrowsAndLeavesNoFile) {
  const auto dir = gnn::testing::tempDir("stop");
  std::atomic<int> stop{0};  // the header's example
  BuildOptions o;
  o.source.path = gnn::testing::moleculeData("moleculenet/BBBP.csv.gz");
  o.outPath = (dir / "bbbp.npz").string();
  o.threads = 2;
  o.stopRequested = [&stop] { return stop.load(); };
  o.chunkSize = 500;
  int chunks = 0;
  o.progress = [&](const BuildProgress&) {
    if (++chunks == 2) {
      EXPECT_FALSE(std::filesystem::is_empty(dir));  // the writer's temp files, which must go
      stop = 15;                                      // as a SIGTERM handler would
    }
  };
  try {
    MoleculeDatasetBuilder(o).run();
    ADD_FAILURE() << "the build did not stop";
  } catch (const BuildInterrupted& e) {
    EXPECT_EQ(e.code(), 15);
  }
  EXPECT_EQ(chunks, 2);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  // Stopped while the .npz is assembled (NpzWriter::finish polls): the request comes once the zip's temp
  // file exists, i.e. after every check of the reading and featurising loops has passed.
  const std::string zipTemp = o.outPath + ".tmp-" + std::to_string(::getpid());
  bool sawZip = false;
  o.progress = nullptr;
  o.stopRequested = [&] {
    sawZip = sawZip || std::filesystem::exists(zipTemp);
    return sawZip ? 2 : 0;
  };
  EXPECT_THROW(MoleculeDatasetBuilder(o).run(), BuildInterrupted);
  EXPECT_TRUE(sawZip);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

// A resumable build stopped after some chunks (here by its stop request, as SIGINT does; the kill -9 case is
// tests/examples/build_dataset_resume.sh) goes on from its last finished chunk and writes the very bytes of a
// build never stopped: rejected molecules, a split column, PCQM4Mv2's split ids and Graphormer encodings
// (whose K is only fixed at the end) included.
TEST(MoleculeDatasetBuilder, ResumedBuildWritesTheSameBytes) {
  const auto dir = gnn::testing::tempDir("resume");
  // A split column and some rejected molecules among 1,200 records.
  std::ostringstream csv;
  csv << "smiles,y,split\n";
  const char* smiles[] = {"CCO", "c1ccccc1O", "C1CC", "CC(=O)Nc1ccccc1", "CCN(CC)CC", "OC(=O)C(N)Cc1ccccc1", "C"};
  const char* sets[] = {"train", "valid", "test", "train", "holdout"};
  for (int i = 0; i < 1200; ++i) csv << smiles[i % 7] << "," << i << "," << sets[i % 5] << "\n";
  std::ofstream(dir / "m.csv") << csv.str();
  struct Input {
    std::string path, splitColumn;
    std::vector<std::string> targets;
  };
  const std::vector<Input> inputs = {{(dir / "m.csv").string(), "split", {"y"}},
                                     {gnn::testing::moleculeData("pcqm4mv2_style"), "", {}}};
  for (const Input& in : inputs) {
    BuildOptions o;
    o.source.path = in.path;
    o.source.splitColumn = in.splitColumn;
    o.source.targetColumns = in.targets;
    o.graphormerMaxDist = 20;
    o.limit = 1000;
    o.chunkSize = 100;
    o.threads = 2;
    o.outPath = (dir / "clean.npz").string();
    const BuildSummary clean = MoleculeDatasetBuilder(o).run();
    ASSERT_GT(clean.accepted, 300);

    o.outPath = (dir / "resumed.npz").string();
    o.resumeDir = o.outPath + ".resume";
    for (int stopAfter : {2, 3}) {  // stopped twice, after 2 and then 3 more chunks
      int chunks = 0;
      o.progress = [&](const BuildProgress&) { ++chunks; };
      o.stopRequested = [&] { return chunks >= stopAfter ? 2 : 0; };
      EXPECT_THROW(MoleculeDatasetBuilder(o).run(), BuildInterrupted) << in.path;
      EXPECT_FALSE(std::filesystem::exists(o.outPath));
      EXPECT_TRUE(std::filesystem::exists(o.resumeDir + "/state.json"));
    }
    o.progress = nullptr;
    o.stopRequested = nullptr;
    // The same state with other options is refused, not mixed in.
    BuildOptions other = o;
    other.graphormerMaxDist = 4;
    EXPECT_THROW(MoleculeDatasetBuilder(other).run(), std::runtime_error);
    const BuildSummary resumed = MoleculeDatasetBuilder(o).run();
    EXPECT_EQ(resumed.resumedRecords, 500) << in.path;
    EXPECT_EQ(resumed.accepted, clean.accepted);
    EXPECT_EQ(resumed.rejected, clean.rejected);
    EXPECT_TRUE(slurp((dir / "clean.npz").string()) == slurp(o.outPath)) << in.path << ": resumed bytes differ";
    EXPECT_FALSE(std::filesystem::exists(o.resumeDir));
    std::filesystem::remove(o.outPath);
  }
  std::filesystem::remove_all(dir);
}
