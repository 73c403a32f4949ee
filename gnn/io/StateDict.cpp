#include "gnn/io/StateDict.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <tuple>

#include "gnn/io/NpyArray.h"
#include "gnn/io/TorchPickle.h"
#include "gnn/io/ZipArchive.h"
#include "gnn/nn/Module.h"

namespace gnn {
namespace {

std::string readFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error(path + ": cannot open state_dict: " + std::strerror(errno));
  const std::streamoff size = in.tellg();
  if (size < 0) throw std::runtime_error(path + ": cannot tell its size");
  std::string bytes(static_cast<size_t>(size), '\0');  // one buffer: the zip's members are read in place
  in.seekg(0);
  if (!in.read(&bytes[0], size)) throw std::runtime_error(path + ": read error");
  return bytes;
}

DType dtypeFor(TorchScalar s) {
  switch (s) {
    case TorchScalar::Float: return DType::F32;
    case TorchScalar::Double: return DType::F64;
    case TorchScalar::Half: return DType::F16;
    case TorchScalar::BFloat16: return DType::BF16;
    case TorchScalar::Long: return DType::I64;
    case TorchScalar::Int: case TorchScalar::Short: case TorchScalar::Char: return DType::I32;
    case TorchScalar::Byte: case TorchScalar::Bool: return DType::U8;
  }
  return DType::F32;
}

// Copies the elements of view `t` of `storage` (each `esize` bytes) to `dst` in row-major order, byte-swapped
// from big-endian when `swap`. The view's bounds were checked by the unpickler; numel <= the storage's numel.
void gather(std::string_view storage, size_t esize, const PickledTensor& t, int64_t numel, bool swap, char* dst) {
  const int rank = static_cast<int>(t.size.size());
  bool contiguous = true;
  int64_t expect = 1;  // the row-major stride; the sizes' product is numel, so no overflow
  for (int d = rank - 1; d >= 0; --d) {
    contiguous = contiguous && (t.size[d] == 1 || t.stride[d] == expect);
    expect *= t.size[d];
  }
  if (contiguous) {  // the common case: one copy
    std::memcpy(dst, storage.data() + static_cast<size_t>(t.offset) * esize, static_cast<size_t>(numel) * esize);
  } else {
    std::vector<int64_t> idx(t.size.size(), 0);
    int64_t src = t.offset;
    for (int64_t i = 0; i < numel; ++i) {
      std::memcpy(dst + static_cast<size_t>(i) * esize, storage.data() + static_cast<size_t>(src) * esize, esize);
      for (int d = rank - 1; d >= 0; --d) {  // odometer over the view's index
        if (++idx[d] < t.size[d]) {
          src += t.stride[d];
          break;
        }
        src -= (t.size[d] - 1) * t.stride[d];
        idx[d] = 0;
      }
    }
  }
  const size_t bytes = static_cast<size_t>(numel) * esize;
  if (swap && esize > 1)
    for (size_t i = 0; i < bytes; i += esize)
      for (size_t a = i, b = i + esize - 1; a < b; ++a, --b) std::swap(dst[a], dst[b]);
}

// View `t` of a storage of `s` elements as a contiguous gnn tensor of `shape`.
Tensor toTensor(std::string_view storage, TorchScalar s, const PickledTensor& t, const Shape& shape, bool swap) {
  Tensor out = Tensor::empty(shape, dtypeFor(s));
  const auto n = static_cast<size_t>(out.numel());
  const size_t esize = torchElementSize(s);
  if (n == 0) return out;
  if (esize == dtypeSize(out.dtype())) {
    gather(storage, esize, t, out.numel(), swap, static_cast<char*>(out.raw()));
    if (s == TorchScalar::Bool) {
      uint8_t* o = out.data<uint8_t>();
      for (size_t i = 0; i < n; ++i) o[i] = o[i] != 0;
    }
    return out;
  }
  std::string bytes(n * esize, '\0');  // int16 and int8, widened to int32
  gather(storage, esize, t, out.numel(), swap, &bytes[0]);
  int32_t* o = out.data<int32_t>();
  for (size_t i = 0; i < n; ++i) {
    int16_t v = 0;
    if (esize == 2) std::memcpy(&v, &bytes[2 * i], 2);
    o[i] = esize == 1 ? static_cast<int8_t>(bytes[i]) : v;
  }
  return out;
}

struct Member {
  std::string_view bytes;
  TorchScalar scalar;
};

StateDict readTorchZip(const ZipReader& zip, const ZipEntry& pkl) {
  const std::string& path = zip.source();
  const std::string prefix = pkl.name.substr(0, pkl.name.size() - std::string("data.pkl").size());
  bool bigEndian = false;
  if (const ZipEntry* bo = zip.find(prefix + "byteorder")) {
    const std::string_view order = zip.read(*bo);
    if (order != "little" && order != "big")
      throw std::runtime_error(path + ": byteorder says '" + std::string(order.substr(0, 16)) + "', not little or big");
    bigEndian = order == "big";
  }
  const PickledStateDict p = parseStateDictPickle(zip.read(pkl), path + " (" + pkl.name + ")");
  std::vector<Member> storages;
  for (const TorchStorageRef& ref : p.storages) {
    const ZipEntry* e = zip.find(prefix + "data/" + ref.key);
    if (!e) throw std::runtime_error(path + ": storage '" + ref.key + "' is missing (no member '" + prefix + "data/" + ref.key + "')");
    const size_t esize = torchElementSize(ref.scalar);
    if (e->size / esize != static_cast<uint64_t>(ref.numel) || e->size % esize != 0)
      throw std::runtime_error(path + ": storage '" + ref.key + "' should hold " + std::to_string(ref.numel) + " " +
                               torchStorageName(ref.scalar) + " elements but its member has " +
                               std::to_string(e->size) + " bytes");
    storages.push_back({zip.read(*e), ref.scalar});
  }
  // Tensors are read once per distinct view (tied weights repeat it), and in all to at most a few times the
  // file's size: int8 widens 4x; distinct views of one storage each take its size at most.
  const uint64_t budget = 8 * zip.fileSize() + (uint64_t{1} << 20);
  uint64_t used = 0;
  std::map<std::tuple<size_t, int64_t, std::vector<int64_t>, std::vector<int64_t>>, Tensor> views;
  StateDict sd;
  sd.source = path;
  sd.metadata = p.metadata;
  for (const auto& [name, t] : p.entries) {
    if (t.size.size() > 4)
      throw std::runtime_error(path + ": tensor '" + name + "' has rank " + std::to_string(t.size.size()) +
                               "; gnn's tensors have rank <= 4");
    const Member& m = storages[t.storage];
    Tensor& value = views[std::make_tuple(t.storage, t.offset, t.size, t.stride)];
    if (!value.defined()) {
      const Shape shape(t.size.begin(), t.size.end());
      const int64_t numel = shapeNumel(shape);
      used += static_cast<uint64_t>(numel) * (torchElementSize(m.scalar) + dtypeSize(dtypeFor(m.scalar)));
      if (used > budget)
        throw std::runtime_error(path + ": its tensors would take more than " + std::to_string(budget) +
                                 " bytes (many views of the same storage?)");
      value = toTensor(m.bytes, m.scalar, t, shape, bigEndian);
    }
    sd.entries.emplace_back(name, value);
    if (m.scalar == TorchScalar::Bool) sd.boolEntries.insert(name);
  }
  return sd;
}

// numpy's .npz (np.savez: a zip of <name>.npy), one entry per array.
StateDict readNpz(const ZipReader& zip) {
  StateDict sd;
  sd.source = zip.source();
  for (const ZipEntry& e : zip.entries()) {
    if (e.name.size() < 4 || e.name.compare(e.name.size() - 4, 4, ".npy") != 0) continue;
    const std::string name = e.name.substr(0, e.name.size() - 4);
    NpyArray a = parseNpy(zip.read(e), zip.source() + " (" + e.name + ")");
    if (a.isBool) sd.boolEntries.insert(name);
    sd.entries.emplace_back(name, std::move(a.tensor));
  }
  return sd;
}

}  // namespace

