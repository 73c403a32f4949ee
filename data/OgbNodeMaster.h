// OgbNodeMaster: OGB's own settings for its homogeneous node-property datasets (ogbn-arxiv, ogbn-products,
// ogbn-proteins, ogbn-papers100M), copied as facts from OGB's ogb/nodeproppred/master.csv
// (github.com/snap-stanford/ogb, unchanged since commit 8b98212, Feb 2021). ogbn-mag is heterogeneous and not
// in the table: its raw layout is OgbHeteroDataset's, which keeps ogbn-mag's column itself.
//
//   if (const OgbNodeMasterEntry* e = ogbNodeMasterEntry("ogbn_products")) e->addInverseEdge;  // true
#pragma once
#include <string_view>

namespace gnn {

/// One dataset's column of master.csv (the rows the raw layout depends on).
struct OgbNodeMasterEntry {
  const char* name;                 ///< OGB's name, e.g. "ogbn-products"
  bool addInverseEdge;              ///< add_inverse_edge: edge.csv holds each undirected edge once
  const char* additionalNodeFiles;  ///< "additional node files" ("" for None), e.g. "node_year"
  bool hasEdgeAttr;                 ///< has_edge_attr: raw/edge-feat.csv.gz present
  bool binary;                      ///< binary: raw/data.npz instead of the .csv.gz files
};

/// The entry of a dataset folder named as OGB names the dataset ("ogbn-products") or as OGB's loader names the
/// folder it downloads into ("ogbn_products": the name's '-' replaced by '_'); null for any other name.
const OgbNodeMasterEntry* ogbNodeMasterEntry(std::string_view folderName);

}  // namespace gnn
