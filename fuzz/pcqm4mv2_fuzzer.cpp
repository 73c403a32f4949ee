// The PCQM4Mv2 raw layout: <root>/raw/data.csv(.gz) and <root>/split/{train,valid,test}.csv, from one input
// cut at 0x01 bytes into those four files (a missing part: that file is absent).
#include <cstddef>
#include <cstdint>

#include "data/Pcqm4mv2Reader.h"
#include "fuzz/FuzzInput.h"
#include "fuzz/MoleculeRecords.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gnn::fuzz::TempTree tree;
  const auto parts = gnn::fuzz::splitSections(data, size);
  static const char* files[] = {"raw/data.csv", "split/train.csv", "split/valid.csv", "split/test.csv"};
  for (size_t i = 0; i < parts.size() && i < 4; ++i) tree.write(files[i], parts[i]);
  const std::string root = tree.root().string();
  try {
    gnn::Pcqm4mv2Reader reader(root);
    gnn::fuzz::featurizeAll(reader);
    gnn::Pcqm4mv2Reader::readSplits(root);
  } catch (const gnn::InputError&) {
  }
  return 0;
}
