// ZipArchive: the zip container of torch.save files (and of numpy's .npz): a reader over a whole file held in
// memory that checks every record against the file's bounds and every member's CRC-32, and a writer of
// STORED members whose data start on 64-byte boundaries (as torch's writer aligns them, so a reader may map
// them), with ZIP64 records where a size, an offset or the member count needs them.
//
//   ZipReader zip(readFileBytes("model.pt"), "model.pt");
//   const ZipEntry* pkl = zip.findSuffix("/data.pkl");
//   std::string_view bytes = zip.read(*pkl);            // CRC-checked, no copy
//   ZipWriter w; w.add("model/version", "3\n"); std::string file = w.finish();
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gnn {

/// CRC-32 (ISO-HDLC, zlib's crc32) of `n` bytes, continuing from `crc` (0 to start).
uint32_t crc32(const void* data, size_t n, uint32_t crc = 0);

/// One member, as the central directory describes it (sizes and offsets already checked against the file).
struct ZipEntry {
  std::string name;
  uint16_t method = 0;           // 0 stored, 8 deflated
  uint32_t crc = 0;
  uint64_t compressedSize = 0;
  uint64_t size = 0;             // uncompressed
  uint64_t dataOffset = 0;       // first byte of the member's data in the file
};

class ZipReader {
 public:
  /// Parses the end records and the central directory of `bytes` (the whole file); `source` names the file in
  /// every message. Throws std::runtime_error for anything out of bounds or inconsistent.
  ZipReader(std::string bytes, std::string source);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  /// The member called exactly `name`, or nullptr.
  const ZipEntry* find(std::string_view name) const;
  /// The one member whose name ends with `suffix` (torch's top folder varies), nullptr when none; throws when
  /// several do.
  const ZipEntry* findSuffix(std::string_view suffix) const;
  /// A stored member's bytes, its CRC-32 checked (once; later reads reuse the check). Throws for a deflated
  /// member (gnn_core does not link zlib) or a bad CRC, naming the file and the member.
  std::string_view read(const ZipEntry& e) const;
  const std::string& source() const { return source_; }
  uint64_t fileSize() const { return bytes_.size(); }

 private:
  void parseDirectory(uint64_t dirOffset, uint64_t dirSize, uint64_t count);
  uint64_t locateData(const ZipEntry& e, uint64_t localOffset) const;
  [[noreturn]] void fail(const std::string& what) const;
  std::string bytes_;
  std::string source_;
  std::vector<ZipEntry> entries_;
  std::unordered_map<std::string, size_t> index_;
  mutable std::vector<bool> checked_;
};

/// Builds a zip of STORED members in memory; finish() returns the file's bytes.
class ZipWriter {
 public:
  /// Adds member `name` holding `data`, its data aligned to `alignment` bytes with a padding extra field.
  void add(const std::string& name, std::string_view data, uint32_t alignment = 64);
  std::string finish();

 private:
  struct Member {
    std::string name;
    uint32_t crc;
    uint64_t size, localOffset;
  };
  std::string out_;
  std::vector<Member> members_;
};

}  // namespace gnn
