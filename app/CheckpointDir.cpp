#include "app/CheckpointDir.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>

namespace gnn::app {

namespace fs = std::filesystem;

CheckpointDir::CheckpointDir(std::string dir, int64_t keep) : dir_(std::move(dir)), keep_(std::max<int64_t>(keep, 1)) {}

std::string CheckpointDir::pathFor(int64_t step) const {
  char name[48];
  std::snprintf(name, sizeof name, "ckpt-%012lld.ckpt", static_cast<long long>(step));
  return (fs::path(dir_) / name).string();
}

std::string CheckpointDir::write(const Checkpoint& ck, int64_t step) const {
  const std::string path = pathFor(step);
  ck.save(path);
  const std::vector<std::string> all = files();
  for (size_t i = static_cast<size_t>(keep_); i < all.size(); ++i) {
    std::error_code ec;
    fs::remove(all[i], ec);
  }
  return path;
}

std::vector<std::string> CheckpointDir::files() const {
  static const std::regex pattern(R"(ckpt-(\d{12})\.ckpt)");
  std::vector<std::pair<std::string, std::string>> found;  // (step digits, path)
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && std::regex_match(name, m, pattern)) found.emplace_back(m[1].str(), e.path().string());
  }
  // Zero-padded steps sort as numbers.
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& [step, path] : found) out.push_back(path);
  return out;
}

std::optional<CheckpointDir::Found> CheckpointDir::newestValid(std::ostream& report) const {
  for (const std::string& path : files()) {
    try {
      return Found{path, Checkpoint::load(path)};
    } catch (const std::exception& e) {
      report << path << ": cannot be used (" << e.what() << "); trying the one before\n";
    }
  }
  return std::nullopt;
}

namespace {
// A running process (ours or another's) may still be writing: kill(pid, 0) == 0 or EPERM means alive.
bool processGone(int pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno != EPERM; }
}  // namespace

int CheckpointDir::removeTemporariesOf(const std::string& file) {
  const fs::path target(file);
  static const std::regex suffix(R"(\.tmp-(\d{1,9})(?:\.\d+\.\d+)?)");
  const std::string stem = target.filename().string();
  int removed = 0;
  std::error_code ec;
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    std::smatch m;
    if (!e.is_regular_file() || name.compare(0, stem.size(), stem) != 0) continue;
    const std::string rest = name.substr(stem.size());
    if (!std::regex_match(rest, m, suffix) || !processGone(std::stoi(m[1].str()))) continue;
    if (fs::remove(e.path(), ec)) ++removed;
  }
  return removed;
}

int CheckpointDir::removeStaleTemporaries(const std::string& dir) {
  // Exactly the names our writers give their temporaries, and nothing a user might call a file: checkpoints
  // (`X.ckpt.tmp.PID`), .npz builds (`X.npz.tmp-PID`, `X.npz.tmp-PID.A.P`), predictions and JSON lines
  // (`X.csv.tmp-PID`, `X.jsonl.tmp-PID`).
  static const std::regex pattern(
      R"(.+\.(?:ckpt\.tmp\.(\d+)|npz\.tmp-(\d+)(?:\.\d+\.\d+)?|(?:csv|jsonl)\.tmp-(\d+)))");
  int removed = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(dir.empty() ? "." : dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !std::regex_match(name, m, pattern)) continue;
    const std::string digits = m[1].matched ? m[1].str() : m[2].matched ? m[2].str() : m[3].str();
    if (digits.size() > 9) continue;
    const int pid = std::stoi(digits);
    if (!processGone(pid)) continue;
    if (now - e.last_write_time(ec) < std::chrono::minutes(1)) continue;
    if (fs::remove(e.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace gnn::app
