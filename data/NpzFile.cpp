#include "data/NpzFile.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gnn {

namespace {
uint64_t rd(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
}  // namespace

int64_t NpzFile::Array::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // checked against the member's size when the file was opened
  return n;
}

namespace {
// Bytes per element of a NumPy dtype string ("<i8" -> 8, "|u1" -> 1); 0 when it is not a plain number type.
uint64_t itemSize(const std::string& descr) {
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '>' && descr[0] != '=')) return 0;
  if (descr[1] != 'i' && descr[1] != 'u' && descr[1] != 'f' && descr[1] != 'b') return 0;
  uint64_t n = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || n > 64) return 0;
    n = n * 10 + static_cast<uint64_t>(descr[i] - '0');
  }
  return (n == 1 || n == 2 || n == 4 || n == 8) ? n : 0;
}

// Why a file is refused, without its path: the constructor unmaps the file and throws it as a
// std::runtime_error naming the file.
class Refused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// [offset, offset + n) inside a file of fileSize bytes, without overflow.
bool within(uint64_t fileSize, uint64_t offset, uint64_t n) { return offset <= fileSize && n <= fileSize - offset; }

// Where the central directory starts and how many entries it has (ZIP64 aware).
struct CentralDirectory {
  uint64_t count = 0, offset = 0;
};

CentralDirectory findCentralDirectory(const unsigned char* base, uint64_t fileSize) {
  // End of central directory: the last 0x06054b50 within the final 64 KiB + 22 bytes.
  int64_t eocd = -1;
  for (int64_t p = static_cast<int64_t>(fileSize) - 22; p >= 0 && p >= static_cast<int64_t>(fileSize) - 65557; --p)
    if (rd(base + p, 4) == 0x06054b50) {
      eocd = p;
      break;
    }
  if (eocd < 0) throw Refused("no zip end-of-central-directory record (truncated or not a .npz)");
  CentralDirectory cd{rd(base + eocd + 10, 2), rd(base + eocd + 16, 4)};
  if (eocd >= 20 && rd(base + eocd - 20, 4) == 0x07064b50) {
    const uint64_t z = rd(base + eocd - 20 + 8, 8);
    if (!within(fileSize, z, 56) || rd(base + z, 4) != 0x06064b50) throw Refused("broken ZIP64 end record");
    cd.count = rd(base + z + 32, 8);
    cd.offset = rd(base + z + 48, 8);
  }
  // A central-directory entry takes at least 46 bytes.
  if (!within(fileSize, cd.offset, 0) || cd.count > (fileSize - cd.offset) / 46)
    throw Refused("broken central directory (count or offset)");
  return cd;
}

// One member as its central-directory entry describes it.
struct Member {
  std::string name;
  uint64_t method = 0;
  uint32_t crc = 0;
  uint64_t size = 0, local = 0;  // uncompressed size, local header offset
};

// Reads the central-directory entry at p and moves p past it.
Member readCentralEntry(const unsigned char* base, uint64_t fileSize, uint64_t& p) {
  if (!within(fileSize, p, 46) || rd(base + p, 4) != 0x02014b50) throw Refused("broken central directory");
  Member m;
  m.method = rd(base + p + 10, 2);
  m.crc = static_cast<uint32_t>(rd(base + p + 16, 4));
  m.size = rd(base + p + 24, 4);
  m.local = rd(base + p + 42, 4);
  const uint64_t nameLen = rd(base + p + 28, 2), extraLen = rd(base + p + 30, 2), commentLen = rd(base + p + 32, 2);
  if (!within(fileSize, p + 46, nameLen + extraLen + commentLen))
    throw Refused("central directory entry runs past the end of the file");
  m.name.assign(reinterpret_cast<const char*>(base + p + 46), nameLen);
  // ZIP64 extra: the 64-bit values present are those whose 32-bit field is 0xffffffff, in order
  // uncompressed size, compressed size, local header offset.
  const unsigned char* x = base + p + 46 + nameLen;
  for (uint64_t q = 0; q + 4 <= extraLen;) {
    const uint64_t id = rd(x + q, 2), len = rd(x + q + 2, 2);
    if (q + 4 + len > extraLen) throw Refused("member '" + m.name + "': broken extra field");
    if (id == 1) {
      uint64_t used = 0;
      auto take = [&](uint64_t& field) {
        if (used + 8 > len) throw Refused("member '" + m.name + "': ZIP64 field too short");
        field = rd(x + q + 4 + used, 8);
        used += 8;
      };
      uint64_t compressed = 0;
      if (m.size == 0xffffffffu) take(m.size);
      if (rd(base + p + 20, 4) == 0xffffffffu) take(compressed);
      if (m.local == 0xffffffffu) take(m.local);
    }
    q += 4 + len;
  }
  p += 46 + nameLen + extraLen + commentLen;
  return m;
}

