// SD files: records, data items, then each mol block through RDKit's MolBlockToMol and the featuriser.
#include <cstddef>
#include <cstdint>

#include "fuzz/FuzzInput.h"
#include "fuzz/MoleculeRecords.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gnn::fuzz::TempTree tree;
  gnn::MoleculeSourceOptions options;
  options.path = tree.write("in.sdf", {reinterpret_cast<const char*>(data), size});
  options.format = "sdf";
  options.targetColumns = {"y"};
  gnn::fuzz::readMolecules(options);
  return 0;
}
