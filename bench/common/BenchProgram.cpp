#include "bench/common/BenchProgram.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace gnn::bench {

namespace {
// Wide enough that a flag's description is not squeezed into a narrow column next to a long default path.
constexpr unsigned kLineLength = 110;
}  // namespace

std::string formatNumber(double v) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

void requireAtLeast(const std::string& flag, int64_t v, int64_t min) {
  if (v < min) throw UsageError(flag + " " + std::to_string(v) + ": must be at least " + std::to_string(min));
}

void requireRange(const std::string& flag, int64_t v, int64_t min, int64_t max) {
  if (v < min || v > max)
    throw UsageError(flag + " " + std::to_string(v) + ": must be between " + std::to_string(min) + " and " +
                     std::to_string(max));
}

void requireOneOf(const std::string& flag, const std::string& v, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw UsageError(flag + " '" + v + "': must be one of " + list);
}

std::vector<std::string> requireListOf(const std::string& flag, const std::string& v,
                                       std::initializer_list<const char*> allowed) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    requireOneOf(flag, item, allowed);
    out.push_back(item);
  }
  if (out.empty()) {
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw UsageError(flag + " '" + v + "': names none of " + list);
  }
  return out;
}

void requireInput(const std::string& flag, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw std::runtime_error(flag + " " + path + ": no such file or directory");
}

int machineCores() {
  static const int cores = std::max(1, omp_get_num_procs());
  return cores;
}

void requireThreads(const std::string& flag, int64_t v) {
  const int cores = machineCores();
  if (v < 0 || v > cores)
    throw UsageError(flag + " " + std::to_string(v) + ": must be between 0 (all cores) and " +
                     std::to_string(cores) + " (the cores this machine gives the program)");
}

std::string shippedDataLabel(const std::string& name) {
  return "examples/data/" + name;
}

std::string shippedData(const std::string& name) {
  namespace fs = std::filesystem;
  const std::string label = shippedDataLabel(name);
  for (const fs::path& p : {fs::path(label), fs::path("..") / label, fs::path(GNN_SOURCE_DIR) / label}) {
    std::error_code ec;
    if (fs::exists(p, ec)) return p.string();
  }
  return label;
}

BenchProgram::BenchProgram(std::string name, std::string summary, std::string about)
    : name_(std::move(name)),
      summary_(std::move(summary)),
      about_(std::move(about)),
      flags_("Options", kLineLength, kLineLength / 2) {
  flags_.add_options()("help,h", "show this help and exit");
}

void BenchProgram::note(const std::string& text) const {
  std::cerr << name_ << ": note: " << text << "\n";
}

std::string BenchProgram::helpHeader() const {
  return name_ + ": " + summary_ + "\n\n" + about_ + (about_.empty() || about_.back() == '\n' ? "" : "\n");
}

std::string BenchProgram::usageHint() const {
  return " (see " + name_ + " --help)";
}

int BenchProgram::run(int argc, char** argv, const std::function<int()>& body) {
  try {
    po::store(po::parse_command_line(argc, argv, flags_), vm_);
    po::notify(vm_);
  } catch (const po::error& e) {
    std::cerr << name_ << ": " << e.what() << usageHint() << "\n";
    return 2;
  }
  if (vm_.count("help")) {
    std::cout << helpHeader() << "\n" << flags_ << "\n";
    return 0;
  }
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << name_ << ": " << e.what() << usageHint() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << name_ << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gnn::bench
