#include "data/OgbNodeMaster.h"

#include <string>

namespace gnn {
namespace {
// From ogb/nodeproppred/master.csv (snap-stanford/ogb), whose rows read:
//   ,ogbn-proteins,ogbn-products,ogbn-arxiv,ogbn-mag,ogbn-papers100M
//   add_inverse_edge,True,True,False,False,False
//   has_edge_attr,True,False,False,False,False
//   additional node files,node_species,None,node_year,node_year,node_year
//   binary,False,False,False,False,True
constexpr OgbNodeMasterEntry kMaster[] = {
    {"ogbn-proteins", true, "node_species", true, false},
    {"ogbn-products", true, "", false, false},
    {"ogbn-arxiv", false, "node_year", false, false},
    {"ogbn-papers100M", false, "node_year", false, true},
};
}  // namespace

const OgbNodeMasterEntry* ogbNodeMasterEntry(std::string_view folderName) {
  for (const OgbNodeMasterEntry& e : kMaster) {
    // NodePropPredDataset's dir_name = '_'.join(name.split('-')) (ogb/nodeproppred/dataset.py).
    std::string folder = e.name;
    for (char& c : folder)
      if (c == '-') c = '_';
    if (folderName == e.name || folderName == folder) return &e;
  }
  return nullptr;
}

}  // namespace gnn
