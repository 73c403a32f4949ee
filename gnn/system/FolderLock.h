// FolderLock: one writer per folder (or per output file). `acquire(folder, what)` takes an exclusive flock(2)
// on `folder/.gnn-lock` and writes the holder's identity into it (pid, host, command line, start time in UTC);
// a second process is refused with that identity named. The lock is released when the FolderLock is destroyed
// (the file is removed) or when its process ends in any way, kill -9 included: the kernel drops flock locks
// with the process, so a lock file left by a killed holder is taken over by the next one (and reported).
//
//   FolderLock lock = FolderLock::acquire("runs/a", "--checkpoint-dir", &std::cerr);   // throws FolderInUse
//   FolderLock out = FolderLock::forFile("hiv.npz", "--out", &std::cerr);              // locks hiv.npz.lock
//
// Shared filesystems: on NFS v4 the client maps flock to byte-range locks the server keeps, so the lock holds
// across hosts, and a host that dies loses its locks when its lease expires. NFS v2/v3 mounted with `nolock`,
// `local_lock=flock` or `local_lock=all`, and some FUSE filesystems, keep locks on one host only (or refuse
// them: acquire() then throws naming the folder): there, write to a local folder, or run one program per folder.
#pragma once
#include <ostream>
#include <stdexcept>
#include <string>

namespace gnn {

/// The folder (or file) is locked by another live process; what() names it and its holder.
class FolderInUse : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FolderLock {
 public:
  /// Locks `folder` (which must exist) through `folder/.gnn-lock`. `what` is how messages name the folder's
  /// role ("--checkpoint-dir"): "--checkpoint-dir runs/a is in use by pid 1234 on host h (command: ...),
  /// started 2024-05-01T12:00:00Z; wait for it to end or use another --checkpoint-dir". A lock file naming an
  /// earlier holder that is gone is taken over, reported on `report` when given.
  static FolderLock acquire(const std::string& folder, const std::string& what, std::ostream* report = nullptr);
  /// Locks the output file `path` through `path.lock` next to it (the file itself need not exist).
  static FolderLock forFile(const std::string& path, const std::string& what, std::ostream* report = nullptr);

  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  /// Removes the lock file (while still holding it) and releases the lock.
  ~FolderLock();

  /// The lock file.
  const std::string& path() const { return path_; }

 private:
  FolderLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  static FolderLock lockFile(const std::string& lockPath, const std::string& named, const std::string& what,
                             std::ostream* report);
  void release() noexcept;

  std::string path_;
  int fd_ = -1;
};

}  // namespace gnn
