// PyTorch state_dicts (gnn/io/StateDict): the zip container, the restricted unpickler, the storages' views and
// the .npz path. Member CRC-32s would stop almost every mutation at the checksum, so for inputs of even length
// the target first rewrites each central-directory CRC to match its member's bytes (what a crafted file does);
// odd lengths keep the stored CRCs, so the check itself is fuzzed too. A state_dict that loads is mapped onto a
// small module (not strict) and written back, and the written file must read back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "fuzz/FuzzInput.h"
#include "fuzz/ZipCrcs.h"
#include "gnn/io/StateDict.h"
#include "gnn/io/ZipArchive.h"
#include "gnn/nn/Linear.h"
#include "gnn/system/Random.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size % 2 == 0) gnn::fuzz::fixZipCrcs(bytes);
  gnn::fuzz::TempTree tree;
  const std::string path = tree.write("in.pt", bytes);
  gnn::StateDict sd;
  try {
    sd = gnn::readStateDict(path);
  } catch (const std::runtime_error&) {
    return 0;
  }
  gnn::Generator gen(0);
  gnn::Linear model(4, 2, gen);
  try {
    gnn::loadStateDictInto(model, sd, /*strict=*/false);
  } catch (const std::runtime_error&) {
  }
  // What was read writes and reads back whole (the writer is fuzzed by what the reader accepts).
  sd.metadata = nullptr;  // metadata of any JSON the reader accepted round-trips too, but keep it simple
  const std::string out = (tree.root() / "out.pt").string();
  gnn::writeStateDict(out, sd);
  const gnn::StateDict back = gnn::readStateDict(out);
  if (back.entries.size() != sd.entries.size()) std::abort();
  for (size_t k = 0; k < sd.entries.size(); ++k)
    if (back.entries[k].first != sd.entries[k].first || !back.entries[k].second.bitEqual(sd.entries[k].second))
      std::abort();
  return 0;
}
