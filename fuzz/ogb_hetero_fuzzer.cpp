// OGB's heterogeneous node-property layout (ogbn-mag's), from one input cut at 0x01 bytes into its files: node
// types "a" and "b" and relations a___r___b and b___s___b have their files at fixed paths, so the triplet list and
// the has-label / has-split tables decide which of them are read (a missing part: that file is absent). The graph
// the reader returns must validate, before and after ToUndirected.
#include <cstddef>
#include <cstdint>

#include "data/GzLineReader.h"
#include "data/OgbHeteroDataset.h"
#include "fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gnn::fuzz::TempTree tree;
  const auto parts = gnn::fuzz::splitSections(data, size);
  static const char* files[] = {
      "raw/num-node-dict.csv",          "raw/triplet-type-list.csv",
      "raw/relations/a___r___b/edge.csv", "raw/relations/a___r___b/num-edge-list.csv",
      "raw/relations/a___r___b/edge-feat.csv", "raw/relations/a___r___b/edge_reltype.csv",
      "raw/relations/b___s___b/edge.csv", "raw/relations/b___s___b/num-edge-list.csv",
      "raw/node-feat/b/node-feat.csv",  "raw/node-feat/b/node_year.csv",
      "raw/nodetype-has-label.csv",     "raw/node-label/b/node-label.csv",
      "split/s/nodetype-has-split.csv", "split/s/b/train.csv",
      "split/s/b/valid.csv",            "split/s/b/test.csv"};
  constexpr size_t kFiles = sizeof(files) / sizeof(files[0]);
  for (size_t i = 0; i < parts.size() && i < kFiles; ++i) tree.write(files[i], parts[i]);
  // The options from the input's length: each normalisation, features only (with None or Row, the two it takes),
  // inverse edges, ToUndirected inside load() or after it, merging same-type relations or not.
  gnn::OgbHeteroOptions options;
  options.normalization = static_cast<gnn::FeatureNormalization>(size % 4);
  options.featuresOnly = (size / 4) % 2 == 1 && (options.normalization == gnn::FeatureNormalization::None ||
                                                 options.normalization == gnn::FeatureNormalization::Row);
  options.addInverseEdges = (size / 8) % 2 ? gnn::AddInverseEdges::On : gnn::AddInverseEdges::Off;
  options.toUndirected = (size / 16) % 2 == 1;
  options.additionalNodeFiles = std::vector<std::string>{"node_year"};
  options.additionalEdgeFiles = std::vector<std::string>{"edge_reltype"};
  try {
    gnn::OgbHeteroDataset ds = gnn::OgbHeteroDataset::load(tree.root().string(), options);
    ds.graph.validate();  // a graph the reader accepted is consistent: any throw here is a finding
    ds.graph.toUndirected(gnn::EdgeReduce::Add, /*merge=*/(size / 32) % 2 == 0);
    ds.graph.validate();
  } catch (const gnn::InputError&) {
  }
  return 0;
}
