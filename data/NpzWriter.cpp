#include "data/NpzWriter.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
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

// A member's local header written at `offset`: its extra field carries ZIP64 sizes when needed plus padding that
// aligns the data (after the .npy header of `npyHeaderBytes`) to 64 bytes in the file.
std::string localHeader(const std::string& name, uint64_t offset, size_t npyHeaderBytes, uint64_t size, uLong crc) {
  std::string extra;
  if (size >= k32) {
    put16(extra, 0x0001);
    put16(extra, 16);
    put64(extra, size);
    put64(extra, size);
  }
  const uint64_t dataStart = offset + 30 + name.size() + extra.size();
  size_t pad = static_cast<size_t>((64 - (dataStart + npyHeaderBytes) % 64) % 64);
  if (pad > 0 && pad < 4) pad += 64;
  if (pad) {
    put16(extra, 0xd935);  // the id zipalign uses for alignment padding
    put16(extra, static_cast<uint16_t>(pad - 4));
    extra.append(pad - 4, '\0');
  }
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
  return local;
}

// Appends a member's central directory entry; `big` when its size or its local header's offset needs ZIP64.
void appendCentralEntry(std::string& central, const std::string& name, uint64_t size, uint64_t localOffset,
                        uLong crc, bool big) {
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

// The records after the central directory of `count` entries, `cdSize` bytes at `cdOffset`: the ZIP64 end record
// and its locator when `zip64` or the offset needs them, then the end of central directory record.
std::string endRecords(uint64_t cdOffset, uint64_t cdSize, uint64_t count, bool zip64) {
  std::string end;
  if (zip64 || cdOffset >= k32) {
    const uint64_t z64Offset = cdOffset + cdSize;  // right after the central directory
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
  return end;
}

}  // namespace

NpzWriter::NpzWriter(std::string path) : path_(std::move(path)) {
  tmpBase_ = path_ + ".tmp-" + std::to_string(::getpid());
}

NpzWriter::NpzWriter(std::string path, std::string stateDir) : NpzWriter(std::move(path)) {
  stateDir_ = std::move(stateDir);
}

std::vector<int64_t> NpzWriter::snapshot() {
  layoutFixed_ = true;
  std::vector<int64_t> state;
  for (Array& a : arrays_) {
    for (size_t p = 0; p < a.files.size(); ++p) {
      if (std::fflush(a.files[p]) != 0 || ::fsync(::fileno(a.files[p])) != 0) ioError(a.paths[p], "flush failed");
      state.push_back(static_cast<int64_t>(a.bytes[p]));
    }
    state.push_back(a.width);
    state.push_back(a.paddedRows);
    state.push_back(a.maxValue);
  }
  return state;
}

void NpzWriter::restore(const std::vector<int64_t>& state) {
  layoutFixed_ = true;
  size_t at = 0;
  for (Array& a : arrays_) {
    if (at + a.files.size() + 3 > state.size()) throw std::runtime_error(path_ + ": resume state does not match the arrays");
    for (size_t p = 0; p < a.files.size(); ++p) {
      const int64_t bytes = state[at++];
      std::fflush(a.files[p]);
      struct stat st {};
      if (bytes < 0 || ::fstat(::fileno(a.files[p]), &st) != 0 || st.st_size < bytes)
        throw std::runtime_error(a.paths[p] + ": shorter than the resume state says (" + std::to_string(bytes) +
                                 " bytes): remove " + stateDir_ + " and build again");
      if (::ftruncate(::fileno(a.files[p]), bytes) != 0) ioError(a.paths[p], "cannot truncate");
      std::fseek(a.files[p], 0, SEEK_END);
      a.bytes[p] = static_cast<uint64_t>(bytes);
    }
    a.width = state[at++];
    a.paddedRows = state[at++];
    a.maxValue = state[at++];  // values appended after the snapshot were cut off with their bytes
  }
  if (at != state.size()) throw std::runtime_error(path_ + ": resume state does not match the arrays");
}

NpzWriter::~NpzWriter() { removeTemps(); }

void NpzWriter::removeTemps() {
  for (Array& a : arrays_) {
    for (size_t p = 0; p < a.files.size(); ++p) {
      if (a.files[p]) std::fclose(a.files[p]);
      a.files[p] = nullptr;
      // A resumable writer's arrays outlive an unfinished build: they are what --resume continues from.
      if (stateDir_.empty() || finished_) std::remove(a.paths[p].c_str());
    }
  }
  if (!finished_) std::remove(tmpBase_.c_str());
}

int NpzWriter::addArray(const std::string& name, const std::string& descr, size_t itemSize,
                        std::vector<int64_t> trailing, int parts) {
  Array a;
  a.name = name;
  a.descr = descr;
  a.itemSize = itemSize;
  a.trailing = std::move(trailing);
  for (int p = 0; p < parts; ++p) {
    const std::string suffix = std::to_string(arrays_.size()) + "." + std::to_string(p);
    a.paths.push_back(stateDir_.empty() ? tmpBase_ + "." + suffix : stateDir_ + "/" + suffix);
    // A resumable writer reopens what a killed build left (restore() then cuts it back to the snapshot).
    // Arrays declared after a snapshot or restore (the splits, at the end) start empty.
    std::FILE* f = stateDir_.empty() || layoutFixed_ ? nullptr : std::fopen(a.paths.back().c_str(), "r+b");
    if (f) std::fseek(f, 0, SEEK_END);
    if (!f) f = std::fopen(a.paths.back().c_str(), "w+b");
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

int NpzWriter::addPaddedArray(const std::string& name, const std::string& descr, size_t itemSize,
                              std::vector<int64_t> trailing, const std::string& fill, int64_t minWidth) {
  if (fill.size() != itemSize) throw std::invalid_argument("NpzWriter::addPaddedArray: fill must be one item");
  const int a = addArray(name, descr, itemSize, std::move(trailing));
  Array& arr = arrays_[static_cast<size_t>(a)];
  arr.padded = true;
  arr.fill = fill;
  arr.width = std::max<int64_t>(0, minWidth);
  return a;
}

void NpzWriter::appendRows(int array, const void* data, int64_t rows, int64_t width) {
  Array& a = arrays_.at(static_cast<size_t>(array));
  if (!a.padded || rows < 0 || width < 0) throw std::invalid_argument("NpzWriter::appendRows: not a padded array");
  if (rows == 0) return;
  size_t inner = a.itemSize;
  for (int64_t d : a.trailing) inner *= static_cast<size_t>(d);
  const int64_t head[2] = {rows, width};
  append(array, head, sizeof head);
  append(array, data, static_cast<size_t>(rows) * static_cast<size_t>(width) * inner);
  a.width = std::max(a.width, width);
  a.paddedRows += rows;
}

int64_t NpzWriter::width(int array) const { return arrays_.at(static_cast<size_t>(array)).width; }

int NpzWriter::addNarrowArray(const std::string& name, std::vector<int64_t> trailing, int parts, int64_t sentinel) {
  const int a = addArray(name, "<i4", 4, std::move(trailing), parts);
  Array& arr = arrays_[static_cast<size_t>(a)];
  arr.narrow = true;
  arr.sentinel = sentinel;
  return a;
}

void NpzWriter::appendNarrow(int array, const int32_t* values, size_t count, int part) {
  Array& a = arrays_.at(static_cast<size_t>(array));
  if (!a.narrow) throw std::invalid_argument("NpzWriter::appendNarrow: '" + a.name + "' is not a narrow array");
  int64_t top = a.maxValue;
  for (size_t i = 0; i < count; ++i) {
    const int64_t v = values[i];
    if (v == a.sentinel) continue;
    if (v < 0)
      throw std::invalid_argument("NpzWriter::appendNarrow: '" + a.name + "' holds non-negative values, got " +
                                  std::to_string(v));
    top = std::max(top, v);
  }
  append(array, values, count * 4, part);
  a.maxValue = top;
}

size_t NpzWriter::finalItemSize(const Array& a) const {
  if (!a.narrow) return a.itemSize;
  // With a sentinel the dtype's largest value is taken by it: the others must stay below.
  const int64_t need = a.sentinel == kNoSentinel ? a.maxValue : a.maxValue + 1;
  return need <= 0xff ? 1 : need <= 0xffff ? 2 : 4;
}

std::string NpzWriter::descr(int array) const {
  const Array& a = arrays_.at(static_cast<size_t>(array));
  if (!a.narrow) return a.descr;
  const size_t item = finalItemSize(a);
  return item == 1 ? "|u1" : item == 2 ? "<u2" : "<u4";
}

void NpzWriter::readArray(Array& a, std::vector<char>& buf, const std::function<void(const char*, size_t)>& sink,
                          const std::function<void()>& poll) {
  for (size_t p = 0; p < a.files.size(); ++p) {
    std::FILE* f = a.files[p];
    std::fflush(f);
    std::rewind(f);
    if (a.narrow) {
      // int32 items narrowed to the chosen width (little-endian, as NumPy's '<' and every target here), the
      // sentinel to that width's largest value.
      const size_t item = finalItemSize(a);
      const uint32_t top = item == 1 ? 0xffu : item == 2 ? 0xffffu : 0xffffffffu;
      std::vector<char> out(buf.size() / 4 * item);
      size_t n;
      while ((n = std::fread(buf.data(), 4, buf.size() / 4, f)) > 0) {
        for (size_t i = 0; i < n; ++i) {
          int32_t v;
          std::memcpy(&v, &buf[i * 4], 4);
          const uint32_t u = v == a.sentinel ? top : static_cast<uint32_t>(v);
          std::memcpy(&out[i * item], &u, item);
        }
        sink(out.data(), n * item);
        if (poll) poll();
      }
    } else if (!a.padded) {
      size_t n;
      while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
        sink(buf.data(), n);
        if (poll) poll();
      }
    } else {
      // Runs of (rows, width) headers and rows x width items; rows are widened with the fill item in batches
      // of about buf's size, so the CRC and the write see large pieces.
      size_t inner = a.itemSize;
      for (int64_t d : a.trailing) inner *= static_cast<size_t>(d);
      const size_t wide = static_cast<size_t>(a.width) * inner;
      if (wide == 0) continue;
      const size_t batch = std::max<size_t>(1, buf.size() / wide);
      std::vector<char> out(batch * wide), in;
      // The fill after `filledGiven` bytes is in place in out's first `filledRows` rows (data only overwrites
      // the first `given` bytes of a row), so a run of the same width as the last one refills nothing.
      size_t filledGiven = 0, filledRows = 0;
      int64_t head[2];
      while (std::fread(head, sizeof head, 1, f) == 1) {
        const size_t given = static_cast<size_t>(head[1]) * inner;
        if (given != filledGiven) filledGiven = given, filledRows = 0;
        in.resize(batch * given);
        for (int64_t left = head[0]; left > 0;) {
          const size_t n = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(batch)));
          for (; filledRows < n; ++filledRows)
            for (size_t at = given; at < wide; at += a.itemSize)
              std::memcpy(&out[filledRows * wide + at], a.fill.data(), a.itemSize);
          if (given && std::fread(in.data(), 1, n * given, f) != n * given) ioError(a.paths[p], "read failed");
          for (size_t r = 0; r < n; ++r) std::memcpy(&out[r * wide], &in[r * given], given);
          sink(out.data(), n * wide);
          left -= static_cast<int64_t>(n);
          if (poll) poll();
        }
      }
    }
    if (std::ferror(f)) ioError(a.paths[p], "read failed");
  }
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
    // Shape: [parts,] rows, trailing...; a padded array's width is the first trailing dimension.
    std::vector<int64_t> trailing = a.trailing;
    if (a.padded) trailing.insert(trailing.begin(), a.width);
    // perRow: bytes of a row in the temp file; a narrow array's rows shrink to outRow in the zip.
    int64_t perRow = static_cast<int64_t>(a.itemSize), outRow = static_cast<int64_t>(finalItemSize(a));
    for (int64_t d : trailing) perRow *= d, outRow *= d;
    std::vector<int64_t> shape;
    if (a.files.size() > 1) shape.push_back(static_cast<int64_t>(a.files.size()));
    int64_t rows = a.rows >= 0 ? a.rows : perRow ? static_cast<int64_t>(a.bytes[0]) / perRow : 0;
    if (a.padded) rows = a.paddedRows;
    for (uint64_t b : a.bytes)
      if (!a.padded && static_cast<int64_t>(b) != rows * perRow)
        throw std::logic_error("NpzWriter: array '" + a.name + "' parts differ in size or are not whole rows" +
                               (a.rows >= 0 ? " (setRows: " + std::to_string(a.rows) + ")" : std::string()));
    shape.push_back(rows);
    shape.insert(shape.end(), trailing.begin(), trailing.end());
    const std::string header = npyHeader(descr(static_cast<int>(&a - arrays_.data())), shape);
    uint64_t size = header.size();
    if (a.padded)
      size += static_cast<uint64_t>(rows) * static_cast<uint64_t>(perRow);
    else
      size += static_cast<uint64_t>(rows) * static_cast<uint64_t>(outRow) * a.files.size();
    // CRC-32 of the member: header, then each part's bytes.
    uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(header.data()), static_cast<uInt>(header.size()));
    readArray(
        a, buf,
        [&](const char* d, size_t n) { crc = crc32(crc, reinterpret_cast<const Bytef*>(d), static_cast<uInt>(n)); },
        poll);
    const std::string name = a.name + ".npy";
    const bool big = size >= k32 || offset >= k32;
    zip64Dir = zip64Dir || big;
    const uint64_t localOffset = offset;
    const std::string local = localHeader(name, offset, header.size(), size, crc);
    write(local.data(), local.size());
    write(header.data(), header.size());
    readArray(a, buf, [&](const char* d, size_t n) { write(d, n); }, poll);
    // Each array's temp file goes as soon as it is copied (the disk holds the data about once, not twice);
    // a resumable writer keeps them until the zip is in place, so a stop while assembling can still resume.
    for (size_t p = 0; p < a.files.size() && stateDir_.empty(); ++p) {
      std::fclose(a.files[p]);
      a.files[p] = nullptr;
      std::remove(a.paths[p].c_str());
    }
    appendCentralEntry(central, name, size, localOffset, crc, big);
  }
  const uint64_t cdOffset = offset, cdSize = central.size(), count = arrays_.size();
  write(central.data(), central.size());
  const std::string end = endRecords(cdOffset, cdSize, count, zip64Dir);
  write(end.data(), end.size());
  if (std::fflush(out.get()) != 0 || ::fsync(::fileno(out.get())) != 0) ioError(tmpBase_, "flush failed");
  if (std::fclose(out.release()) != 0) ioError(tmpBase_, "close failed");
  std::error_code ec;
  std::filesystem::rename(tmpBase_, path_, ec);
  if (ec) throw std::runtime_error(path_ + ": cannot rename the finished dataset into place: " + ec.message());
  finished_ = true;
}

}  // namespace gnn
