// Bounded work per input: a count in a file is a claim, never a size to allocate before the data is there.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "data/MoleculeRecord.h"
#include "data/XyzReader.h"
#include "gnn/Check.h"

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

#include "data/MoleculeDatasetBuilder.h"

namespace gnn {
namespace {

// The stalls: very long SMILES are rejected before RDKit parses them, and too many atoms after; the
// build goes on and takes no time.
TEST(BoundedWork, LongSmilesAndLargeMoleculesAreRejectedNotParsedForMinutes) {
  std::ostringstream csv;
  csv << "smiles,y\n" << std::string(400000, 'C') << ",1\nCCO,2\n" << std::string(600, 'C') << ",3\n";
  const std::string path = writeTemp("long.csv", csv.str());
  BuildOptions o;
  o.source.path = path;
  o.source.targetColumns = {"y"};
  const auto t0 = std::chrono::steady_clock::now();
  BuildSummary s = MoleculeDatasetBuilder(o).run();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(s.accepted, 1);
  ASSERT_EQ(s.rejected, 2);
  EXPECT_NE(s.rejectedMolecules[0].reason.find("longer than --max-smiles-length 1000"), std::string::npos);
  EXPECT_NE(s.rejectedMolecules[0].smiles.find("(400000 characters)"), std::string::npos);
  EXPECT_LT(s.rejectedMolecules[0].smiles.size(), 300u);
  EXPECT_NE(s.rejectedMolecules[1].reason.find("600 heavy atoms, more than --max-atoms 500"), std::string::npos);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gnn
