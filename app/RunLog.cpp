#include "app/RunLog.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gnn::app {

RunLog::RunLog(const std::string& path, bool append) : path_(path) {
  if (path.empty()) return;
  out_.open(path, append ? std::ios::app : std::ios::trunc);
  if (!out_) throw std::runtime_error("--log " + path + ": cannot write (" + std::strerror(errno) + ")");
}

void RunLog::write(const nlohmann::json& line) {
  if (!out_.is_open()) return;
  out_ << line.dump() << "\n";
  out_.flush();
  if (!out_) throw std::runtime_error("--log " + path_ + ": write failed (disk full?)");
}

}  // namespace gnn::app
