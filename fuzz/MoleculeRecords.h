// Reads every record of a molecule file and featurises each one as build_dataset does (default limits:
// --max-smiles-length 10000, --max-atoms 500), with Graphormer encodings (K = 5) on the molecules accepted.
// A molecule the library rejects is fine; an InputError for the file is fine; anything else is a bug.
#pragma once
#include <memory>
#include <string>

#include "data/GraphormerEncodings.h"
#include "data/GzLineReader.h"
#include "data/MoleculeDatasetBuilder.h"
#include "data/MoleculeSource.h"
#include "data/SmilesFeaturizer.h"

namespace gnn::fuzz {

inline void featurizeAll(MoleculeSource& source) {
  static const MoleculeDatasetBuilder builder{BuildOptions{}};
  static GraphormerEncodings encodings(5);
  static RdkitLogSilencer quiet;  // rejected molecules are expected: keep the fuzzer's output readable
  MoleculeRecord record;
  MoleculeGraph graph;
  std::string error;
  // A file of many tiny records is cheap to read but each record costs an RDKit parse: bound the work per
  // input so the fuzzer's timeout catches stalls, not long files.
  for (int n = 0; n < 64 && source.next(record); ++n)
    if (builder.featurize(record, graph, error)) encodings.compute(graph);
}

inline void readMolecules(const MoleculeSourceOptions& options) {
  try {
    std::unique_ptr<MoleculeSource> source = openMoleculeSource(options);
    featurizeAll(*source);
  } catch (const InputError&) {
  }
}

}  // namespace gnn::fuzz
