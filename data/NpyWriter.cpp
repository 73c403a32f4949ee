#include "data/NpyWriter.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>

namespace gnn {

namespace {
const char* descrOf(DType dt) {
  switch (dt) {
    case DType::F32: return "<f4";
    case DType::F64: return "<f8";
    case DType::I64: return "<i8";
    case DType::U8: return "|u1";
    default: throw std::invalid_argument(std::string("writeNpy: dtype ") + dtypeName(dt) + " is not written");
  }
}
}  // namespace

void writeNpy(const std::string& path, const Tensor& array) {
  const Tensor& a = array;  // tensors are contiguous
  std::string shape = "(";
  for (int d = 0; d < a.rank(); ++d) shape += std::to_string(a.dim(d)) + (a.rank() == 1 || d + 1 < a.rank() ? "," : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + descrOf(a.dtype()) + "', 'fortran_order': False, 'shape': " +
                       shape + ", }";
  // The magic (6), version (2) and length (2) bytes and the header end on a 64-byte boundary with a newline.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (!out) throw std::runtime_error(path + ": cannot create " + tmp);
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const uint16_t len = static_cast<uint16_t>(header.size());
  const unsigned char lenBytes[2] = {static_cast<unsigned char>(len & 0xff), static_cast<unsigned char>(len >> 8)};
  const size_t bytes = static_cast<size_t>(a.numel()) * dtypeSize(a.dtype());
  const bool ok = std::fwrite(magic, 1, 8, out.get()) == 8 && std::fwrite(lenBytes, 1, 2, out.get()) == 2 &&
                  std::fwrite(header.data(), 1, header.size(), out.get()) == header.size() &&
                  (bytes == 0 || std::fwrite(a.raw(), 1, bytes, out.get()) == bytes) &&
                  std::fflush(out.get()) == 0;
  if (!ok || std::fclose(out.release()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename into place: " + ec.message());
  }
}

}  // namespace gnn
