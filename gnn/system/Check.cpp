#include "gnn/system/Check.h"

#include <cstdio>
#include <cstdlib>

namespace gnn::detail {
void assertionFailed(const char* expr, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "gnn: internal error at %s:%d: %s %s\n", file, line, expr, msg.c_str());
  std::abort();
}
}  // namespace gnn::detail
