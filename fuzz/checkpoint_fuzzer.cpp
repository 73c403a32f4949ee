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
#include "gnn/io/Checkpoint.h"
#include "gnn/io/Fnv1a.h"
#include "gnn/nn/Linear.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/Random.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size % 2 == 0 && size >= 8) {
    const uint64_t h = gnn::Fnv1a::of(bytes.data(), size - 8);  // the checkpoint's trailer
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
