// Checkpoint: named tensors plus JSON metadata in one versioned binary file, written atomically
// (temp file, fsync, rename) and read back with format, version, checksum and shape checks; the values loaded
// into a model or an optimizer are checked finite (a crafted file can hold a valid checksum over a NaN).
//
// Format "GNNCKPT", version 1, all integers little-endian:
//   magic      8 bytes  "GNNCKPT\0"
//   version    u32      1
//   count      u32      number of tensors
//   metaBytes  u64      length of the metadata
//   metadata   bytes    UTF-8 JSON object (free-form: model config, epoch, ...)
//   count times:
//     nameLen  u32, name bytes (UTF-8, e.g. "model.conv1.weight", "optimizer.m.0")
//     dtype    u8       0 float32, 1 float64, 2 int32, 3 int64, 4 uint8, 5 float16
//     rank     u8       0..4
//     dims     i64 x rank
//     nbytes   u64, raw row-major data
//   checksum   u64      FNV-1a 64 of every byte before it
//
//   Checkpoint ck; ck.addModule("model", net); ck.addOptimizer(opt); ck.meta["epoch"] = 10; ck.save("run.ckpt");
//   Checkpoint in = Checkpoint::load("run.ckpt"); in.loadModule("model", net); in.loadOptimizer(opt);
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/autograd/Variable.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

class Module;
class Optimizer;

class Checkpoint {
 public:
  static constexpr uint32_t kVersion = 1;

  std::map<std::string, Tensor> tensors;
  nlohmann::json meta = nlohmann::json::object();
  /// The file load() read (empty for a checkpoint built in memory): messages about its contents name it.
  std::string source;

  void save(const std::string& path) const;
  /// Throws std::runtime_error naming the file for a missing file, a wrong magic/version or a bad checksum.
  static Checkpoint load(const std::string& path);

  /// Stores every parameter of `module` as "<prefix>.<parameter name>".
  void addModule(const std::string& prefix, const Module& module);
  /// Copies the stored parameters into `module`; every parameter must be present with the same shape and
  /// finite (requireFinite). A file written before GCNConv took PyG's layout ("<layer>.weight" [in, out]) is
  /// read as today's "<layer>.lin.weight" [out, in], with a message on stderr; saving it again converts it.
  void loadModule(const std::string& prefix, Module& module) const;
  /// The stored tensor of parameter `name` of the module saved under `prefix` ("model", "best", ...): under
  /// "<prefix>.<name>", or, in a file written before GCNConv took PyG's layout, its old "<layer>.weight" [in, out]
  /// transposed to `shape` (read once and kept; the first such read says so on stderr). nullptr when neither.
  const Tensor* findParameter(const std::string& prefix, const std::string& name, const Shape& shape) const;
  /// The name a stored tensor is read under: its own, or today's for one findParameter read from the old GCNConv
  /// layout ("model.conv1.weight" -> "model.conv1.lin.weight").
  std::string currentName(const std::string& storedName) const;
  void addOptimizer(const Optimizer& opt);
  /// Restores the optimizer's state; every state tensor must be finite, and Adam's second moments >= 0. The
  /// state of weights loadModule converted from the old GCNConv layout is transposed with them.
  void loadOptimizer(Optimizer& opt) const;
  /// Throws std::runtime_error when tensor `name` holds NaN or an infinity, naming the file, the tensor and
  /// the first such element: "run.ckpt: tensor 'model.conv1.weight' holds NaN at element 17; the checkpoint
  /// cannot be used". Integer tensors always pass; a tensor the checkpoint lacks is an error too.
  void requireFinite(const std::string& name) const;

 private:
  /// `t`, the optimizer's state tensor `name` ("optimizer.<slot>.<parameter index>"), transposed when its
  /// parameter was loaded from the old GCNConv layout.
  Tensor legacySlot(const std::string& name, const Tensor& t, const std::vector<Variable>& params) const;
  // Parameters read from the old GCNConv layout: new full name -> the transposed tensor, and -> the old name.
  mutable std::map<std::string, Tensor> converted_;
  mutable std::map<std::string, std::string> legacyOf_;
  // Storage of the parameters the last loadModule read from the old layout (their optimizer state follows).
  mutable std::vector<const void*> legacyTransposed_;
};

}  // namespace gnn
