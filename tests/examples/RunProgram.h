// Runs an example program for the end-to-end tests: its exit code and output (stdout, and stderr unless
// left out); the check of a bad command line (exit code 2, the message in flag terms); and the last JSON object
// a `--json` run printed.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace gnn::testing {

struct ProgramResult {
  int code;
  std::string out;
};

inline ProgramResult runProgram(const std::string& command, bool withStderr = true) {
  std::string cmd = command + (withStderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

/// Runs build/<...>/examples/<program> with `args`.
inline ProgramResult runExample(const std::string& program, const std::string& args, bool withStderr = true) {
  return runProgram(std::string(GNN_BINARY_DIR) + "/examples/" + program + " " + args, withStderr);
}

/// A command line refused as a usage error: exit code 2 and `needle` in the output.
inline void expectUsageError(const ProgramResult& r, const std::string& needle) {
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << "missing '" << needle << "' in: " << r.out;
}

/// The last JSON object in a program's output (`--json` prints one object on a line of its own, after any
/// progress lines).
inline nlohmann::json lastJson(const std::string& out) {
  const size_t at = out.rfind("\n{");
  return nlohmann::json::parse(out.substr(at == std::string::npos ? out.find('{') : at + 1));
}

}  // namespace gnn::testing
