// One SMILES line through the featuriser (in memory): parse, OGB features, Graphormer encodings, and the
// record path build_dataset takes (length and atom limits, UTF-8 check).
#include <cstddef>
#include <cstdint>
#include <string>

#include "data/GraphormerEncodings.h"
#include "data/MoleculeDatasetBuilder.h"
#include "data/SmilesFeaturizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static gnn::RdkitLogSilencer quiet;
  static const gnn::MoleculeDatasetBuilder builder{gnn::BuildOptions{}};
  static gnn::GraphormerEncodings encodings(5);
  gnn::MoleculeRecord record;
  record.smiles.assign(reinterpret_cast<const char*>(data), size);
  if (record.smiles.empty()) return 0;  // an empty record means "XYZ atoms" to the builder
  gnn::MoleculeGraph graph;
  std::string error;
  if (builder.featurize(record, graph, error)) encodings.compute(graph);
  return 0;
}
