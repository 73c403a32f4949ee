#include "data/StagedFile.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace gnn {

StagedFile::StagedFile(std::string path)
    : path_(std::move(path)), temp_(path_ + ".tmp-" + std::to_string(::getpid())) {
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw std::runtime_error(temp_ + ": cannot create (is the folder writable?)");
  open_ = true;
}

StagedFile::~StagedFile() { discard(); }

void StagedFile::discard() {
  if (!open_) return;
  out_.close();
  std::remove(temp_.c_str());
  open_ = false;
}

void StagedFile::commit() {
  if (!open_) throw std::logic_error("StagedFile::commit: " + path_ + " was already committed or discarded");
  out_.flush();
  const bool good = out_.good();
  out_.close();
  if (!good || out_.fail()) {
    discard();
    throw std::runtime_error(temp_ + ": write failed (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(temp_, path_, ec);
  if (ec) {
    std::remove(temp_.c_str());
    open_ = false;
    throw std::runtime_error(path_ + ": cannot rename " + temp_ + " into place: " + ec.message());
  }
  open_ = false;
}

}  // namespace gnn
