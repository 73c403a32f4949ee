// .npz datasets (NpzFile, then NpzDataset's validation and every accessor). Member CRC-32s would stop
// almost every mutation at the checksum, so for inputs of even length the target first rewrites each
// central-directory CRC to match its member's bytes (what a crafted file does); odd lengths keep the
// stored CRCs, so the check itself is fuzzed too.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "data/NpzDataset.h"
#include "fuzz/FuzzInput.h"
#include "fuzz/ZipCrcs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size % 2 == 0) gnn::fuzz::fixZipCrcs(bytes);
  gnn::fuzz::TempTree tree;
  const std::string path = tree.write("in.npz", bytes);
  try {
    gnn::NpzDataset ds(path);
    for (size_t i = 0; i < ds.size() && i < 64; ++i) {
      ds.get(i);
      ds.smiles(i);
      ds.sourceIndex(i);
      ds.sourceLine(i);
    }
    for (const std::string& name : ds.splitNames()) ds.split(name);
    ds.metadataJson();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
