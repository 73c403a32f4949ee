#include "gnn/io/TorchPickle.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace gnn {
namespace {

constexpr TorchScalar kScalars[] = {TorchScalar::Float, TorchScalar::Double, TorchScalar::Half,
                                    TorchScalar::BFloat16, TorchScalar::Long, TorchScalar::Int,
                                    TorchScalar::Short, TorchScalar::Char, TorchScalar::Byte, TorchScalar::Bool};

// Every pickle opcode (protocols 0-5), for messages about the ones refused.
const char* opcodeName(unsigned char op) {
  switch (op) {
    case '(': return "MARK";            case '.': return "STOP";           case '0': return "POP";
    case '1': return "POP_MARK";        case '2': return "DUP";            case 'F': return "FLOAT";
    case 'I': return "INT";             case 'J': return "BININT";         case 'K': return "BININT1";
    case 'L': return "LONG";            case 'M': return "BININT2";        case 'N': return "NONE";
    case 'P': return "PERSID";          case 'Q': return "BINPERSID";      case 'R': return "REDUCE";
    case 'S': return "STRING";          case 'T': return "BINSTRING";      case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";         case 'X': return "BINUNICODE";     case 'a': return "APPEND";
    case 'b': return "BUILD";           case 'c': return "GLOBAL";         case 'd': return "DICT";
    case '}': return "EMPTY_DICT";      case 'e': return "APPENDS";        case 'g': return "GET";
    case 'h': return "BINGET";          case 'i': return "INST";           case 'j': return "LONG_BINGET";
    case 'l': return "LIST";            case ']': return "EMPTY_LIST";     case 'o': return "OBJ";
    case 'p': return "PUT";             case 'q': return "BINPUT";         case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";         case 't': return "TUPLE";          case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";        case 'G': return "BINFLOAT";       case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ";         case 0x82: return "EXT1";          case 0x83: return "EXT2";
    case 0x84: return "EXT4";           case 0x85: return "TUPLE1";        case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";         case 0x88: return "NEWTRUE";       case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1";          case 0x8b: return "LONG4";         case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";  case 0x8c: return "SHORT_BINUNICODE"; case 0x8d: return "BINUNICODE8";
    case 0x8e: return "BINBYTES8";      case 0x8f: return "EMPTY_SET";     case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";      case 0x92: return "NEWOBJ_EX";     case 0x93: return "STACK_GLOBAL";
    case 0x94: return "MEMOIZE";        case 0x95: return "FRAME";         case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";    case 0x98: return "READONLY_BUFFER";
    default: return nullptr;
  }
}

// The globals gnn builds anything from; every other name is refused when the GLOBAL opcode is read.
enum class Global { OrderedDict, RebuildTensorV2, RebuildParameter, Parameter, Size, Storage };
constexpr const char* kAllowed =
    "collections.OrderedDict, torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter, "
    "torch.nn.parameter.Parameter, torch.Size, torch.<Float|Double|Half|BFloat16|Long|Int|Short|Char|Byte|Bool>Storage";

enum class Kind : uint8_t { None, Bool, Int, Str, Tuple, List, Dict, Set, Global, Storage, Tensor };
const char* kindName(Kind k) {
  static const char* names[] = {"None", "bool", "int", "str", "tuple", "list", "dict", "set", "global",
                                "storage", "tensor"};
  return names[static_cast<int>(k)];
}

constexpr uint32_t kNoRef = 0xffffffffu;

// One unpickled value, 16 bytes: every opcode makes at most one, so memory stays a small multiple of the
// pickle's size. Values refer to each other by index, so shared and even cyclic references (a list appended
// to itself through the memo) cost nothing and free nothing twice. Strings and container contents live in
// side tables, a container's only once something is put in it.
struct Obj {
  Kind kind = Kind::None;
  bool ordered = false;                     // Dict: an OrderedDict
  TorchScalar scalar = TorchScalar::Float;  // Global Storage
  uint32_t ref = kNoRef;                    // Str, Global: index into texts_; Tuple, List, Dict: into boxes_
  int64_t num = 0;                          // Bool, Int; Global: its Global; Storage, Tensor: their index
};

struct Box {
  std::vector<uint32_t> items;                   // Tuple, List; Dict: key, value, key, value, ...
  std::unordered_map<std::string, size_t> keys;  // Dict: key -> position of its value in items
  int64_t metadata = -1;                         // Dict: the object BUILD gave as _metadata
};

class Unpickler {
 public:
  Unpickler(std::string_view pkl, const std::string& where) : p_(pkl), where_(where) {}
  PickledStateDict run();

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(where_ + ": offset " + std::to_string(opAt_) + ": " + what);
  }
  std::string_view take(size_t n) {
    if (p_.size() - pos_ < n) fail(std::string("truncated inside ") + opcodeName(op_));
    std::string_view s = p_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  uint64_t uint(size_t n) {
    const std::string_view s = take(n);
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(s[i]);
    return v;
  }
  std::string_view line() {
    const size_t nl = p_.find('\n', pos_);
    if (nl == std::string_view::npos) fail("truncated inside GLOBAL");
    std::string_view s = p_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return s;
  }
  uint32_t make(Kind k, int64_t num = 0) {
    Obj o;
    o.kind = k;
    o.num = num;
    objs_.push_back(o);
    return static_cast<uint32_t>(objs_.size() - 1);
  }
  uint32_t makeText(Kind k, std::string text) {
    const uint32_t id = make(k);
    objs_[id].ref = static_cast<uint32_t>(texts_.size());
    texts_.push_back(std::move(text));
    return id;
  }
  uint32_t makeTuple(std::vector<uint32_t> items) {
    const uint32_t id = make(Kind::Tuple);
    if (!items.empty()) box(id).items = std::move(items);
    return id;
  }
  const std::string& text(uint32_t id) const { return texts_[objs_[id].ref]; }
  // The contents of container `id`, made on first use (the deque keeps references valid as more are made).
  Box& box(uint32_t id) {
    if (objs_[id].ref == kNoRef) {
      objs_[id].ref = static_cast<uint32_t>(boxes_.size());
      boxes_.emplace_back();
    }
    return boxes_[objs_[id].ref];
  }
  const std::vector<uint32_t>& items(uint32_t id) const {
    static const std::vector<uint32_t> none;
    return objs_[id].ref == kNoRef ? none : boxes_[objs_[id].ref].items;
  }
  bool isStr(uint32_t id, const char* s) const { return objs_[id].kind == Kind::Str && text(id) == s; }
  void push(uint32_t id) { stack_.push_back(id); }
  uint32_t pop() {
    if (stack_.size() <= floor()) fail(std::string("stack underflow at ") + opcodeName(op_));
    const uint32_t id = stack_.back();
    stack_.pop_back();
    return id;
  }
  uint32_t& top() {
    if (stack_.size() <= floor()) fail(std::string("stack underflow at ") + opcodeName(op_));
    return stack_.back();
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<uint32_t> popMark() {
    if (marks_.empty()) fail(std::string(opcodeName(op_)) + " without a MARK");
    std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  uint32_t as(uint32_t id, Kind k, const char* what) const {
    if (objs_[id].kind != k)
      fail(std::string(what) + " must be a " + kindName(k) + ", not a " + kindName(objs_[id].kind));
    return id;
  }
  int64_t intOf(uint32_t id, const char* what) const { return objs_[as(id, Kind::Int, what)].num; }
  std::vector<int64_t> intsOf(uint32_t id, const char* what) const {
    std::vector<int64_t> v;
    for (uint32_t e : items(as(id, Kind::Tuple, what))) v.push_back(intOf(e, what));
    return v;
  }

  bool step();
  bool stepStack(unsigned char op);
  bool stepValue(unsigned char op);
  void global();
  void reduce();
  void build();
  void setItem(uint32_t dict, uint32_t key, uint32_t value);
  void persistentId();
  uint32_t rebuildTensor(const std::vector<uint32_t>& args);
  uint32_t withRequiresGrad(uint32_t tensor, bool requiresGrad);
  PickledStateDict result(uint32_t top);
  nlohmann::json metadataOf(uint32_t id);

  std::string_view p_;
  const std::string& where_;
  size_t pos_ = 0, opAt_ = 0;
  unsigned char op_ = 0;
  std::vector<Obj> objs_;
  std::vector<std::string> texts_;
  std::deque<Box> boxes_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, uint32_t> memo_;
  std::vector<PickledTensor> tensors_;
  std::vector<TorchStorageRef> storages_;
  std::unordered_map<std::string, size_t> storageByKey_;
  uint32_t result_ = 0;
};

PickledStateDict Unpickler::run() {
  while (true) {
    if (pos_ >= p_.size()) {
      opAt_ = pos_;
      fail("the pickle ends without STOP (truncated?)");
    }
    if (!step()) return result(result_);
  }
}

// One opcode; false after STOP.
bool Unpickler::step() {
  opAt_ = pos_;
  op_ = static_cast<unsigned char>(p_[pos_++]);
  if (stepStack(op_) || stepValue(op_)) return true;
  if (op_ == '.') {
    result_ = pop();
    return false;
  }
  const char* name = opcodeName(op_);
  if (name) fail(std::string("opcode ") + name + " is not allowed in a state_dict (torch.load(weights_only=True) refuses it too)");
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", op_);
  fail(std::string("unknown opcode ") + hex + " (not a pickle, or damaged)");
}

// Structure: marks, tuples, containers, memo, calls.
bool Unpickler::stepStack(unsigned char op) {
  switch (op) {
    case 0x80: take(1); return true;  // PROTO: any version, as torch
    case '(': marks_.push_back(stack_.size()); return true;
    case ')': push(make(Kind::Tuple)); return true;
    case ']': push(make(Kind::List)); return true;
    case '}': push(make(Kind::Dict)); return true;
    case 0x8f: push(make(Kind::Set)); return true;
    case 't': push(makeTuple(popMark())); return true;
    case 0x85: case 0x86: case 0x87: {
      std::vector<uint32_t> t(static_cast<size_t>(op - 0x84));
      for (size_t i = t.size(); i-- > 0;) t[i] = pop();
      push(makeTuple(std::move(t)));
      return true;
    }
    case 'a': { const uint32_t v = pop(); box(as(top(), Kind::List, "APPEND's target")).items.push_back(v); return true; }
    case 'e': {
      std::vector<uint32_t> v = popMark();
      auto& list = box(as(top(), Kind::List, "APPENDS' target")).items;
      list.insert(list.end(), v.begin(), v.end());
      return true;
    }
    case 's': { const uint32_t v = pop(), k = pop(); setItem(top(), k, v); return true; }
    case 'u': {
      std::vector<uint32_t> kv = popMark();
      if (kv.size() % 2) fail("SETITEMS with an odd number of items");
      const uint32_t d = top();
      for (size_t i = 0; i < kv.size(); i += 2) setItem(d, kv[i], kv[i + 1]);
      return true;
    }
    case 'q': case 'r': { const uint64_t slot = uint(op == 'q' ? 1 : 4); memo_[slot] = top(); return true; }
    case 'h': case 'j': {
      const auto it = memo_.find(uint(op == 'h' ? 1 : 4));
      if (it == memo_.end()) fail(std::string(opcodeName(op)) + " of a memo slot never PUT");
      push(it->second);
      return true;
    }
    case 'c': global(); return true;
    case 'R': reduce(); return true;
    case 'b': build(); return true;
    case 'Q': persistentId(); return true;
    case 0x81: {  // NEWOBJ: torch instantiates torch.nn.Parameter only
      const uint32_t args = pop(), cls = pop();
      if (objs_[cls].kind != Kind::Global || objs_[cls].num != static_cast<int64_t>(Global::Parameter))
        fail("NEWOBJ of anything but torch.nn.parameter.Parameter");
      push(cls);
      push(args);
      reduce();
      return true;
    }
    default: return false;
  }
}

// Scalars and strings.
bool Unpickler::stepValue(unsigned char op) {
  switch (op) {
    case 'N': push(make(Kind::None)); return true;
    case 0x88: case 0x89: push(make(Kind::Bool, op == 0x88)); return true;
    case 'K': push(make(Kind::Int, static_cast<int64_t>(uint(1)))); return true;
    case 'M': push(make(Kind::Int, static_cast<int64_t>(uint(2)))); return true;
    case 'J': push(make(Kind::Int, static_cast<int32_t>(static_cast<uint32_t>(uint(4))))); return true;
    case 0x8a: {  // LONG1: n-byte two's complement; gnn needs no integer beyond 64 bits
      const size_t n = static_cast<size_t>(uint(1));
      if (n > 8) fail("LONG1 integer of " + std::to_string(n) + " bytes (more than 64 bits)");
      uint64_t v = n ? uint(n) : 0;
      if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
      push(make(Kind::Int, static_cast<int64_t>(v)));
      return true;
    }
    case 'X': case 'U': {  // BINUNICODE; SHORT_BINSTRING (torch.load decodes it as a str)
      const size_t n = static_cast<size_t>(uint(op == 'X' ? 4 : 1));
      push(makeText(Kind::Str, std::string(take(n))));
      return true;
    }
    default: return false;
  }
}

void Unpickler::global() {
  const std::string module(line()), name(line());
  const std::string full = module + "." + name;
  Global g = Global::Storage;
  TorchScalar scalar = TorchScalar::Float;
  if (full == "collections.OrderedDict") g = Global::OrderedDict;
  else if (full == "torch._utils._rebuild_tensor_v2") g = Global::RebuildTensorV2;
  else if (full == "torch._utils._rebuild_parameter") g = Global::RebuildParameter;
  else if (full == "torch.nn.parameter.Parameter") g = Global::Parameter;
  else if (full == "torch.Size") g = Global::Size;
  else {
    bool storage = false;
    for (TorchScalar s : kScalars)
      if (full == std::string("torch.") + torchStorageName(s)) {
        scalar = s;
        storage = true;
      }
    if (!storage)
      fail("GLOBAL '" + module + " " + name + "' (" + full + ") is not allowed in a state_dict; allowed: " + kAllowed);
  }
  const uint32_t id = makeText(Kind::Global, full);
  objs_[id].num = static_cast<int64_t>(g);
  objs_[id].scalar = scalar;
  push(id);
}

void Unpickler::reduce() {
  const uint32_t argsId = pop();
  const uint32_t fn = top();
  if (objs_[fn].kind != Kind::Global) fail(std::string("REDUCE on a ") + kindName(objs_[fn].kind) + ", not an allowed global");
  const std::vector<uint32_t> args = items(as(argsId, Kind::Tuple, "REDUCE's arguments"));
  const auto g = static_cast<Global>(objs_[fn].num);
  const std::string call = "REDUCE " + text(fn) + " with " + std::to_string(args.size()) + " arguments";
  uint32_t out = 0;
  if (g == Global::OrderedDict) {
    if (!args.empty()) fail(call + " (gnn reads OrderedDict() only)");
    out = make(Kind::Dict);
    objs_[out].ordered = true;
  } else if (g == Global::Size) {
    if (args.size() != 1) fail(call);
    intsOf(args[0], "torch.Size's argument");
    out = makeTuple(items(args[0]));
  } else if (g == Global::RebuildTensorV2) {
    if (args.size() != 6 && args.size() != 7) fail(call);
    out = rebuildTensor(args);
  } else if (g == Global::RebuildParameter || g == Global::Parameter) {
    if (args.empty() || args.size() > 3) fail(call);
    as(args[0], Kind::Tensor, "a Parameter's data");
    const bool grad = args.size() < 2 || objs_[as(args[1], Kind::Bool, "requires_grad")].num != 0;
    if (args.size() == 3 && !items(as(args[2], Kind::Dict, "backward_hooks")).empty())
      fail("a Parameter with backward hooks (they are Python functions)");
    out = withRequiresGrad(args[0], grad);
  } else {
    fail(call + " (a storage class is not called in a state_dict)");
  }
  top() = out;
}

uint32_t Unpickler::rebuildTensor(const std::vector<uint32_t>& args) {
  PickledTensor t;
  t.storage = static_cast<size_t>(objs_[as(args[0], Kind::Storage, "_rebuild_tensor_v2's storage")].num);
  t.offset = intOf(args[1], "storage_offset");
  t.size = intsOf(args[2], "size");
  t.stride = intsOf(args[3], "stride");
  t.requiresGrad = objs_[as(args[4], Kind::Bool, "requires_grad")].num != 0;
  if (!items(as(args[5], Kind::Dict, "backward_hooks")).empty()) fail("a tensor with backward hooks (Python functions)");
  if (args.size() == 7 && objs_[args[6]].kind != Kind::None && objs_[args[6]].kind != Kind::Dict)
    fail(std::string("_rebuild_tensor_v2's metadata is a ") + kindName(objs_[args[6]].kind));
  const TorchStorageRef& ref = storages_[t.storage];
  const std::string what = "tensor on storage '" + ref.key + "' (" + std::to_string(ref.numel) + " elements)";
  if (t.size.size() != t.stride.size())
    fail(what + ": " + std::to_string(t.size.size()) + " sizes but " + std::to_string(t.stride.size()) + " strides");
  if (t.offset < 0) fail(what + ": negative storage offset " + std::to_string(t.offset));
  // numel and the last element's position, without overflow: every factor is bounded by the storage first.
  int64_t numel = 1, last = t.offset;
  bool empty = false;
  int64_t span = 1;  // the product of the non-zero sizes: an empty tensor's other sizes must not overflow either
  for (size_t d = 0; d < t.size.size(); ++d) {
    if (t.size[d] < 0 || t.stride[d] < 0) fail(what + ": negative size or stride");
    if (t.size[d] > 0 && span > (int64_t{1} << 62) / t.size[d]) fail(what + ": its sizes multiply past 2^62");
    span *= std::max<int64_t>(t.size[d], 1);
    empty = empty || t.size[d] == 0;
  }
  if (!empty && t.offset >= ref.numel) fail(what + ": storage offset " + std::to_string(t.offset) + " past its end");
  for (size_t d = 0; d < t.size.size() && !empty; ++d) {
    // More elements than the storage holds only for overlapping (expanded) views: refused, so a tiny file
    // cannot ask for a huge tensor.
    if (numel > ref.numel / t.size[d])
      fail(what + ": more elements than its storage (an expanded view? save x.contiguous())");
    numel *= t.size[d];
    if (t.size[d] > 1 && t.stride[d] > (ref.numel - 1 - last) / (t.size[d] - 1))
      fail(what + ": the view reaches past the storage's end (sizes " + std::to_string(t.size.size()) +
           "-d, offset " + std::to_string(t.offset) + ")");
    last += (t.size[d] - 1) * t.stride[d];
  }
  tensors_.push_back(std::move(t));
  return make(Kind::Tensor, static_cast<int64_t>(tensors_.size() - 1));
}

uint32_t Unpickler::withRequiresGrad(uint32_t tensor, bool requiresGrad) {
  PickledTensor t = tensors_[static_cast<size_t>(objs_[tensor].num)];
  t.requiresGrad = requiresGrad;
  tensors_.push_back(std::move(t));
  return make(Kind::Tensor, static_cast<int64_t>(tensors_.size() - 1));
}

void Unpickler::persistentId() {
  const std::vector<uint32_t> pid = items(as(pop(), Kind::Tuple, "a persistent id"));
  if (pid.size() != 5 || !isStr(pid[0], "storage"))
    fail("a persistent id that is not ('storage', type, key, location, numel)");
  const Obj& cls = objs_[pid[1]];
  if (cls.kind != Kind::Global || cls.num != static_cast<int64_t>(Global::Storage))
    fail("a persistent id whose storage type is not a torch.<T>Storage class");
  TorchStorageRef ref;
  ref.scalar = cls.scalar;
  ref.key = text(as(pid[2], Kind::Str, "a storage key"));
  ref.location = text(as(pid[3], Kind::Str, "a storage location"));
  ref.numel = intOf(pid[4], "a storage's numel");
  if (ref.numel < 0) fail("storage '" + ref.key + "' with a negative numel");
  const auto [it, fresh] = storageByKey_.emplace(ref.key, storages_.size());
  if (fresh) {
    storages_.push_back(ref);
  } else {
    const TorchStorageRef& was = storages_[it->second];
    if (was.scalar != ref.scalar || was.numel != ref.numel)
      fail("storage '" + ref.key + "' declared as " + torchStorageName(was.scalar) + "[" + std::to_string(was.numel) +
           "] and as " + torchStorageName(ref.scalar) + "[" + std::to_string(ref.numel) + "]");
  }
  push(make(Kind::Storage, static_cast<int64_t>(it->second)));
}

void Unpickler::build() {
  const uint32_t state = pop();
  const uint32_t inst = top();
  if (objs_[inst].kind != Kind::Dict || !objs_[inst].ordered)
    fail(std::string("BUILD on a ") + kindName(objs_[inst].kind) + " (only an OrderedDict's attributes are set)");
  const std::vector<uint32_t>& s = items(as(state, Kind::Dict, "BUILD's state"));
  for (size_t i = 0; i < s.size(); i += 2)
    if (isStr(s[i], "_metadata")) box(inst).metadata = s[i + 1];
}

void Unpickler::setItem(uint32_t dict, uint32_t key, uint32_t value) {
  const Obj& k = objs_[key];
  std::string h;
  if (k.kind == Kind::Str) h = "s" + text(key);
  else if (k.kind == Kind::Int || k.kind == Kind::Bool) h = "i" + std::to_string(k.num);
  else if (k.kind == Kind::None) h = "n";
  else fail(std::string("a dict key that is a ") + kindName(k.kind));
  Box& d = box(as(dict, Kind::Dict, "SETITEM's target"));
  const auto [it, fresh] = d.keys.emplace(std::move(h), d.items.size() + 1);
  if (fresh) {
    d.items.push_back(key);
    d.items.push_back(value);
  } else {
    d.items[it->second] = value;  // a repeated key keeps its first place, as in a Python dict
  }
}

PickledStateDict Unpickler::result(uint32_t top) {
  const std::vector<uint32_t>& d = items(as(top, Kind::Dict, "the pickled object (a state_dict)"));
  PickledStateDict out;
  for (size_t i = 0; i < d.size(); i += 2) {
    const Kind k = objs_[d[i]].kind, v = objs_[d[i + 1]].kind;
    if (k != Kind::Str) fail(std::string("a state_dict key that is a ") + kindName(k));
    if (v != Kind::Tensor) fail("state_dict entry '" + text(d[i]) + "' is a " + kindName(v) + ", not a tensor");
    out.entries.emplace_back(text(d[i]), tensors_[static_cast<size_t>(objs_[d[i + 1]].num)]);
  }
  out.storages = std::move(storages_);
  const uint32_t ref = objs_[top].ref;
  if (ref != kNoRef && boxes_[ref].metadata >= 0) out.metadata = metadataOf(static_cast<uint32_t>(boxes_[ref].metadata));
  return out;
}

// {"module path": {"version": 1, ...}}, values that are ints, bools, strings or None.
nlohmann::json Unpickler::metadataOf(uint32_t id) {
  nlohmann::json out = nlohmann::json::object();
  const std::vector<uint32_t>& d = items(as(id, Kind::Dict, "_metadata"));
  for (size_t i = 0; i < d.size(); i += 2) {
    const std::string& path = text(as(d[i], Kind::Str, "a _metadata key"));
    const std::vector<uint32_t>& m = items(as(d[i + 1], Kind::Dict, "a _metadata value"));
    nlohmann::json& entry = out[path] = nlohmann::json::object();
    for (size_t j = 0; j < m.size(); j += 2) {
      const std::string& name = text(as(m[j], Kind::Str, "a _metadata field"));
      const Obj& v = objs_[m[j + 1]];
      if (v.kind == Kind::Int) entry[name] = v.num;
      else if (v.kind == Kind::Bool) entry[name] = v.num != 0;
      else if (v.kind == Kind::Str) entry[name] = text(m[j + 1]);
      else if (v.kind == Kind::None) entry[name] = nullptr;
      else fail("_metadata['" + path + "']['" + name + "'] is a " + kindName(v.kind));
    }
  }
  return out;
}

// ---- writer ----

void putInt(std::string& o, int64_t v) {
  if (v >= 0 && v < 256) {
    o += 'K';
    o += static_cast<char>(v);
  } else if (v >= 0 && v < 65536) {
    o += 'M';
    o += static_cast<char>(v & 0xff);
    o += static_cast<char>(v >> 8);
  } else if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
    o += 'J';
    for (int i = 0; i < 4; ++i) o += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  } else {
    o += '\x8a';
    o += '\x08';
    for (int i = 0; i < 8; ++i) o += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  }
}

void putStr(std::string& o, const std::string& s) {
  o += 'X';
  for (int i = 0; i < 4; ++i) o += static_cast<char>((s.size() >> (8 * i)) & 0xff);
  o += s;
}

void putGlobal(std::string& o, const char* module, const char* name) {
  o += 'c';
  o += module;
  o += '\n';
  o += name;
  o += '\n';
}

void putInts(std::string& o, const std::vector<int64_t>& v) {
  if (v.empty()) {
    o += ')';
    return;
  }
  o += '(';
  for (int64_t x : v) putInt(o, x);
  o += 't';
}

void putMetadataValue(std::string& o, const nlohmann::json& v) {
  if (v.is_boolean()) o += v.get<bool>() ? '\x88' : '\x89';
  else if (v.is_number_integer()) putInt(o, v.get<int64_t>());
  else if (v.is_string()) putStr(o, v.get<std::string>());
  else if (v.is_null()) o += 'N';
  else throw std::invalid_argument("writeStateDict: _metadata values are ints, bools, strings or null, not " + v.dump());
}

}  // namespace

const char* torchStorageName(TorchScalar s) {
  static const char* names[] = {"FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage",
                                "IntStorage",   "ShortStorage",  "CharStorage", "ByteStorage",     "BoolStorage"};
  return names[static_cast<int>(s)];
}

size_t torchElementSize(TorchScalar s) {
  static const size_t sizes[] = {4, 8, 2, 2, 8, 4, 2, 1, 1, 1};
  return sizes[static_cast<int>(s)];
}

PickledStateDict parseStateDictPickle(std::string_view pkl, const std::string& where) {
  return Unpickler(pkl, where).run();
}

std::string writeStateDictPickle(const PickledStateDict& sd) {
  std::string o = "\x80\x02";
  putGlobal(o, "collections", "OrderedDict");
  o += ")R";
  if (!sd.entries.empty()) o += '(';
  for (const auto& [name, t] : sd.entries) {
    const TorchStorageRef& ref = sd.storages.at(t.storage);
    putStr(o, name);
    putGlobal(o, "torch._utils", "_rebuild_tensor_v2");
    o += "((";
    putStr(o, "storage");
    putGlobal(o, "torch", torchStorageName(ref.scalar));
    putStr(o, ref.key);
    putStr(o, ref.location);
    putInt(o, ref.numel);
    o += "tQ";  // the persistent id, then the rest of the arguments
    putInt(o, t.offset);
    putInts(o, t.size);
    putInts(o, t.stride);
    o += t.requiresGrad ? '\x88' : '\x89';
    putGlobal(o, "collections", "OrderedDict");
    o += ")Rt";  // backward_hooks = OrderedDict()
    o += 'R';
  }
  if (!sd.entries.empty()) o += 'u';
  if (sd.metadata.is_object()) {
    o += '}';
    putStr(o, "_metadata");
    putGlobal(o, "collections", "OrderedDict");
    o += ")R";
    for (const auto& [path, fields] : sd.metadata.items()) {
      putStr(o, path);
      o += '}';
      for (const auto& [name, v] : fields.items()) {
        putStr(o, name);
        putMetadataValue(o, v);
        o += 's';
      }
      o += 's';
    }
    o += "sb";
  }
  o += '.';
  return o;
}

}  // namespace gnn
