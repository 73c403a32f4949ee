// Runs an example program for the end-to-end tests: its exit code and output (stdout, and stderr unless
// left out).
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
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

}  // namespace gnn::testing
