// Error helpers. User errors (bad shapes, bad input) throw exceptions with a message that names what was
// wrong and how to fix it; broken internal invariants fail through GNN_ASSERT with file and line.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace gnn {
namespace detail {
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
[[noreturn]] void assertionFailed(const char* expr, const char* file, int line, const std::string& msg);
}  // namespace detail

/// Throws std::invalid_argument built from the streamed arguments.
template <class... Args>
[[noreturn]] void invalidArgument(const Args&... args) {
  throw std::invalid_argument(detail::concat(args...));
}
}  // namespace gnn

#define GNN_ASSERT(cond, ...)                                                                        \
  do {                                                                                              \
    if (!(cond)) ::gnn::detail::assertionFailed(#cond, __FILE__, __LINE__, ::gnn::detail::concat("", ##__VA_ARGS__)); \
  } while (0)

/// Check of a caller's argument: throws std::invalid_argument with the message when cond is false.
#define GNN_CHECK_ARG(cond, ...)                          \
  do {                                                    \
    if (!(cond)) ::gnn::invalidArgument(__VA_ARGS__);     \
  } while (0)