// The offset of a stored member's data, checked to lie inside the file, and its CRC-32 checked.
uint64_t checkedMemberData(const unsigned char* base, uint64_t fileSize, const Member& m) {
  const std::string& name = m.name;
  if (m.method != 0)
    throw Refused("member '" + name + "' is compressed; only stored (uncompressed) .npz can be mapped");
  if (!within(fileSize, m.local, 30) || rd(base + m.local, 4) != 0x04034b50)
    throw Refused("broken local header for '" + name + "'");
  const uint64_t data = m.local + 30 + rd(base + m.local + 26, 2) + rd(base + m.local + 28, 2);
  if (!within(fileSize, data, m.size))
    throw Refused("member '" + name + "' runs past the end of the file (truncated?)");
  // The member's CRC-32, as NumPy's zipfile checks it ("Bad CRC-32"): every byte is read once at open,
  // about a second per GB, which also pages the file in for the first epoch.
  uLong c = crc32(0L, Z_NULL, 0);
  for (uint64_t off = 0; off < m.size;) {
    const uint64_t n = std::min<uint64_t>(m.size - off, uint64_t{1} << 30);
    c = crc32(c, base + data + off, static_cast<uInt>(n));
    off += n;
  }
  if (static_cast<uint32_t>(c) != m.crc) throw Refused("member '" + name + "': bad CRC-32 (the file is damaged)");
  return data;
}

// The dimensions of the shape tuple dict[open + 1, close), each checked to fit the member's size bytes of
// items of `item` bytes; returns their product.
uint64_t parseShape(const std::string& dict, size_t open, size_t close, const std::string& name, uint64_t size,
                    uint64_t item, std::vector<int64_t>& shape) {
  uint64_t elements = 1;
  for (size_t i = open + 1; i < close;) {
    while (i < close && (dict[i] == ' ' || dict[i] == ',')) ++i;
    if (i >= close) break;
    uint64_t dim = 0;
    if (dict[i] < '0' || dict[i] > '9') throw Refused("array '" + name + "': bad shape in .npy header");
    while (i < close && dict[i] >= '0' && dict[i] <= '9') {
      if (dim > (uint64_t{1} << 50)) throw Refused("array '" + name + "': shape too large");
      dim = dim * 10 + static_cast<uint64_t>(dict[i++] - '0');
    }
    if (shape.size() >= 8) throw Refused("array '" + name + "': more than 8 dimensions");
    if (dim > 0 && elements > (size / item) / dim + 1)
      throw Refused("array '" + name + "': shape larger than its data");
    elements *= dim;
    shape.push_back(static_cast<int64_t>(dim));
    while (i < close && dict[i] == ' ') ++i;
    if (i < close && dict[i] != ',') throw Refused("array '" + name + "': bad shape in .npy header");
  }
  return elements;
}

// The array a member of `size` bytes at npy holds, read from its .npy header (NEP 1: magic, version, header
// length, Python dict literal); its data is left in place.
NpzFile::Array readNpy(const std::string& name, const unsigned char* npy, uint64_t size) {
  if (size < 10 || std::memcmp(npy, "\x93NUMPY", 6) != 0) throw Refused("member '" + name + "' is not a .npy array");
  const int major = npy[6];
  if (major != 1 && major != 2 && major != 3)
    throw Refused("array '" + name + "': unknown .npy version " + std::to_string(major));
  const uint64_t pre = major == 1 ? 10 : 12;
  if (size < pre) throw Refused("array '" + name + "': .npy header truncated");
  const uint64_t hlen = major == 1 ? rd(npy + 8, 2) : rd(npy + 8, 4);
  if (hlen > size - pre)
    throw Refused("array '" + name + "': .npy header length " + std::to_string(hlen) + " is past the member's end");
  const std::string dict(reinterpret_cast<const char*>(npy + pre), hlen);
  NpzFile::Array a;
  size_t d = dict.find("'descr':");
  if (d == std::string::npos) throw Refused("array '" + name + "': no descr in .npy header");
  const size_t q1 = dict.find('\'', d + 8), q2 = q1 == std::string::npos ? q1 : dict.find('\'', q1 + 1);
  if (q2 == std::string::npos) throw Refused("array '" + name + "': unreadable descr in .npy header");
  a.descr = dict.substr(q1 + 1, q2 - q1 - 1);
  const uint64_t item = itemSize(a.descr);
  if (item == 0) throw Refused("array '" + name + "': unsupported dtype '" + a.descr + "'");
  if (dict.find("'fortran_order': True") != std::string::npos) throw Refused("array '" + name + "' is Fortran-ordered");
  const size_t sh = dict.find("'shape':");
  const size_t open = sh == std::string::npos ? sh : dict.find('(', sh);
  const size_t close = open == std::string::npos ? open : dict.find(')', open);
  if (close == std::string::npos) throw Refused("array '" + name + "': no shape in .npy header");
  const uint64_t elements = parseShape(dict, open, close, name, size, item, a.shape);
  a.data = npy + pre + hlen;
  a.bytes = size - pre - hlen;
  if (elements * item != a.bytes)
    throw Refused("array '" + name + "': shape holds " + std::to_string(elements * item) +
                  " bytes but the member has " + std::to_string(a.bytes));
  return a;
}

}  // namespace

