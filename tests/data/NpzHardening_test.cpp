// The .npz reader treats its input as hostile: damaged or crafted files are refused with `file: member:
// reason`, never read out of bounds (run these under the asan preset too).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <utility>

#include "data/MoleculeDatasetBuilder.h"
#include "data/NpzDataset.h"
#include "data/NpzFile.h"
#include "data/NpzWriter.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;

class NpzHardening : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gnn_npz_hard_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "m.csv") << "smiles,y\nCCO,1\nc1ccccc1O,2\nCC(=O)N,3\nCCCl,4\n";
    BuildOptions o;
    o.source.path = (dir_ / "m.csv").string();
    o.source.targetColumns = {"y"};
    o.graphormerMaxDist = 2;
    o.outPath = good();
    MoleculeDatasetBuilder(o).run();
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string good() const { return (dir_ / "good.npz").string(); }

  // A copy of the good dataset written through NpzWriter (valid zip, valid CRCs) after `edit` changed the
  // bytes of one array: the structure itself is what must be caught.
  std::string crafted(const std::string& array, const std::function<void(std::vector<unsigned char>&)>& edit,
                      const std::string& descr = "") {
    const std::string out = (dir_ / ("crafted_" + array + ".npz")).string();
    NpzFile in(good());
    NpzWriter w(out);
    for (const auto& [name, a] : in.arrays()) {
      std::vector<unsigned char> bytes(a.data, a.data + a.bytes);
      std::vector<int64_t> trailing(a.shape.begin() + (a.shape.empty() ? 0 : 1), a.shape.end());
      std::string d = a.descr;
      size_t item = static_cast<size_t>(d.back() - '0');
      int parts = 1;
      if (name == "edge_index") {  // [2, E] is written as two parts of E rows
        parts = 2;
        trailing.clear();
      }
      if (name == array) {
        edit(bytes);
        if (!descr.empty()) d = descr;
      }
      const int h = w.addArray(name, d, item, trailing, parts);
      if (parts == 2) {
        w.append(h, bytes.data(), bytes.size() / 2, 0);
        w.append(h, bytes.data() + bytes.size() / 2, bytes.size() / 2, 1);
      } else {
        if (!trailing.empty() && trailing[0] == 0) w.setRows(h, a.shape[0]);
        w.append(h, bytes.data(), bytes.size());
      }
    }
    w.finish();
    return out;
  }

  static std::string errorOpening(const std::string& path) {
    try {
      NpzDataset ds(path);
      for (size_t i = 0; i < ds.size(); ++i) {
        ds.get(i);
        ds.smiles(i);
      }
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

void setI64(std::vector<unsigned char>& b, size_t k, int64_t v) { std::memcpy(b.data() + k * 8, &v, 8); }

std::string le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// `in`'s arrays as NumPy's savez writes them: plain stored zip members one after another, .npy v1 headers,
// nothing aligned (here every array's data starts 3 bytes past an 8-byte boundary).
std::string numpyStyleCopy(const NpzFile& in) {
  std::string out, central;
  uint64_t count = 0;
  for (const auto& [name, a] : in.arrays()) {
    std::string shape = "(";
    for (size_t i = 0; i < a.shape.size(); ++i)
      shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : i + 1 < a.shape.size() ? ", " : "");
    shape += ")";
    std::string dict = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    const std::string file = name + ".npy";
    const uint64_t offset = out.size();
    while ((offset + 30 + file.size() + 10 + dict.size() + 1) % 8 != 3) dict += ' ';
    dict += '\n';
    const std::string member = std::string("\x93NUMPY\x01\x00", 8) + le(dict.size(), 2) + dict +
                               std::string(reinterpret_cast<const char*>(a.data), a.bytes);
    const uint64_t crc = crc32(0, reinterpret_cast<const Bytef*>(member.data()), static_cast<uInt>(member.size()));
    const std::string common = le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(crc, 4) + le(member.size(), 4) +
                               le(member.size(), 4) + le(file.size(), 2) + le(0, 2);
    out += le(0x04034b50, 4) + le(20, 2) + common + file + member;
    central += le(0x02014b50, 4) + le(20, 2) + le(20, 2) + common + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
               le(offset, 4) + file;
    ++count;
  }
  const uint64_t cd = out.size();
  return out + central + le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(count, 2) + le(count, 2) +
         le(central.size(), 4) + le(cd, 4) + le(0, 2);
}

TEST_F(NpzHardening, TheGoodFileAndItsFaithfulCopyOpen) {
  EXPECT_EQ(errorOpening(good()), "");
  EXPECT_EQ(errorOpening(crafted("none", [](auto&) {})), "");
}

// A refused file must not keep its memory mapping: fuzz/npz_fuzzer ran out of mappings (mmap: ENOMEM) after
// ~71,000 inputs, the limit being vm.max_map_count (65,530 here), because NpzFile's constructor threw after
// mapping the file and a constructor that throws runs no destructor.
// NumPy's savez does not align arrays: they are copied into aligned memory, never read through misaligned
// pointers (UBSan) nor refused, and the dataset reads the same.
TEST_F(NpzHardening, UnalignedArraysAsNumpyWritesThemReadTheSame) {
  const std::string copy = (dir_ / "numpy_style.npz").string();
  {
    NpzFile in(good());
    std::ofstream(copy, std::ios::binary) << numpyStyleCopy(in);
  }
  {
    NpzFile f(copy);
    for (const auto& [name, a] : f.arrays())
      EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data) % static_cast<uintptr_t>(a.descr.back() - '0'), 0u) << name;
  }
  ASSERT_EQ(errorOpening(copy), "");
  NpzDataset a(good()), b(copy);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const Graph ga = a.get(i), gb = b.get(i);
    for (auto t : {&Graph::x, &Graph::edgeIndex, &Graph::edgeAttr, &Graph::y, &Graph::spatialPos, &Graph::edgeInput}) {
      ASSERT_EQ((ga.*t).defined(), (gb.*t).defined());
      if (!(ga.*t).defined()) continue;
      ASSERT_EQ((ga.*t).shape(), (gb.*t).shape());
      EXPECT_EQ(std::memcmp(std::as_const(ga.*t).raw(), std::as_const(gb.*t).raw(), (ga.*t).nbytes()), 0) << i;
    }
    EXPECT_EQ(a.smiles(i), b.smiles(i));
  }
}

