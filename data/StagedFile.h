// StagedFile: an output file written under a temporary name next to its destination
// (`<path>.tmp-<pid>`) and renamed into place by commit(), so the destination is either absent, the old
// file, or complete: never a truncated new one. Destroyed uncommitted (an error, an interrupted build), it
// removes the temporary.
//
//   StagedFile out("molecules.jsonl");
//   out.stream() << "{...}\n";
//   out.commit();                     // flushes, checks for write errors, renames
#pragma once
#include <fstream>
#include <string>

namespace gnn {

class StagedFile {
 public:
  /// Creates the temporary; throws std::runtime_error naming it when it cannot be created.
  explicit StagedFile(std::string path);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& path() const { return path_; }
  const std::string& tempPath() const { return temp_; }
  /// Closes the temporary and renames it onto path(); throws std::runtime_error naming the file when a
  /// write failed or the rename does (the temporary is then removed).
  void commit();
  /// Closes and removes the temporary now (the destructor does it too).
  void discard();

 private:
  std::string path_, temp_;
  std::ofstream out_;
  bool open_ = false;
};

}  // namespace gnn
