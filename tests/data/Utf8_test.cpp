#include "data/Utf8.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/MoleculeDatasetBuilder.h"
#include "data/NpzDataset.h"

namespace gnn {
namespace {

TEST(Utf8, ValidAndInvalidSequences) {
  size_t at = 99;
  EXPECT_TRUE(isValidUtf8("CC(=O)O"));
  EXPECT_TRUE(isValidUtf8("\xc3\xa9t\xe2\x82\xac\xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_FALSE(isValidUtf8("C1\xff" "CC", &at));
  EXPECT_EQ(at, 2u);
  EXPECT_FALSE(isValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(isValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(isValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(isValidUtf8("\xe2\x82"));          // truncated
  EXPECT_EQ(escapeInvalidUtf8("C1\xff" "CC\xc3\xa9"), "C1\\xffCC\xc3\xa9");
  EXPECT_NO_THROW(nlohmann::json(escapeInvalidUtf8("\xff\xfe")).dump());
}

// The case: one byte that is not UTF-8 rejects that molecule with its line; the build goes on.
TEST(Utf8, ANonUtf8ByteRejectsOneMoleculeAndTheBuildGoesOn) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gnn_utf8_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "u.csv") << "smiles,y\nCCO,1.0\nC1\xff" "CC,2.0\nCCN,3.0\n";
  std::ostringstream jsonl;
  BuildOptions o;
  o.source.path = (dir / "u.csv").string();
  o.source.targetColumns = {"y"};
  o.outPath = (dir / "u.npz").string();
  o.jsonl = &jsonl;
  BuildSummary s = MoleculeDatasetBuilder(o).run();
  EXPECT_EQ(s.accepted, 2);
  ASSERT_EQ(s.rejected, 1);
  EXPECT_EQ(s.rejectedMolecules[0].line, 3);
  EXPECT_NE(s.rejectedMolecules[0].reason.find("not UTF-8 (0xFF at byte 3)"), std::string::npos);
  EXPECT_EQ(s.rejectedMolecules[0].smiles, "C1\\xffCC");
  NpzDataset ds(o.outPath);
  EXPECT_EQ(ds.size(), 2u);
  EXPECT_NE(jsonl.str().find("\"C1\\\\xffCC\""), std::string::npos) << jsonl.str();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gnn