const Tensor* StateDict::find(const std::string& name) const {
  for (const auto& [n, t] : entries)
    if (n == name) return &t;
  return nullptr;
}

StateDict readStateDict(const std::string& path) {
  std::string bytes = readFileBytes(path);
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x80)
    throw std::runtime_error(path + ": a pickle, not a zip: torch.save's legacy format "
                             "(_use_new_zipfile_serialization=False) is not read; save it again with torch >= 1.6");
  if (bytes.size() < 4 || bytes.compare(0, 4, "PK\x03\x04") != 0)
    throw std::runtime_error(path + ": not a torch.save file (no zip header)");
  const ZipReader zip(std::move(bytes), path);
  const ZipEntry* pkl = zip.findSuffix("/data.pkl");
  if (!pkl) pkl = zip.find("data.pkl");
  if (pkl) return readTorchZip(zip, *pkl);
  for (const ZipEntry& e : zip.entries())
    if (e.name.size() > 4 && e.name.compare(e.name.size() - 4, 4, ".npy") == 0) return readNpz(zip);
  throw std::runtime_error(path + ": a zip without data.pkl or .npy members: not a state_dict");
}

namespace {

// A file name's stem as torch names the archive's top folder ("model.pt" -> "model"), kept to safe characters.
std::string archiveName(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  if (const size_t dot = base.find_last_of('.'); dot != std::string::npos && dot > 0) base.resize(dot);
  for (char& c : base)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  return base.empty() ? std::string("archive") : base;
}

TorchScalar scalarFor(DType d, bool isBool) {
  switch (d) {
    case DType::F32: return TorchScalar::Float;
    case DType::F64: return TorchScalar::Double;
    case DType::F16: return TorchScalar::Half;
    case DType::BF16: return TorchScalar::BFloat16;
    case DType::I64: return TorchScalar::Long;
    case DType::I32: return TorchScalar::Int;
    case DType::U8: return isBool ? TorchScalar::Bool : TorchScalar::Byte;
  }
  return TorchScalar::Float;
}

void writeAtomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error(path + ": cannot write state_dict: " + std::strerror(errno));
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(::fileno(f)) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": failed to write state_dict: " + std::strerror(err));
  }
}

}  // namespace

