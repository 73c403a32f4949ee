#include "gnn/io/ZipArchive.h"

#include <array>
#include <cstdio>
#include <stdexcept>

namespace gnn {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr uint64_t kMax32 = 0xffffffffu;

const std::array<uint32_t, 256>& crcTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

// Little-endian field of `n` bytes at `at`; the caller has checked at + n <= s.size().
uint64_t le(const std::string& s, uint64_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<uint64_t>(i)]);
  return v;
}

void put(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

uint32_t crc32(const void* data, size_t n, uint32_t crc) {
  const auto& t = crcTable();
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = t[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

void ZipReader::fail(const std::string& what) const {
  throw std::runtime_error(source_ + ": " + what);
}

ZipReader::ZipReader(std::string bytes, std::string source) : bytes_(std::move(bytes)), source_(std::move(source)) {
  const uint64_t n = bytes_.size();
  if (n < 22) fail("not a zip archive (" + std::to_string(n) + " bytes, too short for its end record)");
  // The end record sits in the last 22 + 65535 (comment) bytes; the last signature whose comment length
  // reaches exactly the end of the file is it.
  uint64_t end = n;
  for (uint64_t p = n - 22 + 1; p-- > 0 && p + 22 + 65535 >= n;)
    if (le(bytes_, p, 4) == kEndSig && p + 22 + le(bytes_, p + 20, 2) == n) {
      end = p;
      break;
    }
  if (end == n) fail("not a zip archive (no end-of-central-directory record; the file may be truncated)");
  uint64_t count = le(bytes_, end + 10, 2), dirSize = le(bytes_, end + 12, 4), dirOffset = le(bytes_, end + 16, 4);
  if (le(bytes_, end + 4, 2) != 0 || le(bytes_, end + 6, 2) != 0) fail("multi-disk zip archives are not supported");
  if (end >= 20 && le(bytes_, end - 20, 4) == kLocator64Sig) {
    const uint64_t at = le(bytes_, end - 20 + 8, 8);
    if (at > n || n - at < 56 || le(bytes_, at, 4) != kEnd64Sig) fail("ZIP64 end record out of place or damaged");
    count = le(bytes_, at + 32, 8);
    dirSize = le(bytes_, at + 40, 8);
    dirOffset = le(bytes_, at + 48, 8);
  } else if (count == 0xffff || dirSize == kMax32 || dirOffset == kMax32) {
    fail("ZIP64 sizes without a ZIP64 end record");
  }
  if (dirOffset > n || dirSize > n - dirOffset) fail("central directory lies past the end of the file");
  if (count > dirSize / 46) fail("central directory too small for its " + std::to_string(count) + " entries");
  parseDirectory(dirOffset, dirSize, count);
}

void ZipReader::parseDirectory(uint64_t dirOffset, uint64_t dirSize, uint64_t count) {
  const uint64_t stop = dirOffset + dirSize;
  uint64_t p = dirOffset;
  entries_.reserve(count);
  for (uint64_t k = 0; k < count; ++k) {
    if (stop - p < 46 || le(bytes_, p, 4) != kCentralSig) fail("central directory entry " + std::to_string(k) + " damaged");
    const uint64_t nameLen = le(bytes_, p + 28, 2), extraLen = le(bytes_, p + 30, 2), commentLen = le(bytes_, p + 32, 2);
    if (stop - p - 46 < nameLen + extraLen + commentLen) fail("central directory entry " + std::to_string(k) + " overruns it");
    ZipEntry e;
    e.name = bytes_.substr(p + 46, nameLen);
    if (le(bytes_, p + 8, 2) & 1) fail("member '" + e.name + "' is encrypted");
    e.method = static_cast<uint16_t>(le(bytes_, p + 10, 2));
    e.crc = static_cast<uint32_t>(le(bytes_, p + 16, 4));
    e.compressedSize = le(bytes_, p + 20, 4);
    e.size = le(bytes_, p + 24, 4);
    uint64_t local = le(bytes_, p + 42, 4);
    // ZIP64 extended information (id 1): the 8-byte values of exactly the fields saturated above, in order.
    for (uint64_t x = p + 46 + nameLen, xe = x + extraLen; xe - x >= 4;) {
      const uint64_t id = le(bytes_, x, 2), len = le(bytes_, x + 2, 2);
      if (len > xe - x - 4) fail("member '" + e.name + "': extra field overruns its entry");
      if (id == 1) {
        uint64_t q = x + 4;
        for (uint64_t* f : {&e.size, &e.compressedSize, &local}) {
          if (*f != kMax32) continue;
          if (q + 8 > x + 4 + len) fail("member '" + e.name + "': ZIP64 extra field too short");
          *f = le(bytes_, q, 8);
          q += 8;
        }
      }
      x += 4 + len;
    }
    if (e.method != 0 && e.method != 8)
      fail("member '" + e.name + "' uses compression method " + std::to_string(e.method) + " (only stored and deflated)");
    if (e.method == 0 && e.compressedSize != e.size)
      fail("member '" + e.name + "' is stored but its sizes differ (" + std::to_string(e.compressedSize) + " and " +
           std::to_string(e.size) + ")");
    e.dataOffset = locateData(e, local);
    entries_.push_back(std::move(e));
    p += 46 + nameLen + extraLen + commentLen;
  }
  checked_.assign(entries_.size(), false);
  for (size_t i = 0; i < entries_.size(); ++i)
    if (!index_.emplace(entries_[i].name, i).second) fail("member '" + entries_[i].name + "' appears twice");
}

uint64_t ZipReader::locateData(const ZipEntry& e, uint64_t local) const {
  const uint64_t n = bytes_.size();
  if (local > n || n - local < 30 || le(bytes_, local, 4) != kLocalSig)
    fail("member '" + e.name + "': local header missing at offset " + std::to_string(local));
  const uint64_t nameLen = le(bytes_, local + 26, 2), extraLen = le(bytes_, local + 28, 2);
  if (n - local - 30 < nameLen + extraLen) fail("member '" + e.name + "': local header overruns the file");
  if (bytes_.compare(local + 30, nameLen, e.name) != 0)
    fail("member '" + e.name + "': its local header names another file");
  const uint64_t data = local + 30 + nameLen + extraLen;
  if (e.compressedSize > n - data)
    fail("member '" + e.name + "' (" + std::to_string(e.compressedSize) + " bytes at offset " + std::to_string(data) +
         ") runs past the end of the file (" + std::to_string(n) + " bytes): truncated?");
  return data;
}

const ZipEntry* ZipReader::find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &entries_[it->second];
}

const ZipEntry* ZipReader::findSuffix(std::string_view suffix) const {
  const ZipEntry* found = nullptr;
  for (const ZipEntry& e : entries_)
    if (e.name.size() >= suffix.size() && e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      if (found) fail("two members end in '" + std::string(suffix) + "': '" + found->name + "' and '" + e.name + "'");
      found = &e;
    }
  return found;
}

std::string_view ZipReader::read(const ZipEntry& e) const {
  if (e.method != 0)
    fail("member '" + e.name + "' is deflated; gnn reads stored (uncompressed) members only, as torch.save and "
         "np.savez write them (re-save without compression)");
  const std::string_view data(bytes_.data() + e.dataOffset, e.size);
  const size_t index = static_cast<size_t>(&e - entries_.data());
  if (index < checked_.size() && !checked_[index]) {
    const uint32_t c = crc32(data.data(), data.size());
    if (c != e.crc) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "CRC-32 %08x, but the directory says %08x", c, e.crc);
      fail("member '" + e.name + "' is damaged: " + buf);
    }
    checked_[index] = true;
  }
  return data;
}

