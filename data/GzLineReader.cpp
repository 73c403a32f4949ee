#include "data/GzLineReader.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstdio>
#include <cstring>

namespace gnn {

InputError::InputError(const std::string& file, int64_t line, const std::string& what)
    : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + what),
      file_(file),
      line_(line) {}

// zlib's gzread ignores whatever follows the last gzip member, so a file with garbage appended reads as
// complete. The members are inflated here instead: after each one the next bytes must start another member
// (concatenated .gz files are valid gzip) or be zero padding, as Python's gzip module requires.
struct GzLineReader::Gz {
  FILE* raw = nullptr;
  z_stream strm{};
  bool gzip = false, inflating = false, memberDone = false;
  std::vector<unsigned char> in = std::vector<unsigned char>(1 << 18);
  uint64_t consumed = 0;  // compressed bytes read from the file so far
  ~Gz() {
    if (inflating) inflateEnd(&strm);
    if (raw) std::fclose(raw);
  }
};

GzLineReader::GzLineReader(std::string path) : path_(std::move(path)), buf_(1 << 20), gz_(std::make_unique<Gz>()) {
  gz_->raw = std::fopen(path_.c_str(), "rb");
  if (!gz_->raw) throw InputError(path_, 0, std::string("cannot open: ") + std::strerror(errno));
  const size_t n = std::fread(gz_->in.data(), 1, gz_->in.size(), gz_->raw);
  gz_->consumed = n;
  gz_->strm.next_in = gz_->in.data();
  gz_->strm.avail_in = static_cast<uInt>(n);
  gz_->gzip = n >= 2 && gz_->in[0] == 0x1f && gz_->in[1] == 0x8b;
  if (gz_->gzip) {
    if (inflateInit2(&gz_->strm, 16 + MAX_WBITS) != Z_OK) throw InputError(path_, 0, "zlib cannot start");
    gz_->inflating = true;
  }
}

GzLineReader::~GzLineReader() = default;

void GzLineReader::fail(const std::string& what) const { throw InputError(path_, line_, what); }

bool GzLineReader::fill() {
  if (eof_) return false;
  Gz& g = *gz_;
  auto readMore = [&] {
    const size_t n = std::fread(g.in.data(), 1, g.in.size(), g.raw);
    if (n == 0 && std::ferror(g.raw)) throw InputError(path_, line_ + 1, std::string("read error: ") + std::strerror(errno));
    g.consumed += n;
    g.strm.next_in = g.in.data();
    g.strm.avail_in = static_cast<uInt>(n);
    return n > 0;
  };
  if (!g.gzip) {
    // Plain text: the bytes already read, then the rest of the file.
    if (g.strm.avail_in == 0 && !readMore()) {
      eof_ = true;
      return false;
    }
    std::memcpy(buf_.data(), g.strm.next_in, g.strm.avail_in);
    begin_ = 0;
    end_ = g.strm.avail_in;
    g.strm.avail_in = 0;
    return true;
  }
  g.strm.next_out = reinterpret_cast<Bytef*>(buf_.data());
  g.strm.avail_out = static_cast<uInt>(buf_.size());
  while (g.strm.avail_out == buf_.size()) {
    if (g.strm.avail_in == 0 && !readMore()) {
      if (g.memberDone) {
        eof_ = true;
        return false;
      }
      throw InputError(path_, line_ + 1, "truncated gzip data (the file ends inside the compressed stream)");
    }
    if (g.memberDone) {
      // Between members: zero padding, or the header of another member; anything else is not gzip.
      while (g.strm.avail_in > 0 && *g.strm.next_in == 0) ++g.strm.next_in, --g.strm.avail_in;
      if (g.strm.avail_in == 0) continue;
      const uint64_t at = g.consumed - g.strm.avail_in;
      if (*g.strm.next_in != 0x1f || (g.strm.avail_in > 1 && g.strm.next_in[1] != 0x8b))
        throw InputError(path_, 0,
                         "data after the end of the gzip stream (byte " + std::to_string(at) +
                             ") is not another gzip member: the file is corrupt or has something appended");
      inflateReset(&g.strm);
      g.memberDone = false;
    }
    const int ret = inflate(&g.strm, Z_NO_FLUSH);
    if (ret == Z_STREAM_END) {
      g.memberDone = true;
    } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
      throw InputError(path_, line_ + 1,
                       std::string("corrupt gzip data (") + (g.strm.msg ? g.strm.msg : "inflate failed") + ")");
    }
  }
  begin_ = 0;
  end_ = buf_.size() - g.strm.avail_out;
  return true;
}

bool GzLineReader::next(std::string_view& line) {
  carry_.clear();
  bool haveCarry = false;
  for (;;) {
    if (begin_ == end_ && !fill()) {
      if (!haveCarry) return false;
      break;
    }
    const char* start = buf_.data() + begin_;
    const char* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    if (nl) {
      size_t len = static_cast<size_t>(nl - start);
      begin_ += len + 1;
      if (!haveCarry) {
        line = std::string_view(start, len);
        ++line_;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return true;
      }
      carry_.append(start, len);
      break;
    }
    carry_.append(start, end_ - begin_);
    haveCarry = true;
    begin_ = end_;
  }
  ++line_;
  line = carry_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return true;
}

void splitFields(std::string_view line, char sep, std::vector<std::string_view>& out) {
  out.clear();
  size_t start = 0;
  for (;;) {
    size_t p = line.find(sep, start);
    if (p == std::string_view::npos) {
      out.push_back(line.substr(start));
      return;
    }
    out.push_back(line.substr(start, p - start));
    start = p + 1;
  }
}

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
}  // namespace

int64_t parseInt(std::string_view field, const GzLineReader& where) {
  std::string_view f = trim(field);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (ec != std::errc() || p != f.data() + f.size() || f.empty())
    where.fail("expected an integer, found '" + std::string(field) + "'");
  return v;
}

double parseDouble(std::string_view field, const GzLineReader& where) {
  std::string f(trim(field));
  char* endp = nullptr;
  double v = std::strtod(f.c_str(), &endp);
  if (f.empty() || endp != f.c_str() + f.size()) where.fail("expected a number, found '" + std::string(field) + "'");
  return v;
}

}  // namespace gnn
