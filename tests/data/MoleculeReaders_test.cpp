#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <zlib.h>

#include "data/CsvRow.h"
#include "data/MoleculeCsvReader.h"
#include "data/MoleculeTestUtil.h"
#include "data/Pcqm4mv2Reader.h"
#include "data/SdfReader.h"
#include "data/SmiReader.h"
#include "data/XyzReader.h"

using namespace gnn;

namespace {
std::string write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p.string();
}
}  // namespace

TEST(CsvRow, QuotedFields) {
  CsvRow row;
  ASSERT_TRUE(row.parse(R"(a,"b,c","say ""hi""",,d)"));
  ASSERT_EQ(row.size(), 5u);
  EXPECT_EQ(row[1], "b,c");
  EXPECT_EQ(row[2], "say \"hi\"");
  EXPECT_EQ(row[3], "");
  EXPECT_FALSE(row.parse("a,\"open"));
}

TEST(MoleculeCsvReader, ColumnsByNameQuotesAndMissingLabels) {
  const auto dir = gnn::testing::tempDir("csv");
  const std::string f = write(dir / "m.csv",
                              "name,SMILES,t1,t2\n"
                              "\"ethanol, dry\",CCO,1.5,\n"
                              "water,O,nan,2\n"
                              "\n"
                              "\"multi\nline\",C,3,4\n"
                              "bad,CC,x,1\n"
                              "huge,CCC,1e39,1\n");
  MoleculeCsvReader r(f, "smiles", {"t1", "t2"});
  MoleculeRecord m;
  ASSERT_TRUE(r.next(m));
  EXPECT_EQ(m.smiles, "CCO");
  EXPECT_EQ(m.line, 2);
  EXPECT_FLOAT_EQ(m.y[0], 1.5f);
  EXPECT_TRUE(std::isnan(m.y[1]));
  EXPECT_EQ(m.yMask, (std::vector<uint8_t>{1, 0}));
  ASSERT_TRUE(r.next(m));
  EXPECT_EQ(m.yMask, (std::vector<uint8_t>{0, 1}));
  ASSERT_TRUE(r.next(m));
  EXPECT_EQ(m.smiles, "C");
  EXPECT_EQ(m.line, 5);
  ASSERT_TRUE(r.next(m));
  EXPECT_NE(m.error.find("target 't1' is not a finite float32 number: 'x'"), std::string::npos) << m.error;
  ASSERT_TRUE(r.next(m));  // 1e39 overflows float32: an error, not an infinite label
  EXPECT_NE(m.error.find("not a finite float32 number: '1e39'"), std::string::npos) << m.error;
  EXPECT_FALSE(r.next(m));
  EXPECT_THROW(MoleculeCsvReader(f, "smiles", {"nope"}), InputError);
}

TEST(MoleculeCsvReader, MoleculeNetFiles) {
  // ESOL: SMILES with a trailing space, target by its long name; FreeSolv has quoted IUPAC names.
  MoleculeCsvReader esol(gnn::testing::moleculeData("moleculenet/delaney-processed.csv.gz"), "smiles",
                         {"measured log solubility in mols per litre"});
  MoleculeRecord m;
  int64_t n = 0;
  while (esol.next(m)) {
    ASSERT_TRUE(m.error.empty()) << m.line << ": " << m.error;
    ASSERT_EQ(m.smiles.back() == ' ', false);
    ++n;
  }
  EXPECT_EQ(n, 1128);
  MoleculeCsvReader bbbp(gnn::testing::moleculeData("moleculenet/BBBP.csv.gz"), "smiles", {"p_np"});
  n = 0;
  while (bbbp.next(m)) ++n;
  EXPECT_EQ(n, 2050);
}

TEST(Pcqm4mv2Reader, RawLayoutAndSplits) {
  const std::string root = gnn::testing::moleculeData("pcqm4mv2_style");
  Pcqm4mv2Reader r(root);
  MoleculeRecord m;
  int64_t n = 0, unlabelled = 0;
  while (r.next(m)) {
    EXPECT_EQ(m.index, n);
    unlabelled += m.yMask[0] == 0;
    ++n;
  }
  EXPECT_EQ(n, 16674);
  EXPECT_EQ(unlabelled, 1668);  // the test split has empty gaps
  auto splits = Pcqm4mv2Reader::readSplits(root);
  EXPECT_EQ(splits["train"].size(), 13339u);
  EXPECT_EQ(splits["valid"].size(), 1667u);
  EXPECT_EQ(splits["test"].size(), 1668u);
}

TEST(Pcqm4mv2Reader, PointsAtTheConversionOfOgbsSplitDict) {
  const auto root = std::filesystem::temp_directory_path() / ("gnn_pcqm_hint_" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "raw");
  std::filesystem::create_directories(root / "split_later");
  write(root / "raw" / "data.csv", "idx,smiles,homolumogap\n0,CCO,1.5\n");
  EXPECT_EQ(Pcqm4mv2Reader::splitHint(root.string()), "");  // no split_dict.pt: nothing to say
  write(root / "split_dict.pt", "not read");
  std::string hint = Pcqm4mv2Reader::splitHint(root.string());
  EXPECT_NE(hint.find("split_dict.pt"), std::string::npos) << hint;
  EXPECT_NE(hint.find("torch.load"), std::string::npos) << hint;
  EXPECT_EQ(Pcqm4mv2Reader::splitHint((root / "raw" / "data.csv").string()), hint);  // the file names its root
  std::filesystem::rename(root / "split_later", root / "split");
  write(root / "split" / "train.csv", "0\n");
  EXPECT_EQ(Pcqm4mv2Reader::splitHint(root.string()), "");  // converted: the CSV split is used
  std::filesystem::remove_all(root);
}

TEST(SmiReader, NamesCommentsAndBlankLines) {
  const auto dir = gnn::testing::tempDir("smi");
  SmiReader r(write(dir / "a.smi", "# header\nCCO ethanol\n\n  c1ccccc1\tbenzene ring\nO\n"));
  MoleculeRecord m;
  ASSERT_TRUE(r.next(m));
  EXPECT_EQ(m.smiles, "CCO");
  EXPECT_EQ(m.name, "ethanol");
  EXPECT_EQ(m.line, 2);
  ASSERT_TRUE(r.next(m));
  EXPECT_EQ(m.smiles, "c1ccccc1");
  EXPECT_EQ(m.name, "benzene ring");
  ASSERT_TRUE(r.next(m));
  EXPECT_EQ(m.line, 5);
  EXPECT_FALSE(r.next(m));
}

TEST(SdfReader, BlocksAndProperties) {
  const std::string block =
      "water\n  test\n\n  3  2  0  0  0  0  0  0  0  0999 V2000\n"
      "    0.0000    0.0000    0.1173 O   0  0  0  0  0  0  0  0  0  0  0  0\n"
      "    0.0000    0.7572   -0.4692 H   0  0  0  0  0  0  0  0  0  0  0  0\n"
      "    0.0000   -0.7572   -0.4692 H   0  0  0  0  0  0  0  0  0  0  0  0\n"
      "  1  2  1  0\n  1  3  1  0\nM  END\n";
  const auto dir = gnn::testing::tempDir("sdf");
  SdfReader r(write(dir / "w.sdf", block + "> <energy>\n-76.4\n\n> <other>\nabc\n\n$$$$\n" + block + "$$$$\n"),
              {"energy"});
  MoleculeRecord m;
  ASSERT_TRUE(r.next(m));
  EXPECT_EQ(m.name, "water");
  EXPECT_EQ(m.line, 1);
  EXPECT_FLOAT_EQ(m.y[0], -76.4f);
  EXPECT_EQ(m.yMask[0], 1);
  EXPECT_NE(m.molBlock.find("M  END"), std::string::npos);
  ASSERT_TRUE(r.next(m));
  EXPECT_EQ(m.yMask[0], 0);  // property absent
  EXPECT_FALSE(r.next(m));
}

TEST(XyzReader, Qm7) {
  XyzReader r(gnn::testing::moleculeData("qm7_3d/qm7.xyz.gz"), {"e_pbe0_atomization_kcal_mol"});
  MoleculeRecord m;
  int64_t n = 0, lines = 0;
  while (r.next(m)) {
    ASSERT_TRUE(m.error.empty()) << m.error;
    ASSERT_EQ(m.pos.size(), 3 * m.atomicNumbers.size());
    ASSERT_EQ(m.yMask[0], 1);
    EXPECT_LT(m.y[0], 0.f);
    lines += 2 + static_cast<int64_t>(m.atomicNumbers.size());
    ++n;
  }
  EXPECT_EQ(n, 7101);
  EXPECT_EQ(lines, 123802);
}

TEST(XyzReader, NonFiniteCoordinatesRejectTheMoleculeNotTheFile) {
  const auto dir = gnn::testing::tempDir("xyz_nan");
  const std::string path = (dir / "nan.xyz").string();
  std::ofstream(path) << "2\nE=1\nC nan 0 0\nO 1.2 0 0\n2\nE=2\nC 0 0 0\nO 1e39 0 0\n2\nE=3\nC 0 0 0\nO 1.2 0 0\n";
  XyzReader r(path, {"E"});
  MoleculeRecord m;
  ASSERT_TRUE(r.next(m));
  EXPECT_NE(m.error.find("coordinate 'nan' on line 3"), std::string::npos) << m.error;
  ASSERT_TRUE(r.next(m));
  EXPECT_NE(m.error.find("coordinate '1e39' on line 8"), std::string::npos) << m.error;  // inf as float32
  ASSERT_TRUE(r.next(m));
  EXPECT_TRUE(m.error.empty()) << m.error;
  EXPECT_FALSE(r.next(m));
}

TEST(GzInput, TruncatedGzipNamesTheFile) {
  const auto dir = gnn::testing::tempDir("trunc");
  const std::string src = gnn::testing::moleculeData("moleculenet/HIV.csv.gz");
  std::ifstream in(src, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = (dir / "HIV_cut.csv.gz").string();
  std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  try {
    MoleculeCsvReader r(cut, "smiles", {});
    MoleculeRecord m;
    while (r.next(m)) {
    }
    FAIL() << "a truncated .gz must throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("HIV_cut.csv.gz"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

TEST(MoleculeSource, SplitNames) {
  std::string s;
  for (const char* v : {"train", "TRAIN", " Train "}) {
    ASSERT_TRUE(parseSplitName(v, s)) << v;
    EXPECT_EQ(s, "train");
  }
  for (const char* v : {"valid", "val", "Validation", "VAL"}) {
    ASSERT_TRUE(parseSplitName(v, s)) << v;
    EXPECT_EQ(s, "valid");
  }
  ASSERT_TRUE(parseSplitName("Test\r", s));
  EXPECT_EQ(s, "test");
  for (const char* v : {"", "dev", "training", "tests", "0"}) EXPECT_FALSE(parseSplitName(v, s)) << v;
}
