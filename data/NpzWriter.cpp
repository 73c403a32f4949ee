#include "data/NpzWriter.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

namespace gnn {

namespace {

[[noreturn]] void ioError(const std::string& file, const std::string& what) {
  throw std::runtime_error(file + ": " + what + ": " + std::strerror(errno));
}

void put16(std::string& b, uint16_t v) {
  b.push_back(static_cast<char>(v & 0xff));
  b.push_back(static_cast<char>(v >> 8));
}
void put32(std::string& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put64(std::string& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// NumPy .npy header, format 1.0 (2.0 when the dict is too long), padded so that magic + header is a
// multiple of 64 bytes (NEP 1 asks for 16; 64 keeps the data cache-line aligned).
std::string npyHeader(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dict += ",";
  dict += "), }";
  const bool v2 = dict.size() + 12 > 65535;
  const size_t pre = v2 ? 12 : 10;
  size_t total = pre + dict.size() + 1;
  const size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string h("\x93NUMPY", 6);
  h.push_back(v2 ? 2 : 1);
  h.push_back(0);
  if (v2)
    put32(h, static_cast<uint32_t>(dict.size()));
  else
    put16(h, static_cast<uint16_t>(dict.size()));
  return h + dict;
}

// DOS date/time of 1980-01-01 00:00: a fixed stamp keeps builds byte-identical.
constexpr uint16_t kDosTime = 0, kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr uint32_t k32 = 0xffffffffu;

}  // namespace

NpzWriter::NpzWriter(std::string path) : path_(std::move(path)) {
  tmpBase_ = path_ + ".tmp-" + std::to_string(::getpid());
}

NpzWriter::~NpzWriter() { removeTemps(); }

void NpzWriter::removeTemps() {
  for (Array& a : arrays_) {
    for (size_t p = 0; p < a.files.size(); ++p) {
      if (a.files[p]) std::fclose(a.files[p]);
      a.files[p] = nullptr;
      std::remove(a.paths[p].c_str());
    }
  }
  if (!finished_) std::remove(tmpBase_.c_str());
}

int NpzWriter::addArray(const std::string& name, const std::string& descr, size_t itemSize,
                        std::vector<int64_t> trailing, int parts) {
  Array a{name, descr, itemSize, std::move(trailing), {}, {}, {}};
  for (int p = 0; p < parts; ++p) {
    a.paths.push_back(tmpBase_ + "." + std::to_string(arrays_.size()) + "." + std::to_string(p));
    std::FILE* f = std::fopen(a.paths.back().c_str(), "w+b");
    if (!f) ioError(a.paths.back(), "cannot create temp file");
    std::setvbuf(f, nullptr, _IOFBF, 1 << 16);
    a.files.push_back(f);
    a.bytes.push_back(0);
  }
  arrays_.push_back(std::move(a));
  return static_cast<int>(arrays_.size()) - 1;
}

void NpzWriter::append(int array, const void* data, size_t bytes, int part) {
  Array& a = arrays_.at(static_cast<size_t>(array));
  if (bytes == 0) return;
  if (std::fwrite(data, 1, bytes, a.files.at(static_cast<size_t>(part))) != bytes)
    ioError(a.paths[static_cast<size_t>(part)], "write failed");
  a.bytes[static_cast<size_t>(part)] += bytes;
}

void NpzWriter::setRows(int array, int64_t rows) {
  if (rows < 0) throw std::invalid_argument("NpzWriter::setRows: rows must be >= 0");
  arrays_.at(static_cast<size_t>(array)).rows = rows;
}

void NpzWriter::finish(const std::function<void()>& poll) {
  // Closed on every way out; an exception leaves the temp zip for removeTemps() (finished_ stays false).
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(tmpBase_.c_str(), "wb"), &std::fclose);
  if (!out) ioError(tmpBase_, "cannot create");
  std::string central;
  uint64_t offset = 0;
  std::vector<char> buf(1 << 20);
  auto write = [&](const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, out.get()) != n) ioError(tmpBase_, "write failed");
    offset += n;
  };
  bool zip64Dir = false;
  for (Array& a : arrays_) {
    if (poll) poll();
    // Shape: [parts,] rows, trailing...
    int64_t perRow = static_cast<int64_t>(a.itemSize);
    for (int64_t d : a.trailing) perRow *= d;
    std::vector<int64_t> shape;
    if (a.files.size() > 1) shape.push_back(static_cast<int64_t>(a.files.size()));
    const int64_t rows = a.rows >= 0 ? a.rows : perRow ? static_cast<int64_t>(a.bytes[0]) / perRow : 0;
    for (uint64_t b : a.bytes)
      if (static_cast<int64_t>(b) != rows * perRow)
        throw std::logic_error("NpzWriter: array '" + a.name + "' parts differ in size or are not whole rows" +
                               (a.rows >= 0 ? " (setRows: " + std::to_string(a.rows) + ")" : std::string()));
    shape.push_back(rows);
    shape.insert(shape.end(), a.trailing.begin(), a.trailing.end());
    const std::string header = npyHeader(a.descr, shape);
    uint64_t size = header.size();
    for (uint64_t b : a.bytes) size += b;
    // CRC-32 of the member: header, then each part's bytes.
    uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(header.data()), static_cast<uInt>(header.size()));
    for (std::FILE* f : a.files) {
      std::fflush(f);
      std::rewind(f);
      size_t n;
      while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
        crc = crc32(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(n));
        if (poll) poll();
      }
    }
    const std::string name = a.name + ".npy";
    const bool big = size >= k32 || offset >= k32;
    zip64Dir = zip64Dir || big;
    // Local header; its extra field carries ZIP64 sizes when needed plus padding that aligns the data.
    std::string extra;
    if (size >= k32) {
      put16(extra, 0x0001);
      put16(extra, 16);
      put64(extra, size);
      put64(extra, size);
    }
    const uint64_t dataStart = offset + 30 + name.size() + extra.size();
    size_t pad = static_cast<size_t>((64 - (dataStart + header.size()) % 64) % 64);
    if (pad > 0 && pad < 4) pad += 64;
    if (pad) {
      put16(extra, 0xd935);  // the id zipalign uses for alignment padding
      put16(extra, static_cast<uint16_t>(pad - 4));
      extra.append(pad - 4, '\0');
    }
    const uint64_t localOffset = offset;
    std::string local;
    put32(local, 0x04034b50);
    put16(local, size >= k32 ? 45 : 20);
    put16(local, 0);
    put16(local, 0);  // stored
    put16(local, kDosTime);
    put16(local, kDosDate);
    put32(local, static_cast<uint32_t>(crc));
    put32(local, size >= k32 ? k32 : static_cast<uint32_t>(size));
    put32(local, size >= k32 ? k32 : static_cast<uint32_t>(size));
    put16(local, static_cast<uint16_t>(name.size()));
    put16(local, static_cast<uint16_t>(extra.size()));
    local += name;
    local += extra;
    write(local.data(), local.size());
    write(header.data(), header.size());
    for (size_t p = 0; p < a.files.size(); ++p) {
      std::rewind(a.files[p]);
      size_t n;
      while ((n = std::fread(buf.data(), 1, buf.size(), a.files[p])) > 0) {
        write(buf.data(), n);
        if (poll) poll();
      }
      if (std::ferror(a.files[p])) ioError(a.paths[p], "read failed");
      std::fclose(a.files[p]);
      a.files[p] = nullptr;
      std::remove(a.paths[p].c_str());
    }
    // Central directory entry.
    std::string cextra;
    if (big) {
      put16(cextra, 0x0001);
      const bool sizeBig = size >= k32, offBig = localOffset >= k32;
      put16(cextra, static_cast<uint16_t>((sizeBig ? 16 : 0) + (offBig ? 8 : 0)));
      if (sizeBig) {
        put64(cextra, size);
        put64(cextra, size);
      }
      if (offBig) put64(cextra, localOffset);
    }
    put32(central, 0x02014b50);
    put16(central, big ? 45 : 20);
    put16(central, big ? 45 : 20);
    put16(central, 0);
    put16(central, 0);
    put16(central, kDosTime);
    put16(central, kDosDate);
    put32(central, static_cast<uint32_t>(crc));
    put32(central, size >= k32 ? k32 : static_cast<uint32_t>(size));
    put32(central, size >= k32 ? k32 : static_cast<uint32_t>(size));
    put16(central, static_cast<uint16_t>(name.size()));
    put16(central, static_cast<uint16_t>(cextra.size()));
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put32(central, 0);
    put32(central, localOffset >= k32 ? k32 : static_cast<uint32_t>(localOffset));
    central += name;
    central += cextra;
  }
  const uint64_t cdOffset = offset, cdSize = central.size(), count = arrays_.size();
  write(central.data(), central.size());
  std::string end;
  if (zip64Dir || cdOffset >= k32) {
    const uint64_t z64Offset = offset;
    put32(end, 0x06064b50);
    put64(end, 44);
    put16(end, 45);
    put16(end, 45);
    put32(end, 0);
    put32(end, 0);
    put64(end, count);
    put64(end, count);
    put64(end, cdSize);
    put64(end, cdOffset);
    put32(end, 0x07064b50);
    put32(end, 0);
    put64(end, z64Offset);
    put32(end, 1);
  }
  put32(end, 0x06054b50);
  put16(end, 0);
  put16(end, 0);
  put16(end, static_cast<uint16_t>(count));
  put16(end, static_cast<uint16_t>(count));
  put32(end, cdSize >= k32 ? k32 : static_cast<uint32_t>(cdSize));
  put32(end, cdOffset >= k32 ? k32 : static_cast<uint32_t>(cdOffset));
  put16(end, 0);
  write(end.data(), end.size());
  if (std::fflush(out.get()) != 0 || ::fsync(::fileno(out.get())) != 0) ioError(tmpBase_, "flush failed");
  if (std::fclose(out.release()) != 0) ioError(tmpBase_, "close failed");
  std::error_code ec;
  std::filesystem::rename(tmpBase_, path_, ec);
  if (ec) throw std::runtime_error(path_ + ": cannot rename the finished dataset into place: " + ec.message());
  finished_ = true;
}

}  // namespace gnn
