#include "data/GzLineReader.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace gnn {

InputError::InputError(const std::string& file, int64_t line, const std::string& what)
    : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + what),
      file_(file),
      line_(line) {}

GzLineReader::GzLineReader(std::string path) : path_(std::move(path)), buf_(1 << 20) {
  gzFile f = gzopen(path_.c_str(), "rb");
  if (!f) throw InputError(path_, 0, std::string("cannot open: ") + std::strerror(errno));
  gzbuffer(f, 1 << 18);
  file_ = f;
}

GzLineReader::~GzLineReader() {
  if (file_) gzclose(static_cast<gzFile>(file_));
}

void GzLineReader::fail(const std::string& what) const { throw InputError(path_, line_, what); }

bool GzLineReader::fill() {
  if (eof_) return false;
  int n = gzread(static_cast<gzFile>(file_), buf_.data(), static_cast<unsigned>(buf_.size()));
  if (n < 0) {
    int err = 0;
    const char* msg = gzerror(static_cast<gzFile>(file_), &err);
    throw InputError(path_, line_ + 1, std::string("corrupt or truncated gzip data (") + msg + ")");
  }
  if (n == 0) {
    // zlib reports a truncated stream only through gzerror after the final read.
    int err = 0;
    const char* msg = gzerror(static_cast<gzFile>(file_), &err);
    if (err != Z_OK && err != Z_STREAM_END)
      throw InputError(path_, line_ + 1, std::string("corrupt or truncated gzip data (") + msg + ")");
    eof_ = true;
    return false;
  }
  begin_ = 0;
  end_ = static_cast<size_t>(n);
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
