#include "gnn/io/NpyArray.h"

#include <cstring>
#include <stdexcept>

namespace gnn {
namespace {

// The text after 'key': in numpy's header dict, up to its closing delimiter; empty when absent.
std::string_view field(std::string_view header, const std::string& key) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string_view::npos) return {};
  size_t p = header.find(':', k);
  if (p == std::string_view::npos) return {};
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) return {};
  const char open = header[p];
  const char close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
  const size_t e = header.find(close, p + 1);
  if (e == std::string_view::npos) return {};
  return header.substr(p, e - p + (close == ',' ? 0 : 1));
}

}  // namespace

NpyArray parseNpy(std::string_view b, const std::string& where) {
  auto fail = [&](const std::string& what) -> void { throw std::runtime_error(where + ": " + what); };
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0) fail("not a .npy array (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(b[6]);
  if (major < 1 || major > 3) fail(".npy version " + std::to_string(major) + " is not supported");
  const size_t lenBytes = major == 1 ? 2 : 4;
  if (b.size() < 8 + lenBytes) fail("truncated .npy header");
  size_t hlen = 0;
  for (size_t i = lenBytes; i-- > 0;) hlen = (hlen << 8) | static_cast<unsigned char>(b[8 + i]);
  const size_t start = 8 + lenBytes;
  if (hlen > b.size() - start) fail("truncated .npy header");
  const std::string_view header = b.substr(start, hlen), data = b.substr(start + hlen);
  const std::string_view descr = field(header, "descr"), order = field(header, "fortran_order"),
                         shapeText = field(header, "shape");
  if (descr.empty() || order.empty() || shapeText.size() < 2 || shapeText.front() != '(')
    fail("damaged .npy header '" + std::string(header.substr(0, 120)) + "'");
  if (order != "False") fail("a Fortran-order array (save it with np.ascontiguousarray)");
  struct Kind { const char* descr; DType dtype; size_t size; };
  static const Kind kinds[] = {{"'<f4'", DType::F32, 4}, {"'<f8'", DType::F64, 8}, {"'<f2'", DType::F16, 2},
                               {"'<i8'", DType::I64, 8}, {"'<i4'", DType::I32, 4}, {"'<i2'", DType::I32, 2},
                               {"'|i1'", DType::I32, 1}, {"'|u1'", DType::U8, 1},  {"'|b1'", DType::U8, 1}};
  const Kind* kind = nullptr;
  for (const Kind& k : kinds)
    if (descr == k.descr) kind = &k;
  if (!kind) fail("dtype " + std::string(descr) + " is not supported (float16/32/64, int8-64, uint8, bool, little-endian)");
  Shape shape;
  int64_t numel = 1;
  for (size_t p = 1; p + 1 < shapeText.size();) {
    while (p + 1 < shapeText.size() && (shapeText[p] == ' ' || shapeText[p] == ',')) ++p;
    if (p + 1 >= shapeText.size()) break;
    int64_t d = 0;
    if (shapeText[p] < '0' || shapeText[p] > '9') fail("damaged .npy shape " + std::string(shapeText));
    for (; p + 1 < shapeText.size() && shapeText[p] >= '0' && shapeText[p] <= '9'; ++p) {
      d = d * 10 + (shapeText[p] - '0');
      if (d > static_cast<int64_t>(data.size()) + 1) d = static_cast<int64_t>(data.size()) + 1;  // too big anyway
    }
    shape.push_back(d);
    if (shape.size() > 4) fail("rank above 4 (gnn's tensors have rank <= 4)");
    numel = (numel != 0 && d > static_cast<int64_t>(data.size()) / numel + 1) ? static_cast<int64_t>(data.size()) + 1 : numel * d;
  }
  if (static_cast<uint64_t>(numel) * kind->size != data.size())
    fail("shape " + shapeString(shape) + " of " + std::string(descr) + " needs " +
         std::to_string(static_cast<uint64_t>(numel) * kind->size) + " bytes but the array has " + std::to_string(data.size()));
  NpyArray out;
  out.isBool = std::string_view(kind->descr) == "'|b1'";
  out.tensor = Tensor::empty(shape, kind->dtype);
  const auto n = static_cast<size_t>(numel);
  if (kind->size == dtypeSize(kind->dtype)) {
    if (n) std::memcpy(out.tensor.raw(), data.data(), data.size());
    if (out.isBool)
      for (size_t i = 0; i < n; ++i) out.tensor.data<uint8_t>()[i] = data[i] != 0;
  } else {
    int32_t* o = out.tensor.data<int32_t>();
    for (size_t i = 0; i < n; ++i) {
      int16_t v = 0;
      if (kind->size == 2) std::memcpy(&v, data.data() + 2 * i, 2);
      o[i] = kind->size == 1 ? static_cast<int8_t>(data[i]) : v;
    }
  }
  return out;
}

}  // namespace gnn