void writeStateDict(const std::string& path, const StateDict& sd) {
  static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE floats");
  const uint16_t probe = 1;
  GNN_ASSERT(*reinterpret_cast<const unsigned char*>(&probe) == 1, "writeStateDict assumes a little-endian host");
  const std::string name = archiveName(path);
  PickledStateDict p;
  p.metadata = sd.metadata;
  // One storage per distinct buffer: entries sharing one (tied weights) share it in the file too.
  std::map<std::tuple<const void*, size_t, DType, bool>, size_t> storageOf;
  std::vector<const Tensor*> data;
  for (const auto& [key, t] : sd.entries) {
    GNN_CHECK_ARG(t.defined(), "writeStateDict: entry '", key, "' holds no tensor");
    const bool isBool = t.dtype() == DType::U8 && sd.boolEntries.count(key) > 0;
    const auto [it, fresh] = storageOf.emplace(std::make_tuple(t.raw(), t.nbytes(), t.dtype(), isBool), p.storages.size());
    if (fresh) {
      TorchStorageRef ref;
      ref.key = std::to_string(p.storages.size());
      ref.scalar = scalarFor(t.dtype(), isBool);
      ref.location = "cpu";
      ref.numel = t.numel();
      p.storages.push_back(ref);
      data.push_back(&t);
    }
    PickledTensor pt;
    pt.storage = it->second;
    pt.size.assign(t.shape().begin(), t.shape().end());
    pt.stride.assign(pt.size.size(), 1);
    for (size_t d = pt.size.size(); d-- > 1;) pt.stride[d - 1] = pt.stride[d] * pt.size[d];
    p.entries.emplace_back(key, std::move(pt));
  }
  ZipWriter zip;
  zip.add(name + "/data.pkl", writeStateDictPickle(p));
  zip.add(name + "/byteorder", "little");
  for (size_t i = 0; i < data.size(); ++i)
    zip.add(name + "/data/" + p.storages[i].key,
            std::string_view(static_cast<const char*>(data[i]->raw()), data[i]->nbytes()));
  zip.add(name + "/version", "3\n");
  writeAtomically(path, zip.finish());
}

