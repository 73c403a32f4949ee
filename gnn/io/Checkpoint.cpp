#include "gnn/io/Checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "gnn/io/Fnv1a.h"
#include "gnn/nn/Module.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"

namespace gnn {
namespace {
constexpr char kMagic[8] = {'G', 'N', 'N', 'C', 'K', 'P', 'T', '\0'};

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  template <class T>
  void pod(T v) {
    bytes(&v, sizeof v);
  }
  void bytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }

 private:
  std::string& out_;
};

class Reader {
 public:
  Reader(const std::string& data, const std::string& path) : d_(data), path_(path) {}
  template <class T>
  T pod() {
    T v;
    need(sizeof v);
    std::memcpy(&v, d_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  const char* take(size_t n) {
    need(n);
    const char* p = d_.data() + pos_;
    pos_ += n;
    return p;
  }

 private:
  void need(size_t n) {
    if (pos_ + n > d_.size()) throw std::runtime_error(path_ + ": checkpoint is truncated");
  }
  const std::string& d_;
  const std::string& path_;
  size_t pos_ = 0;
};

// The first element of `t` that is NaN or infinite (-1 when none) and what it holds, in one pass.
int64_t firstNonFinite(const Tensor& t, std::string& what) {
  auto scan = [&](const auto* p) -> int64_t {
    const int64_t n = t.numel();
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(static_cast<double>(p[i]))) {
        what = std::isnan(static_cast<double>(p[i])) ? "NaN" : p[i] > 0 ? "+inf" : "-inf";
        return i;
      }
    return -1;
  };
  switch (t.dtype()) {
    case DType::F32:
      return scan(static_cast<const float*>(t.raw()));
    case DType::F64:
      return scan(static_cast<const double*>(t.raw()));
    case DType::F16: {
      // Binary16: exponent bits all set is an infinity (mantissa 0) or a NaN.
      const auto* p = static_cast<const uint16_t*>(t.raw());
      for (int64_t i = 0; i < t.numel(); ++i)
        if ((p[i] & 0x7C00u) == 0x7C00u) {
          what = (p[i] & 0x03FFu) != 0 ? "NaN" : (p[i] & 0x8000u) ? "-inf" : "+inf";
          return i;
        }
      return -1;
    }
    default:
      return -1;
  }
}
}  // namespace

void Checkpoint::save(const std::string& path) const {
  std::string buf;
  Writer w(buf);
  w.bytes(kMagic, 8);
  w.pod<uint32_t>(kVersion);
  w.pod<uint32_t>(static_cast<uint32_t>(tensors.size()));
  std::string m = meta.dump();
  w.pod<uint64_t>(m.size());
  w.bytes(m.data(), m.size());
  for (const auto& [name, t] : tensors) {
    w.pod<uint32_t>(static_cast<uint32_t>(name.size()));
    w.bytes(name.data(), name.size());
    w.pod<uint8_t>(static_cast<uint8_t>(t.dtype()));
    w.pod<uint8_t>(static_cast<uint8_t>(t.rank()));
    for (int64_t d : t.shape()) w.pod<int64_t>(d);
    w.pod<uint64_t>(t.nbytes());
    w.bytes(t.raw(), t.nbytes());
  }
  Fnv1a h;
  h.add(buf.data(), buf.size());
  w.pod<uint64_t>(h.value());

  // Atomic replace: a crash leaves either the old file or the new one, never half of one.
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error(path + ": cannot write checkpoint: " + std::strerror(errno));
  bool ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(::fileno(f)) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": failed to write checkpoint: " + std::strerror(errno));
  }
}