TEST_F(NpzHardening, RefusedFilesReleaseTheirMapping) {
  auto mappings = [] {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    int n = 0;
    while (std::getline(maps, line)) ++n;
    return n;
  };
  // Damaged past the zip structure (a bad CRC), so the file is mapped before it is refused.
  std::vector<char> bytes;
  {
    std::ifstream in(good(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  bytes[200] = static_cast<char>(bytes[200] ^ 0x55);
  const std::string bad = (dir_ / "bad_crc.npz").string();
  std::ofstream(bad, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_NE(errorOpening(bad).find("bad CRC-32"), std::string::npos) << errorOpening(bad);
  const int before = mappings();
  for (int i = 0; i < 500; ++i) EXPECT_THROW(NpzFile{bad}, std::runtime_error);
  EXPECT_LT(mappings() - before, 50) << "refused files leave their mappings behind";
}

TEST_F(NpzHardening, AnEdgeIntoTheNextMoleculeIsRefused) {
  // Graph 0 (CCO) has 3 atoms: an edge to local node 3 points into the next molecule.
  std::string e = errorOpening(crafted("edge_index", [](auto& b) {
    const int32_t three = 3;
    std::memcpy(b.data(), &three, 4);
  }));
  EXPECT_NE(e.find("edge_index: edge 0 (3 -> "), std::string::npos) << e;
  EXPECT_NE(e.find("leaves its 3 nodes"), std::string::npos) << e;
}

TEST_F(NpzHardening, OffsetsOutOfRangeAreRefused) {
  for (int64_t v : {INT64_MIN, INT64_MAX, int64_t{1000000}}) {
    std::string e = errorOpening(crafted("node_ptr", [&](auto& b) { setI64(b, 2, v); }));
    EXPECT_NE(e.find("node_ptr: "), std::string::npos) << v << ": " << e;
    e = errorOpening(crafted("edge_ptr", [&](auto& b) { setI64(b, 2, v); }));
    EXPECT_NE(e.find("edge_ptr: "), std::string::npos) << v << ": " << e;
    e = errorOpening(crafted("smiles_ptr", [&](auto& b) { setI64(b, 1, v); }));
    EXPECT_NE(e.find("smiles_ptr: "), std::string::npos) << v << ": " << e;
    e = errorOpening(crafted("pair_ptr", [&](auto& b) { setI64(b, 1, v); }));
    EXPECT_NE(e.find("pair_ptr: "), std::string::npos) << v << ": " << e;
  }
  std::string e = errorOpening(crafted("y_mask", [](auto& b) { b[0] = 7; }));
  EXPECT_NE(e.find("y_mask: value 7"), std::string::npos) << e;
  e = errorOpening(crafted("split_train", [](auto& b) { setI64(b, 0, 99); }, ""));
  // (the CSV has no split: split_train is absent, and nothing is crafted)
  (void)e;
}

// With CRC-32s recomputed any label value reads as data, but a label marked present must be a number: the writer
// stores missing labels as NaN with y_mask 0, never a NaN marked present.
TEST_F(NpzHardening, ANonFiniteLabelMarkedPresentIsRefused) {
  std::string e = errorOpening(crafted("y", [](auto& b) {
    const float nan = std::nanf("");
    std::memcpy(b.data() + 4, &nan, 4);  // graph 1's target
  }));
  EXPECT_NE(e.find("y: graph 1 target 0 is nan but marked present"), std::string::npos) << e;
}

TEST_F(NpzHardening, WrongDtypesAreRefused) {
  std::string e = errorOpening(crafted("x", [](auto&) {}, "|i1"));
  EXPECT_NE(e.find("array 'x' has dtype |i1"), std::string::npos) << e;
}

TEST_F(NpzHardening, DamagedBytesTruncationAndCraftedHeadersAreRefused) {
  std::ifstream in(good(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto withBytes = [&](const std::string& b) {
    const std::string p = (dir_ / "mut.npz").string();
    std::ofstream(p, std::ios::binary | std::ios::trunc) << b;
    return errorOpening(p);
  };
  // A flipped byte inside the first member's data: NumPy says "Bad CRC-32", so do we.
  std::string flipped = bytes;
  const size_t x = flipped.find("\x93NUMPY");
  ASSERT_NE(x, std::string::npos);
  flipped[x + 200] ^= 0x20;
  EXPECT_NE(withBytes(flipped).find("bad CRC-32"), std::string::npos) << withBytes(flipped);
  // The .npy header length set to 0xffff (its CRC fails first; no read past the member either way).
  std::string hlen = bytes;
  hlen[x + 8] = '\xff';
  hlen[x + 9] = '\xff';
  EXPECT_NE(withBytes(hlen), "");
  // Truncated anywhere: refused.
  for (size_t cut : {bytes.size() / 3, bytes.size() / 2, bytes.size() - 30})
    EXPECT_NE(withBytes(bytes.substr(0, cut)), "") << cut;
}

// Format 2's path matrix is walked recursively when edge_input is gathered: a via that loops, steps off the
// graph's edges or disagrees with spatial_pos is refused when the file is opened, as is a K no graph can have.
TEST_F(NpzHardening, ACraftedPathMatrixIsRefused) {
  // Graph 0 is CCO (atoms 0-1-2): pair (0, 2) goes through 1, pair (0, 1) is one bond; pairs are row-major.
  auto opening = [&](const std::string& array, const std::function<void(std::vector<unsigned char>&)>& edit) {
    return errorOpening(crafted(array, edit));
  };
  ASSERT_EQ(errorOpening(good()), "");
  std::string e = opening("path_via", [](auto& b) { b[2] = 2; });  // (0, 2) through 2 itself
  EXPECT_NE(e.find("path_via: graph 0 pair (0, 2): via is not a node inside"), std::string::npos) << e;
  e = opening("path_via", [](auto& b) { b[2] = 255; });  // (0, 2) with no via, yet two bonds apart
  EXPECT_NE(e.find("pair (0, 2): no via, yet neither one edge nor unreachable"), std::string::npos) << e;
  e = opening("path_via", [](auto& b) { b[1] = 2; });  // (0, 1) -> (0, 2) -> (0, 1) -> ...: a loop
  EXPECT_NE(e.find("pair (0, 1): the halves through via do not add up"), std::string::npos) << e;
  e = opening("spatial_pos", [](auto& b) { b[2] = 255; });  // (0, 2) unreachable, yet it has a via
  EXPECT_NE(e.find("pair (0, 2): via is not a node inside a reachable pair's path"), std::string::npos) << e;
  e = opening("spatial_pos", [](auto& b) { b[4] = 7; });  // (1, 1): the diagonal
  EXPECT_NE(e.find("pair (1, 1): the diagonal"), std::string::npos) << e;
  e = opening("multi_hop_max_dist", [](auto& b) { setI64(b, 0, 1000000000); });  // n^2 K per graph on get()
  EXPECT_NE(e.find("multi_hop_max_dist: is not between 1 and"), std::string::npos) << e;
  e = opening("path_via", [](auto&) {});
  EXPECT_EQ(e, "");
}

// Seeded mutations (bytes, 4-byte words, names and lengths in the zip structures) of `good`: each file is
// refused or reads whole; nothing crashes (the asan preset checks for reads out of bounds). Returns how many
// were refused.
int mutate(const std::string& good, const fs::path& dir, int count) {
  std::ifstream in(good, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::mt19937_64 rng(12345);
  const std::string p = (dir / "mut.npz").string();
  int refused = 0;
  auto errorOpening = [](const std::string& path) {
    try {
      NpzDataset ds(path);
      for (size_t i = 0; i < ds.size(); ++i) {
        ds.get(i);
        ds.smiles(i);
      }
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (int k = 0; k < count; ++k) {
    std::string m = bytes;
    const size_t at = rng() % (m.size() - 4);
    switch (k % 4) {
      case 0: m[at] = static_cast<char>(rng()); break;
      case 1: {
        const uint32_t v = static_cast<uint32_t>(rng());
        std::memcpy(&m[at], &v, 4);
        break;
      }
      case 2: m[at] = '\xff', m[at + 1] = '\xff'; break;
      default: m.resize(at); break;
    }
    std::ofstream(p, std::ios::binary | std::ios::trunc) << m;
    if (!errorOpening(p).empty()) {
      ++refused;
      continue;
    }
    // Accepted: the mutation hit bytes nothing reads (zip timestamps, versions, the local headers' copies of
    // sizes), so every graph must read exactly as in the good file.
    NpzDataset a(good), b(p);
    EXPECT_EQ(a.size(), b.size());
    if (a.size() != b.size()) return -1;
    for (size_t i = 0; i < a.size(); ++i) {
      Graph ga = a.get(i), gb = b.get(i);
      for (auto [ta, tb] : {std::pair{&ga.x, &gb.x}, {&ga.edgeIndex, &gb.edgeIndex}, {&ga.edgeAttr, &gb.edgeAttr},
                            {&ga.y, &gb.y}, {&ga.spatialPos, &gb.spatialPos}, {&ga.edgeInput, &gb.edgeInput}}) {
        const bool same = ta->nbytes() == tb->nbytes() && std::memcmp(ta->raw(), tb->raw(), ta->nbytes()) == 0;
        EXPECT_TRUE(same) << "mutation " << k << " at byte " << at;
        if (!same) return -1;
      }
      EXPECT_EQ(a.smiles(i), b.smiles(i));
    }
  }
  return refused;
}

TEST_F(NpzHardening, MutatedFilesNeverCrash) {
  EXPECT_GT(mutate(good(), dir_, 2000), 1500);  // most mutations hit a checked byte (CRC-covered data, headers, offsets)
}

// Files written before format 2 (edge_input stored, int32 and int16 dtypes) get the same checks.
TEST_F(NpzHardening, MutatedFormat1FilesNeverCrash) {
  BuildOptions o;
  o.source.path = (dir_ / "m.csv").string();
  o.source.targetColumns = {"y"};
  o.graphormerMaxDist = 2;
  o.formatVersion = 1;
  o.outPath = (dir_ / "good_v1.npz").string();
  MoleculeDatasetBuilder(o).run();
  ASSERT_EQ(NpzDataset(o.outPath).formatVersion(), 1);
  EXPECT_GT(mutate(o.outPath, dir_, 500), 350);
}

}  // namespace
}  // namespace gnn
