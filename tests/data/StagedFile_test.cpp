#include "data/StagedFile.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "data/MoleculeTestUtil.h"

using namespace gnn;

namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST(StagedFile, AppearsOnlyOnCommit) {
  const auto dir = gnn::testing::tempDir("staged");
  const auto path = dir / "out.jsonl";
  std::ofstream(path) << "old\n";
  {
    StagedFile out(path.string());  // the header's example
    out.stream() << "{...}\n";
    EXPECT_EQ(slurp(path), "old\n");  // the destination is untouched until commit
    EXPECT_TRUE(std::filesystem::exists(out.tempPath()));
    out.commit();
    EXPECT_FALSE(std::filesystem::exists(out.tempPath()));
    EXPECT_THROW(out.commit(), std::logic_error);
  }
  EXPECT_EQ(slurp(path), "{...}\n");
  std::filesystem::remove_all(dir);
}

TEST(StagedFile, RemovedWhenNotCommitted) {
  const auto dir = gnn::testing::tempDir("staged_drop");
  {
    StagedFile out((dir / "out.jsonl").string());
    out.stream() << "partial";
  }  // an error or an interrupt unwinds past it
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  EXPECT_THROW(StagedFile((dir / "no" / "such" / "folder.jsonl").string()), std::runtime_error);
  std::filesystem::remove_all(dir);
}