Checkpoint Checkpoint::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open checkpoint");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string data = ss.str();
  if (data.size() < 8 + 4 + 4 + 8 + 8 || std::memcmp(data.data(), kMagic, 8) != 0)
    throw std::runtime_error(path + ": not a gnn checkpoint (bad magic)");
  Fnv1a h;
  h.add(data.data(), data.size() - 8);
  uint64_t stored;
  std::memcpy(&stored, data.data() + data.size() - 8, 8);
  if (stored != h.value()) throw std::runtime_error(path + ": checkpoint checksum mismatch (file corrupt or truncated)");

  Reader r(data, path);
  r.take(8);
  uint32_t version = r.pod<uint32_t>();
  if (version != kVersion)
    throw std::runtime_error(path + ": checkpoint version " + std::to_string(version) + ", this build reads version " +
                             std::to_string(kVersion));
  // Every count and size is checked against the bytes that are left before it is used: the checksum only
  // proves the file is the one its writer wrote, not that the writer was right (a crafted file recomputes it).
  const uint64_t payload = data.size() - 8;
  uint32_t count = r.pod<uint32_t>();
  uint64_t metaBytes = r.pod<uint64_t>();
  if (metaBytes > payload) throw std::runtime_error(path + ": checkpoint metadata length is past the end of the file");
  Checkpoint ck;
  ck.source = path;
  try {
    ck.meta = nlohmann::json::parse(std::string(r.take(metaBytes), metaBytes));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": checkpoint metadata is not valid JSON (" + e.what() + ")");
  }
  if (!ck.meta.is_object()) throw std::runtime_error(path + ": checkpoint metadata is not a JSON object");
  // A tensor entry takes at least 4 + 1 + 1 + 8 bytes, so `count` cannot exceed what the file holds.
  if (count > payload / 14) throw std::runtime_error(path + ": checkpoint claims more tensors than the file can hold");
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t nameLen = r.pod<uint32_t>();
    if (nameLen > payload) throw std::runtime_error(path + ": tensor " + std::to_string(i) + " has a bad name length");
    std::string name(r.take(nameLen), nameLen);
    auto dtype = static_cast<DType>(r.pod<uint8_t>());
    uint8_t rank = r.pod<uint8_t>();
    if (rank > 4 || static_cast<uint8_t>(dtype) > 5)
      throw std::runtime_error(path + ": tensor '" + name + "' has a bad header (rank or dtype)");
    Shape shape(rank);
    uint64_t elements = 1;
    for (auto& d : shape) {
      d = r.pod<int64_t>();
      if (d < 0 || (d > 0 && elements > payload / static_cast<uint64_t>(d)))
        throw std::runtime_error(path + ": tensor '" + name + "' has a shape larger than the file");
      elements *= static_cast<uint64_t>(d);
    }
    uint64_t nbytes = r.pod<uint64_t>();
    if (nbytes != elements * dtypeSize(dtype))
      throw std::runtime_error(path + ": tensor '" + name + "' has a wrong byte count");
    const char* bytes = r.take(nbytes);  // throws when the file is shorter
    Tensor t(shape, dtype);
    std::memcpy(t.raw(), bytes, nbytes);
    if (!ck.tensors.emplace(name, std::move(t)).second)
      throw std::runtime_error(path + ": tensor '" + name + "' appears twice");
  }
  return ck;
}

void Checkpoint::addModule(const std::string& prefix, const Module& module) {
  for (const auto& [name, v] : module.namedParameters()) tensors[prefix + "." + name] = v.value().clone();
}

namespace {

// Checkpoints written before GCNConv took PyG's layout hold its weight as "<layer>.weight" [in, out]; today's
// name is "<layer>.lin.weight" [out, in]. The old name of a parameter the checkpoint lacks, when it has one.
std::string legacyName(const std::string& name) {
  const std::string suffix = ".lin.weight";
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  return name.substr(0, name.size() - suffix.size()) + ".weight";
}

bool isTransposeOf(const Tensor& t, const Shape& shape) {
  return t.rank() == 2 && shape.size() == 2 && t.dim(0) == shape[1] && t.dim(1) == shape[0];
}

}  // namespace

const Tensor* Checkpoint::findParameter(const std::string& prefix, const std::string& name,
                                        const Shape& shape) const {
  const std::string key = prefix + "." + name;
  if (auto it = tensors.find(key); it != tensors.end()) return &it->second;
  if (auto it = converted_.find(key); it != converted_.end()) return &it->second;
  const std::string old = legacyName(key);
  auto legacy = old.empty() ? tensors.end() : tensors.find(old);
  if (legacy == tensors.end() || !isTransposeOf(legacy->second, shape)) return nullptr;
  if (converted_.empty())
    std::cerr << (source.empty() ? std::string("checkpoint") : source) << ": GCNConv weights stored as [in, out] "
              << "before PyG's layout ('" << old << "', ...) are read as lin.weight [out, in]; saving again "
              << "writes the new layout\n";
  legacyOf_[key] = old;
  return &(converted_[key] = transposed(legacy->second));
}

std::string Checkpoint::currentName(const std::string& storedName) const {
  for (const auto& [now, old] : legacyOf_)
    if (old == storedName) return now;
  return storedName;
}

