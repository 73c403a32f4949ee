// CheckpointDir: the rotating checkpoints of a run (`--checkpoint-dir DIR`): `DIR/ckpt-<optimizer step>.ckpt`,
// each written atomically, the newest `keep` kept. `--resume` continues from the newest one that reads back
// whole; a damaged newest one (a flipped byte, a truncation) is reported and the one before is used.
//
//   app::CheckpointDir dir("runs/a", /*keep=*/3);
//   dir.write(checkpoint, opt.stepCount());
//   std::optional<app::CheckpointDir::Found> f = dir.newestValid(std::cerr);   // f->path, f->checkpoint
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gnn/io/Checkpoint.h"

namespace gnn::app {

class CheckpointDir {
 public:
  CheckpointDir(std::string dir, int64_t keep);
  /// Writes `ck` as the checkpoint of optimizer step `step` and removes all but the newest `keep`. Returns the
  /// path written.
  std::string write(const Checkpoint& ck, int64_t step) const;
  /// The path write() gives the checkpoint of step `step`.
  std::string pathFor(int64_t step) const;
  /// The checkpoint files, newest (highest step) first.
  std::vector<std::string> files() const;

  struct Found {
    std::string path;
    Checkpoint checkpoint;
  };
  /// The newest checkpoint that loads (magic, version, checksum, contents); every damaged newer one is named
  /// on `report`. Empty when there is none.
  std::optional<Found> newestValid(std::ostream& report) const;

  /// Removes temporary files our own atomic writes left behind when a process was killed mid-write
  /// (`*.ckpt.tmp.<pid>`, `*.npz.tmp-<pid>[.a.p]`, `*.csv.tmp-<pid>`, `*.jsonl.tmp-<pid>`) in `dir`, when
  /// their process no longer runs and they are older than a minute. Returns how many were removed.
  static int removeStaleTemporaries(const std::string& dir);
  /// Removes the temporaries of `file` alone (`<file>.tmp-<pid>[.a.p]`) whose process no longer runs, whatever
  /// their age: for a writer that holds `file`'s lock (gnn/system/FolderLock.h), so that no other process can be
  /// writing them. Returns how many were removed.
  static int removeTemporariesOf(const std::string& file);

 private:
  std::string dir_;
  int64_t keep_;
};

}  // namespace gnn::app
