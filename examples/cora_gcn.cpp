// cora_gcn: semi-supervised node classification with a two-layer GCN (Kipf & Welling, ICLR 2017) on a
// dataset in OGB's node-property raw layout (default: the shipped Cora with the Planetoid public split).
//
//   cora_gcn                                  # Cora, paper settings, one run
//   cora_gcn --runs 10 --json                 # mean/std over seeds 0..9, one JSON object on stdout
//   cora_gcn --data examples/data/citeseer
//   cora_gcn --epochs 100 --save run.ckpt && cora_gcn --epochs 200 --load run.ckpt   # continue to 200
//   cora_gcn --loader cluster --clusters 16 --clusters-per-batch 4   # Cluster-GCN, fixed-size batches
//   cora_gcn --data ogbn-arxiv --normalize-features standard            # real-valued features
#include "app/NodeProgram.h"

int main(int argc, char** argv) {
  gnn::app::NodeProgramDefaults d;
  d.name = "cora_gcn";
  d.summary =
      "two-layer GCN (Kipf & Welling 2017) for node classification on a dataset in OGB's node-property raw layout; "
      "test accuracy at the best validation epoch";
  return gnn::app::runNodeProgram(argc, argv, d);
}
