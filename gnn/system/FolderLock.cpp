#include "gnn/system/FolderLock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

namespace gnn {

namespace {

std::string hostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

// The command line as a shell would show it: /proc/self/cmdline's NUL-separated arguments joined by spaces.
std::string commandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s)
    if (c == '\0') c = ' ';
  return s;
}

std::string utcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string readAll(int fd) {
  std::string s;
  char buf[4096];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    s.append(buf, static_cast<size_t>(n));
    at += n;
  }
  return s;
}

// The identity a lock file holds, or a non-object when it holds none (empty, or cut short by a crash).
nlohmann::json parseHolder(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("pid") || !j["pid"].is_number_integer()) return nullptr;
  return j;
}

std::string field(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string("?");
}

std::string describe(const nlohmann::json& holder) {
  std::string cmd = field(holder, "command");
  if (cmd.size() > 300) cmd = cmd.substr(0, 300) + "...";
  return "pid " + std::to_string(holder["pid"].get<long long>()) + " on host " + field(holder, "host") +
         " (command: " + cmd + "), started " + field(holder, "started");
}

bool sameFile(int fd, const std::string& path) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

FolderLock FolderLock::acquire(const std::string& folder, const std::string& what, std::ostream* report) {
  return lockFile((std::filesystem::path(folder) / ".gnn-lock").string(), folder, what, report);
}

FolderLock FolderLock::forFile(const std::string& path, const std::string& what, std::ostream* report) {
  return lockFile(path + ".lock", path, what, report);
}

FolderLock FolderLock::lockFile(const std::string& lockPath, const std::string& named, const std::string& what,
                                std::ostream* report) {
  const std::string who = what + " " + named;
  // A holder removes the file as it releases it: a file we opened just before that is no longer the lock, and
  // neither is one another process replaced meanwhile. Locking that stale inode would let two processes hold
  // "the" lock, so after flock the path must still name the file we hold; otherwise try again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw std::runtime_error(who + ": cannot create the lock file " + lockPath + " (" + std::strerror(errno) + ")");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err == EINTR) {
        ::close(fd);
        continue;
      }
      if (err != EWOULDBLOCK) {
        ::close(fd);
        throw std::runtime_error(who + ": cannot lock " + lockPath + " (" + std::strerror(err) +
                                 "): this filesystem keeps no locks; use a local folder, or one run per folder");
      }
      // The holder writes its identity right after it takes the lock: give it a moment to appear.
      nlohmann::json holder;
      for (int i = 0; i < 20 && !(holder = parseHolder(readAll(fd))).is_object(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      const bool gone = !sameFile(fd, lockPath);
      ::close(fd);
      if (gone) continue;  // released while we looked: try to take it
      throw FolderInUse(who + " is in use by " +
                        (holder.is_object() ? describe(holder)
                                            : "another process (it has not written its name into " + lockPath + ")") +
                        "; wait for it to end or use another " + what);
    }
    if (!sameFile(fd, lockPath)) {
      ::close(fd);
      continue;
    }
    const nlohmann::json previous = parseHolder(readAll(fd));
    const std::string host = hostName();
    if (report && previous.is_object() &&
        (previous["pid"].get<long long>() != static_cast<long long>(::getpid()) || field(previous, "host") != host))
      *report << who << ": took over the lock of pid " << previous["pid"].get<long long>() << " on host "
              << field(previous, "host") << " (no longer running)\n";
    const std::string line = nlohmann::json{{"pid", static_cast<long long>(::getpid())},
                                            {"host", host},
                                            {"command", commandLine()},
                                            {"started", utcNow()}}
                                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                             "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
      const int err = errno;
      ::unlink(lockPath.c_str());
      ::close(fd);
      throw std::runtime_error(who + ": cannot write the lock file " + lockPath + " (" + std::strerror(err) + ")");
    }
    return FolderLock(lockPath, fd);
  }
  throw std::runtime_error(who + ": the lock file " + lockPath +
                           " was replaced on every attempt to take it; another program keeps removing it");
}

FolderLock::FolderLock(FolderLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FolderLock::~FolderLock() { release(); }

void FolderLock::release() noexcept {
  if (fd_ < 0) return;
  // Removed while still held, and only if the path is still our file (something outside may have replaced it):
  // a process waiting on our inode then finds the path gone and makes a fresh lock file.
  if (sameFile(fd_, path_)) ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace gnn
