// Multi-molecule XYZ: atom counts checked against the lines that follow, comment-line targets, element
// symbols and coordinates, then each frame featurised (atoms only, no bonds).
#include <cstddef>
#include <cstdint>

#include "fuzz/FuzzInput.h"
#include "fuzz/MoleculeRecords.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gnn::fuzz::TempTree tree;
  gnn::MoleculeSourceOptions options;
  options.path = tree.write("in.xyz", {reinterpret_cast<const char*>(data), size});
  options.format = "xyz";
  options.targetColumns = {"e_pbe0_atomization_kcal_mol"};
  gnn::fuzz::readMolecules(options);
  return 0;
}
