// RunLog: `--log FILE.jsonl`, one JSON object per epoch (epoch, loss, validation metric, learning rate,
// seconds, ...), flushed as it is written so a running job can be followed with `tail -f`. Opened before
// training starts, so an unwritable path is reported at once; a resumed run appends.
//
//   app::RunLog log(path, /*append=*/resuming);
//   log.write({{"epoch", 1}, {"loss", 0.5}});
#pragma once
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace gnn::app {

class RunLog {
 public:
  RunLog() = default;
  /// Empty path: a log that writes nothing. Throws naming the file when it cannot be opened.
  RunLog(const std::string& path, bool append);
  bool enabled() const { return out_.is_open(); }
  void write(const nlohmann::json& line);

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace gnn::app