StateDict stateDictOf(const Module& module) {
  StateDict sd;
  // A tensor under two names (Module::registerAlias: tied weights) is one copy under both, so the writer keeps
  // it one storage, as torch.save does.
  std::map<const void*, Tensor> copies;
  for (const auto& [name, v] : module.namedStateEntries()) {
    const void* key = v.value().raw();
    auto it = copies.find(key);
    if (it == copies.end()) it = copies.emplace(key, v.value().clone()).first;
    sd.entries.emplace_back(name, it->second);
  }
  return sd;
}

namespace {

bool floating(DType d) { return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16; }

std::string quotedList(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "\"" : ", \"") + n + "\"";
  return s;
}

}  // namespace

StateDictMismatch loadStateDictInto(Module& module, const StateDict& sd, bool strict) {
  std::map<std::string, const Tensor*> byName;
  for (const auto& [name, t] : sd.entries) byName.emplace(name, &t);
  // Every state_dict name, aliases of tied weights included (each sets the one tensor; torch's last-wins).
  const auto named = module.namedStateEntries();
  StateDictMismatch out;
  std::vector<std::string> errors;
  std::vector<Tensor> values(named.size());
  std::set<std::string> known;
  for (size_t k = 0; k < named.size(); ++k) {
    const auto& [name, v] = named[k];
    known.insert(name);
    const auto it = byName.find(name);
    if (it == byName.end()) {
      out.missing.push_back(name);
      continue;
    }
    const Tensor& t = *it->second;
    if (t.shape() != v.shape()) {
      errors.push_back("size mismatch for " + name + ": copying a param with shape " + shapeString(t.shape()) +
                       " from checkpoint, the shape in current model is " + shapeString(v.shape()) + ".");
    } else if (floating(t.dtype()) != floating(v.dtype())) {
      errors.push_back(std::string("dtype mismatch for ") + name + ": the state_dict holds " + dtypeName(t.dtype()) +
                       ", the model " + dtypeName(v.dtype()) + " (floating and integer values do not convert).");
    } else {
      values[k] = t.to(v.dtype());  // a copy: the module never shares the state_dict's buffers
    }
  }
  for (const auto& [name, t] : sd.entries)
    if (!known.count(name)) out.unexpected.push_back(name);
  std::string msg;
  if (strict && !out.missing.empty()) msg += "\n\tMissing key(s) in state_dict: " + quotedList(out.missing) + ".";
  if (strict && !out.unexpected.empty()) msg += "\n\tUnexpected key(s) in state_dict: " + quotedList(out.unexpected) + ".";
  for (const std::string& e : errors) msg += "\n\t" + e;
  if (!msg.empty())
    throw std::runtime_error("Error(s) in loading state_dict" + (sd.source.empty() ? std::string() : " " + sd.source) + ":" + msg);
  for (size_t k = 0; k < named.size(); ++k)
    if (values[k].defined()) {
      Variable var = named[k].second;
      var.value() = values[k];
    }
  return out;
}

}  // namespace gnn
