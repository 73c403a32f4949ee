// MoleculeNet CSV, plain or gzip (GzLineReader tells them by the magic bytes): header, quoting, labels,
// split column, then each molecule featurised.
#include <cstddef>
#include <cstdint>

#include "fuzz/FuzzInput.h"
#include "fuzz/MoleculeRecords.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gnn::fuzz::TempTree tree;
  gnn::MoleculeSourceOptions options;
  options.path = tree.write("in.csv", {reinterpret_cast<const char*>(data), size});
  options.format = "csv";
  options.targetColumns = {"y", "z"};
  // Half the inputs also name a split column, so both header layouts are reached.
  if (size % 2) options.splitColumn = "split";
  gnn::fuzz::readMolecules(options);
  return 0;
}
