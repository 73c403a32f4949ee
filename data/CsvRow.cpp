#include "data/CsvRow.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace gnn {

bool CsvRow::parse(std::string_view line, char sep) {
  count_ = 0;
  auto field = [&]() -> std::string& {
    if (count_ == fields_.size()) fields_.emplace_back();
    std::string& f = fields_[count_++];
    f.clear();
    return f;
  };
  std::string* cur = &field();
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur->push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur->push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == sep) {
      cur = &field();
    } else {
      cur->push_back(c);
    }
  }
  fields_.resize(count_);
  return !quoted;
}

bool csvNumber(const std::string& field, double& v) {
  const size_t b = field.find_first_not_of(" \t\r"), e = field.find_last_not_of(" \t\r");
  if (b == std::string::npos) {
    v = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  const std::string s = field.substr(b, e - b + 1);
  char* end = nullptr;
  errno = 0;
  v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  if (errno == ERANGE && std::isfinite(v)) v = 0;  // an underflow reads as 0
  return true;
}

}  // namespace gnn
