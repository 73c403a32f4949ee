#include "data/NpzFile.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
  for (int64_t d : shape) n *= d;
  return n;
}

NpzFile::NpzFile(const std::string& path) : path_(path) {
  auto fail = [&](const std::string& what) -> void { throw std::runtime_error(path_ + ": " + what); };
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
  const unsigned char* base = static_cast<const unsigned char*>(map_);
  // End of central directory: the last 0x06054b50 within the final 64 KiB + 22 bytes.
  int64_t eocd = -1;
  for (int64_t p = static_cast<int64_t>(size_) - 22; p >= 0 && p >= static_cast<int64_t>(size_) - 65557; --p)
    if (rd(base + p, 4) == 0x06054b50) {
      eocd = p;
      break;
    }
  if (eocd < 0) fail("no zip end-of-central-directory record (truncated or not a .npz)");
  uint64_t count = rd(base + eocd + 10, 2), cdOffset = rd(base + eocd + 16, 4);
  if (eocd >= 20 && rd(base + eocd - 20, 4) == 0x07064b50) {
    const uint64_t z = rd(base + eocd - 20 + 8, 8);
    if (z + 56 > size_ || rd(base + z, 4) != 0x06064b50) fail("broken ZIP64 end record");
    count = rd(base + z + 32, 8);
    cdOffset = rd(base + z + 48, 8);
  }
  uint64_t p = cdOffset;
  for (uint64_t e = 0; e < count; ++e) {
    if (p + 46 > size_ || rd(base + p, 4) != 0x02014b50) fail("broken central directory");
    const uint64_t method = rd(base + p + 10, 2);
    uint64_t size = rd(base + p + 24, 4), local = rd(base + p + 42, 4);
    const uint64_t nameLen = rd(base + p + 28, 2), extraLen = rd(base + p + 30, 2), commentLen = rd(base + p + 32, 2);
    std::string name(reinterpret_cast<const char*>(base + p + 46), nameLen);
    // ZIP64 extra: the 64-bit values present are those whose 32-bit field is 0xffffffff, in order
    // uncompressed size, compressed size, local header offset.
    const unsigned char* x = base + p + 46 + nameLen;
    for (uint64_t q = 0; q + 4 <= extraLen;) {
      const uint64_t id = rd(x + q, 2), len = rd(x + q + 2, 2);
      if (id == 1) {
        const unsigned char* v = x + q + 4;
        if (size == 0xffffffffu) {
          size = rd(v, 8);
          v += 16;
        }
        if (local == 0xffffffffu) local = rd(v, 8);
      }
      q += 4 + len;
    }
    p += 46 + nameLen + extraLen + commentLen;
    if (method != 0) fail("member '" + name + "' is compressed; only stored (uncompressed) .npz can be mapped");
    if (local + 30 > size_ || rd(base + local, 4) != 0x04034b50) fail("broken local header for '" + name + "'");
    const uint64_t data = local + 30 + rd(base + local + 26, 2) + rd(base + local + 28, 2);
    if (data + size > size_) fail("member '" + name + "' runs past the end of the file (truncated?)");
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;
    name.resize(name.size() - 4);
    // .npy header (NEP 1): magic, version, header length, Python dict literal.
    const unsigned char* npy = base + data;
    if (size < 10 || std::memcmp(npy, "\x93NUMPY", 6) != 0) fail("member '" + name + "' is not a .npy array");
    const int major = npy[6];
    const uint64_t hlen = major == 1 ? rd(npy + 8, 2) : rd(npy + 8, 4);
    const uint64_t pre = major == 1 ? 10 : 12;
    std::string dict(reinterpret_cast<const char*>(npy + pre), hlen);
    Array a;
    size_t d = dict.find("'descr':");
    if (d == std::string::npos) fail("array '" + name + "': no descr in .npy header");
    d = dict.find('\'', d + 8);
    a.descr = dict.substr(d + 1, dict.find('\'', d + 1) - d - 1);
    if (dict.find("'fortran_order': True") != std::string::npos) fail("array '" + name + "' is Fortran-ordered");
    size_t s = dict.find('(', dict.find("'shape':"));
    const size_t close = dict.find(')', s);
    for (size_t i = s + 1; i < close;) {
      while (i < close && (dict[i] == ' ' || dict[i] == ',')) ++i;
      if (i >= close) break;
      a.shape.push_back(std::stoll(dict.substr(i)));
      while (i < close && dict[i] != ',') ++i;
    }
    a.data = npy + pre + hlen;
    a.bytes = size - pre - hlen;
    arrays_[name] = std::move(a);
  }
}

NpzFile::~NpzFile() {
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