void ZipWriter::add(const std::string& name, std::string_view data, uint32_t alignment) {
  const uint64_t start = out_.size(), size = data.size();
  const bool big = size >= kMax32;
  const uint64_t z64 = big ? 20 : 0;  // ZIP64 extra field: id, length, then both sizes
  const uint64_t before = start + 30 + name.size() + z64 + 4;
  const uint64_t pad = alignment > 1 ? (alignment - before % alignment) % alignment : 0;
  const uint32_t crc = crc32(data.data(), data.size());
  put(out_, kLocalSig, 4);
  put(out_, big ? 45 : 20, 2);  // version needed
  put(out_, 0x0800, 2);         // names are UTF-8
  put(out_, 0, 2);              // stored
  put(out_, 0, 2);              // time 00:00
  put(out_, 0x21, 2);           // date 1980-01-01
  put(out_, crc, 4);
  put(out_, big ? kMax32 : size, 4);
  put(out_, big ? kMax32 : size, 4);
  put(out_, name.size(), 2);
  put(out_, z64 + 4 + pad, 2);
  out_ += name;
  if (big) {
    put(out_, 1, 2), put(out_, 16, 2), put(out_, size, 8), put(out_, size, 8);
  }
  put(out_, 0x4246, 2);  // "FB": padding, as torch's writer names it
  put(out_, pad, 2);
  out_.append(pad, 'Z');
  out_.append(data.data(), data.size());
  members_.push_back({name, crc, size, start});
}

std::string ZipWriter::finish() {
  const uint64_t dirOffset = out_.size();
  for (const Member& m : members_) {
    const bool bigSize = m.size >= kMax32, bigOffset = m.localOffset >= kMax32;
    const uint64_t z64 = (bigSize ? 16 : 0) + (bigOffset ? 8 : 0);
    put(out_, kCentralSig, 4);
    put(out_, 45, 2), put(out_, z64 ? 45 : 20, 2), put(out_, 0x0800, 2), put(out_, 0, 2);
    put(out_, 0, 2), put(out_, 0x21, 2), put(out_, m.crc, 4);
    put(out_, bigSize ? kMax32 : m.size, 4), put(out_, bigSize ? kMax32 : m.size, 4);
    put(out_, m.name.size(), 2), put(out_, z64 ? z64 + 4 : 0, 2), put(out_, 0, 2);
    put(out_, 0, 2), put(out_, 0, 2), put(out_, 0, 4), put(out_, bigOffset ? kMax32 : m.localOffset, 4);
    out_ += m.name;
    if (z64) {
      put(out_, 1, 2), put(out_, z64, 2);
      if (bigSize) put(out_, m.size, 8), put(out_, m.size, 8);
      if (bigOffset) put(out_, m.localOffset, 8);
    }
  }
  const uint64_t dirSize = out_.size() - dirOffset, count = members_.size();
  const bool big = count >= 0xffff || dirSize >= kMax32 || dirOffset >= kMax32;
  if (big) {
    const uint64_t at = out_.size();
    put(out_, kEnd64Sig, 4), put(out_, 44, 8), put(out_, 45, 2), put(out_, 45, 2), put(out_, 0, 4), put(out_, 0, 4);
    put(out_, count, 8), put(out_, count, 8), put(out_, dirSize, 8), put(out_, dirOffset, 8);
    put(out_, kLocator64Sig, 4), put(out_, 0, 4), put(out_, at, 8), put(out_, 1, 4);
  }
  put(out_, kEndSig, 4), put(out_, 0, 2), put(out_, 0, 2);
  put(out_, big ? 0xffff : count, 2), put(out_, big ? 0xffff : count, 2);
  put(out_, big ? kMax32 : dirSize, 4), put(out_, big ? kMax32 : dirOffset, 4), put(out_, 0, 2);
  members_.clear();
  return std::move(out_);
}

}  // namespace gnn
