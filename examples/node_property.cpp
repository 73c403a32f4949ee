// node_property: node classification with PyTorch Geometric's ready models (GCN, GraphSAGE, GIN, GAT, GATv2,
// PNA, EdgeCNN: torch_geometric.nn.models with PyG's arguments, structure and parameter names) on a dataset in
// OGB's node-property raw layout (default: the shipped Cora with the Planetoid public split), or R-GCN or HGT on a
// heterogeneous one in OGB's heterogeneous layout (ogbn-mag's).
//
//   node_property --model sage                                  # GraphSAGE, 2 layers of 64
//   node_property --model gat --hidden 64 --heads 8 --out-heads 1 --act elu --dropout 0.6 --input-dropout 0.6
//       --lr 0.005 --weight-decay 5e-4 --epochs 500 --runs 10 --json   # the GAT paper's Cora setup
//   node_property --model gin --layers 3 --norm batch --jk cat
//   node_property --model tag --conv-args '{"K": 2}'           # any convolution of gnn/nn/conv, stacked
//   node_property --data data/ogbn_mag --model rgcn --epochs 50  # R-GCN on a heterogeneous graph, full batch
//   node_property --data data/ogbn_mag --model hgt --epochs 50   # HGT (2 layers of 64, 2 heads), full batch
#include "app/NodeModel.h"
#include "app/NodeProgram.h"

int main(int argc, char** argv) {
  gnn::app::NodeProgramDefaults d;
  d.name = "node_property";
  d.summary =
      "node classification with PyTorch Geometric's models (GCN, GraphSAGE, GIN, GAT, GATv2, PNA, EdgeCNN) or a "
      "stack of another of its convolutions (TAGConv, TransformerConv, ...) on a dataset in OGB's node-property raw "
      "layout, or with R-GCN (--model rgcn) or HGT (--model hgt) on one in OGB's heterogeneous layout; test "
      "accuracy at the best validation epoch";
  d.basicGnn = true;
  d.model = "gcn";
  d.models = gnn::app::basicGnnNodeModelNames();
  d.models.push_back("rgcn");  // on a heterogeneous --data (app/HeteroNodeProgram.h)
  d.models.push_back("hgt");
  d.hidden = 64;
  d.dropout = 0.5;
  // Adam at lr 0.01 with L2 5e-4 on every parameter (torch.optim.Adam's weight_decay), 200 epochs: PyG's
  // examples' setting for Planetoid.
  d.training.weightDecayHelp = "L2 penalty on every parameter (torch.optim.Adam's weight_decay)";
  d.epilog =
      "The GAT paper's Cora setup (Velickovic et al. 2018): --model gat --hidden 64 --heads 8 --out-heads 1 --act "
      "elu --dropout 0.6 --input-dropout 0.6 --lr 0.005 --weight-decay 5e-4 --epochs 500 (the best validation "
      "epoch; the paper stops with a patience of 100).";
  return gnn::app::runNodeProgram(argc, argv, d);
}
