// Checkpoints (gnn/Checkpoint): for inputs of even length the target first rewrites the trailing FNV-1a
// checksum to match (what a crafted file or a buggy writer gives), so the content checks behind it are
// fuzzed; odd lengths keep the stored checksum. A checkpoint that loads is then applied to a small model and
// an Adam optimizer, as --load and --resume do.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "fuzz/FuzzInput.h"
#include "gnn/Checkpoint.h"
#include "gnn/Linear.h"
#include "gnn/Optimizer.h"
#include "gnn/Random.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size % 2 == 0 && size >= 8) {
    uint64_t h = 1469598103934665603ULL;  // FNV-1a 64, as gnn/Checkpoint.cpp
    for (size_t i = 0; i < size - 8; ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 1099511628211ULL;
    std::memcpy(&bytes[size - 8], &h, 8);
  }
  gnn::fuzz::TempTree tree;
  const std::string path = tree.write("in.ckpt", bytes);
  try {
    gnn::Checkpoint ck = gnn::Checkpoint::load(path);
    gnn::Generator gen(0);
    gnn::Linear model(4, 2, gen);
    gnn::Adam opt({{model.parameters(), 0.0}}, 1e-3);
    ck.loadModule("model", model);
    ck.loadOptimizer(opt);
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
