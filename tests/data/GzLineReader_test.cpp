#include "data/GzLineReader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "data/ProcessTempRoot.h"

namespace gnn {
namespace {

std::string gzipBytes(const std::string& text) {
  z_stream s{};
  deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(text.size() + 128, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  s.avail_in = static_cast<uInt>(text.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

std::string file(const std::string& name, const std::string& bytes) {
  static const gnn::testing::ProcessTempRoot root("gnn_gz_");
  const auto p = root.path() / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p.string();
}

std::vector<std::string> lines(const std::string& path) {
  GzLineReader r(path);
  std::vector<std::string> out;
  for (std::string_view l; r.next(l);) out.emplace_back(l);
  return out;
}

TEST(GzLineReader, PlainGzipAndConcatenatedMembersReadAlike) {
  const std::vector<std::string> want = {"a", "b", "c"};
  EXPECT_EQ(lines(file("plain.txt", "a\nb\r\nc")), want);
  EXPECT_EQ(lines(file("one.gz", gzipBytes("a\nb\nc\n"))), want);
  // `cat x.gz y.gz` is a valid gzip file (RFC 1952 members), and so is zero padding after the last member.
  EXPECT_EQ(lines(file("two.gz", gzipBytes("a\nb\n") + gzipBytes("c\n"))), want);
  EXPECT_EQ(lines(file("pad.gz", gzipBytes("a\nb\nc\n") + std::string(16, '\0'))), want);
  EXPECT_TRUE(lines(file("empty.txt", "")).empty());
}

TEST(GzLineReader, GarbageAfterTheStreamTruncationAndCorruptionAreErrors) {
  const std::string gz = gzipBytes("CCO,1\nCCN,2\n");
  try {
    lines(file("garbage.gz", gz + "GARBAGE!!"));
    FAIL() << "garbage after the stream was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is not another gzip member"), std::string::npos) << e.what();
  }
  EXPECT_THROW(lines(file("truncated.gz", gz.substr(0, gz.size() - 6))), InputError);
  std::string flipped = gz;
  flipped[flipped.size() - 7] ^= 0x55;  // inside the CRC-32 / data
  EXPECT_THROW(lines(file("flipped.gz", flipped)), InputError);
}

}  // namespace
}  // namespace gnn
