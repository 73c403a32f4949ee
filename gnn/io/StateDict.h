// StateDict: PyTorch state_dicts (torch.save(model.state_dict(), path)) read and written without Python, and
// mapped onto a Module by PyG's parameter names, so a PyG user's trained weights load into the same model here
// and ours go back to PyG.
//
// Reading accepts what torch.load(path, weights_only=True) accepts for a state_dict (gnn/io/TorchPickle.h): a
// crafted pickle (os.system, builtins.eval, a user's class) is refused naming the opcode or global; damaged
// files (truncated, bad CRC, offsets or sizes past a storage, a missing storage) give a std::runtime_error
// naming the file and the fault; memory stays within a small multiple of the file's size. Views are made
// contiguous; tensors sharing storage (tied weights) load as equal tensors. dtypes: float32, float64, float16,
// bfloat16, int64 and int32 as themselves, int16 and int8 widened to int32, uint8 and bool as uint8 (bool names
// kept in boolEntries so writing gives bool again). Rank <= 4 (gnn's Tensor).
//
//   StateDict sd = readStateDict("gcn.pt");            // torch.save(model.state_dict(), "gcn.pt")
//   loadStateDictInto(model, sd);                      // strict: missing and unexpected keys in one error
//   writeStateDict("out.pt", stateDictOf(model));      // model.load_state_dict(torch.load("out.pt"))
#pragma once
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gnn/tensor/Tensor.h"

namespace gnn {

class Module;

struct StateDict {
  std::vector<std::pair<std::string, Tensor>> entries;  // in the file's (the module's) order
  /// Names of uint8 entries that were (and are written as) torch.bool.
  std::set<std::string> boolEntries;
  /// torch's _metadata ({"conv1": {"version": 1}, ...}); null when absent. Written back as read.
  nlohmann::json metadata;
  /// The file read (empty when built in memory): messages name it.
  std::string source;

  /// The tensor called `name`, or nullptr.
  const Tensor* find(const std::string& name) const;
};

/// Reads a torch.save'd state_dict (.pt, .pth, .bin: zip format, told by its content). Throws
/// std::runtime_error naming the file and the fault.
StateDict readStateDict(const std::string& path);

/// Writes `sd` as torch.save(state_dict) does (zip, pickle protocol 2, 64-byte aligned storages), replacing
/// `path` atomically. Entries that share a buffer (tied weights) share one storage in the file.
void writeStateDict(const std::string& path, const StateDict& sd);

/// Keys of a non-strict load that did not match (torch's _IncompatibleKeys).
struct StateDictMismatch {
  std::vector<std::string> missing;     // module parameters or buffers the state_dict lacks
  std::vector<std::string> unexpected;  // state_dict entries the module has no parameter for
};

/// Copies every parameter and buffer of `module` (by its namedParameters() name) from `sd`, converting floating
/// dtypes to the module's (float64 -> float32, ...) and integer ones likewise (int64 buffers stay int64).
/// Like torch's load_state_dict: with `strict`, missing and unexpected keys are an error listing both; shape
/// and kind (floating vs integer) mismatches are always an error. Everything is checked before anything is
/// copied, so a refused state_dict leaves the module as it was. Throws std::runtime_error.
StateDictMismatch loadStateDictInto(Module& module, const StateDict& sd, bool strict = true);

/// A copy of every parameter and buffer of `module` under its name (model.state_dict()).
StateDict stateDictOf(const Module& module);

}  // namespace gnn
