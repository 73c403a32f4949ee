// TorchPickle: the data.pkl of a torch.save(model.state_dict()) file, read by a restricted unpickler that
// accepts what torch.load(weights_only=True) accepts for state_dicts (torch 1.13's _weights_only_unpickler:
// its opcodes, and of its allowed globals collections.OrderedDict, torch._utils._rebuild_tensor_v2,
// torch._utils._rebuild_parameter, torch.nn.parameter.Parameter, torch.Size and the torch.<T>Storage classes),
// and written back in the form torch.save gives. Any other opcode or global is refused, naming it, before
// anything is built from it; nothing is ever executed. The unpickler only describes tensors (storage key,
// offset, sizes, strides, all checked against the storage's declared size); gnn/io/StateDict reads the data.
//
//   PickledStateDict p = parseStateDictPickle(zip.read(*pkl), "model.pt");
//   for (const auto& [name, t] : p.entries) ... p.storages[t.storage].key ...
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gnn {

/// The element types of torch's typed storages (torch.FloatStorage, ...), as state_dicts name them.
enum class TorchScalar : uint8_t { Float, Double, Half, BFloat16, Long, Int, Short, Char, Byte, Bool };

/// "FloatStorage", ... (the class name after "torch.").
const char* torchStorageName(TorchScalar s);
/// Bytes per element.
size_t torchElementSize(TorchScalar s);

/// A persistent storage reference: ('storage', torch.<T>Storage, key, location, numel).
struct TorchStorageRef {
  std::string key;       // the member "<archive>/data/<key>"
  TorchScalar scalar = TorchScalar::Float;
  std::string location;  // "cpu", "cuda:0", ...
  int64_t numel = 0;
};

/// A tensor view of a storage, its bounds already checked: every element lies inside the storage.
struct PickledTensor {
  size_t storage = 0;  // index into PickledStateDict::storages
  int64_t offset = 0;
  std::vector<int64_t> size, stride;
  bool requiresGrad = false;
};

struct PickledStateDict {
  std::vector<std::pair<std::string, PickledTensor>> entries;  // in the file's order
  std::vector<TorchStorageRef> storages;                       // each key once
  /// The dict's _metadata attribute: {"conv1": {"version": 1}, ...}; null when the file has none.
  nlohmann::json metadata;
};

/// Reads a state_dict pickle. `where` names the file in messages ("model.pt (model/data.pkl)"). Throws
/// std::runtime_error naming the byte offset and the opcode or global for anything outside the allowed set,
/// and for a result that is not a dict of name -> tensor.
PickledStateDict parseStateDictPickle(std::string_view pkl, const std::string& where);

/// The pickle torch.save writes for `sd` (protocol 2), which torch.load(weights_only=True) reads back.
std::string writeStateDictPickle(const PickledStateDict& sd);

}  // namespace gnn