void Checkpoint::loadModule(const std::string& prefix, Module& module) const {
  const std::string where = source.empty() ? std::string("checkpoint") : source + ":";
  // Each parameter's stored tensor, checked before any is copied.
  const auto named = module.namedParameters();
  std::vector<const Tensor*> found;
  for (const auto& [name, v] : named) {
    const Tensor* t = findParameter(prefix, name, v.shape());
    GNN_CHECK_ARG(t != nullptr, where, " has no parameter '", prefix, ".", name, "'");
    GNN_CHECK_ARG(t->shape() == v.shape() && t->dtype() == v.dtype(), where, " parameter '", prefix, ".", name,
                  "' has shape ", shapeString(t->shape()), " (", dtypeName(t->dtype()), ") but the model expects ",
                  shapeString(v.shape()), " (", dtypeName(v.dtype()), ")");
    requireFinite(prefix + "." + name);
    found.push_back(t);
  }
  // Copied once every parameter passed: a refused checkpoint leaves the module as it was. The storage of the
  // parameters read from the old GCNConv layout is kept: their optimizer state is transposed with them.
  legacyTransposed_.clear();
  for (size_t k = 0; k < named.size(); ++k) {
    Variable var = named[k].second;
    var.value() = found[k]->clone();
    if (legacyOf_.count(prefix + "." + named[k].first)) legacyTransposed_.push_back(var.value().storageId());
  }
}

void Checkpoint::addOptimizer(const Optimizer& opt) {
  for (const auto& [name, t] : opt.state()) tensors[name] = t.clone();
}

void Checkpoint::loadOptimizer(Optimizer& opt) const {
  // Adam's update divides by sqrt(v) + eps: a negative second moment gives NaN weights at the first step.
  const bool adam = dynamic_cast<const Adam*>(&opt) != nullptr;
  const std::vector<Variable> params = opt.parameters();
  std::map<std::string, Tensor> st;
  for (const auto& entry : tensors) {
    // Named, not a structured binding: the lambda below uses the name (C++17 lambdas cannot capture bindings).
    const std::string& name = entry.first;
    const Tensor& t = entry.second;
    if (name.rfind("optimizer.", 0) != 0) continue;
    requireFinite(name);
    if (adam && name.rfind("optimizer.v.", 0) == 0 && t.isFloating()) {
      const Tensor v = t.dtype() == DType::F16 ? t.to(DType::F32) : t;
      auto negative = [&](const auto* p) {
        for (int64_t i = 0; i < v.numel(); ++i)
          if (p[i] < 0) {
            std::ostringstream os;
            os << (source.empty() ? std::string("checkpoint") : source) << ": tensor '" << name << "' holds "
               << static_cast<double>(p[i]) << " at element " << i
               << ", but Adam's second moments are never negative; the checkpoint cannot be used";
            throw std::runtime_error(os.str());
          }
      };
      if (v.dtype() == DType::F64) negative(v.data<double>());
      else negative(v.data<float>());
    }
    st[name] = legacySlot(name, t, params);
  }
  try {
    opt.loadState(st);
  } catch (const std::invalid_argument& e) {
    if (source.empty()) throw;
    throw std::invalid_argument(source + ": " + e.what());
  }
}

Tensor Checkpoint::legacySlot(const std::string& name, const Tensor& t, const std::vector<Variable>& params) const {
  if (legacyTransposed_.empty()) return t;
  const size_t dot = name.rfind('.');
  const std::string index = name.substr(dot + 1);
  if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos || index.size() > 9) return t;
  const size_t i = std::stoul(index);
  if (i >= params.size() || !isTransposeOf(t, params[i].shape())) return t;
  const void* id = params[i].value().storageId();
  const bool legacy = std::find(legacyTransposed_.begin(), legacyTransposed_.end(), id) != legacyTransposed_.end();
  return legacy ? transposed(t) : t;
}

void Checkpoint::requireFinite(const std::string& name) const {
  const std::string where = source.empty() ? std::string("checkpoint") : source;
  auto it = tensors.find(name);
  if (it == tensors.end()) {
    // A parameter read from the old GCNConv layout: its stored tensor, under the old name.
    auto legacy = legacyOf_.find(name);
    if (legacy != legacyOf_.end()) return requireFinite(legacy->second);
    throw std::runtime_error(where + ": has no tensor '" + name + "'");
  }
  std::string what;
  const int64_t bad = firstNonFinite(it->second, what);
  if (bad >= 0)
    throw std::runtime_error(where + ": tensor '" + name + "' holds " + what + " at element " + std::to_string(bad) +
                             "; the checkpoint cannot be used");
}

}  // namespace gnn
