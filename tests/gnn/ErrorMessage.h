// What an op's argument check says: the message of the std::invalid_argument a call throws, for tests that
// check the message names the mismatch.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>

namespace gnn::testing {

/// The message of the std::invalid_argument f throws, or "(no exception)".
inline std::string messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

}  // namespace gnn::testing