// Every offset, length and count below comes from the file, so each is checked against the bytes that are
// there before it is used: a crafted or damaged .npz must give an error naming the member, never a read
// outside the mapping (the file is treated as hostile input).
NpzFile::NpzFile(const std::string& path) : path_(path) {
  // A constructor that throws runs no destructor: the mapping goes here, or every refused file would keep its
  // mapping until the process runs out of them (vm.max_map_count; fuzz/npz_fuzzer found it at ~65,000 files).
  auto fail = [&](const std::string& what) -> void {
    guard_.reset();
    if (map_) ::munmap(map_, size_);
    map_ = nullptr;
    throw std::runtime_error(path_ + ": " + what);
  };
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ < 22) {
    ::close(fd);
    fail("too short to be a .npz (zip) file");
  }
  map_ = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    fail(std::string("cannot memory-map: ") + std::strerror(errno));
  }
  // From here on every byte is read through the mapping (the CRC pass below first): a file truncated or
  // overwritten in place meanwhile faults with SIGBUS, which the guard turns into an error naming it.
  guard_ = MappedFileGuard(map_, size_, path_);
  const unsigned char* base = static_cast<const unsigned char*>(map_);
  try {
    const CentralDirectory cd = findCentralDirectory(base, size_);
    uint64_t p = cd.offset;
    for (uint64_t e = 0; e < cd.count; ++e) {
      Member m = readCentralEntry(base, size_, p);
      const uint64_t data = checkedMemberData(base, size_, m);
      std::string& name = m.name;
      if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;
      name.resize(name.size() - 4);
      Array a = readNpy(name, base + data, m.size);
      // Arrays are read in place through typed pointers, so the data must be aligned for its type. NpzWriter
      // aligns every array; NumPy's savez does not (a member starts wherever the zip puts it): such an array is
      // copied once into aligned memory of its own (item sizes are at most 8).
      if (reinterpret_cast<uintptr_t>(a.data) % itemSize(a.descr) != 0) {
        copies_.push_back(std::make_unique<uint64_t[]>(static_cast<size_t>((a.bytes + 7) / 8)));
        std::memcpy(copies_.back().get(), a.data, static_cast<size_t>(a.bytes));
        a.data = reinterpret_cast<const unsigned char*>(copies_.back().get());
      }
      arrays_[name] = std::move(a);
    }
  } catch (const Refused& r) {
    fail(r.what());
  }
}

NpzFile::~NpzFile() {
  guard_.reset();
  if (map_) ::munmap(map_, size_);
}

const NpzFile::Array& NpzFile::get(const std::string& name) const {
  auto it = arrays_.find(name);
  if (it == arrays_.end()) throw std::runtime_error(path_ + ": no array named '" + name + "'");
  return it->second;
}

const NpzFile::Array& NpzFile::get(const std::string& name, const std::string& descr, size_t rank) const {
  const Array& a = get(name);
  if (a.descr != descr || a.shape.size() != rank)
    throw std::runtime_error(path_ + ": array '" + name + "' has dtype " + a.descr + " and rank " +
                             std::to_string(a.shape.size()) + ", expected " + descr + " and rank " +
                             std::to_string(rank));
  return a;
}

}  // namespace gnn
