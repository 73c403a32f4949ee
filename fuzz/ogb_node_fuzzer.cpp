// OGB's node-property-prediction raw layout, from one input cut at 0x01 bytes into raw/edge.csv,
// raw/node-feat.csv, raw/node-label.csv, raw/num-node-list.csv and split/s/{train,valid,test}.csv (a missing
// part: that file is absent). The loaded graph's sparse features are built too.
#include <cstddef>
#include <cstdint>

#include "data/GzLineReader.h"
#include "data/OgbNodeDataset.h"
#include "fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gnn::fuzz::TempTree tree;
  const auto parts = gnn::fuzz::splitSections(data, size);
  static const char* files[] = {"raw/edge.csv",      "raw/node-feat.csv",   "raw/node-label.csv",
                                "raw/num-node-list.csv", "split/s/train.csv", "split/s/valid.csv",
                                "split/s/test.csv"};
  for (size_t i = 0; i < parts.size() && i < 7; ++i) tree.write(files[i], parts[i]);
  try {
    gnn::OgbNodeOptions options;  // the only split present
    options.split = "";
    // Every normalisation in turn, chosen by the input's length (None, Row, Standard, Auto).
    options.normalization = static_cast<gnn::FeatureNormalization>(size % 4);
    gnn::OgbNodeDataset ds = gnn::OgbNodeDataset::load(tree.root().string(), options);
    ds.sparseFeatures();
  } catch (const gnn::InputError&) {
  }
  return 0;
}
