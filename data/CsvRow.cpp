#include "data/CsvRow.h"

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

}  // namespace gnn
