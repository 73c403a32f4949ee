#include "gnn/tensor/TensorSpill.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>

namespace gnn {
namespace {

int openUnlinkedTemp() {
  const std::string dir = std::filesystem::temp_directory_path().string();
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  // File systems without O_TMPFILE: a named file, unlinked at once.
  std::string name = dir + "/gnn_spill_XXXXXX";
  fd = ::mkstemp(name.data());
  if (fd >= 0) ::unlink(name.c_str());
  return fd;
}

bool writeAll(int fd, const char* p, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t w = ::pwrite(fd, p + done, n - done, static_cast<off_t>(done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

TensorSpill::TensorSpill(Tensor& t, size_t minBytes) : t_(&t) {
  // A view (of part of a storage, or of one shared with other tensors) would free nothing.
  if (!t.defined() || !t.uniquelyOwned() || t.nbytes() < minBytes || t.nbytes() != t.storageBytes()) return;
  const int fd = openUnlinkedTemp();
  if (fd < 0) return;
  if (!writeAll(fd, static_cast<const char*>(std::as_const(t).raw()), t.nbytes())) {
    ::close(fd);  // a full disk: the tensor stays where it is
    return;
  }
  fd_ = fd;
  shape_ = t.shape();
  dtype_ = t.dtype();
  bytes_ = t.nbytes();
  t = Tensor();  // the only owner: the storage is freed
}

void TensorSpill::restore() {
  if (fd_ < 0) return;
  Tensor back = Tensor::empty(shape_, dtype_);
  char* p = static_cast<char*>(back.raw());
  size_t done = 0;
  while (done < bytes_) {
    const ssize_t r = ::pread(fd_, p + done, bytes_ - done, static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw std::runtime_error("TensorSpill: reading back " + std::to_string(bytes_) + " bytes from the temporary file failed (" +
                               (r < 0 ? std::strerror(errno) : "end of file") + ")");
    done += static_cast<size_t>(r);
  }
  ::close(fd_);
  fd_ = -1;
  *t_ = std::move(back);
}

TensorSpill::~TensorSpill() {
  try {
    restore();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fatal: %s\n", e.what());
    std::abort();
  }
}

}  // namespace gnn
