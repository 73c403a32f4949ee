// molecule_property: graph-level property prediction on molecules with fixed-size batches. Trains GIN or GCN
// (OGB atom/bond encoders, global pooling, linear head) or Chemprop's D-MPNN (--model dmpnn) with a masked loss,
// on the PCQM4Mv2-style set by default (HOMO-LUMO gap regression, MAE) or a MoleculeNet CSV (classification with
// ROC-AUC when every label is 0/1). Validation every epoch, the test metric at the best validation epoch (OGB's protocol), per-target
// metrics, targets standardised for regression, predictions for the test molecules.
//
//   molecule_property                                        # GIN 5x300, PlannedPack, 1 epoch, batch 128
//   molecule_property --data examples/data/moleculenet/BBBP.csv.gz --target-cols p_np --split scaffold
//                     --epochs 20 --predict bbbp_test.csv --save bbbp.ckpt      (one command line)
//   predict --checkpoint bbbp.ckpt --input new.smi --out new.csv     # the same model on new molecules
//   molecule_property --model dmpnn --data examples/data/moleculenet/ESOL.csv.gz --split random --epochs 50
//   molecule_property --padding-report-only --strategy stream
//   molecule_property --epochs 2 --save run.ckpt && molecule_property --epochs 4 --load run.ckpt
#include "app/MoleculeProgram.h"

int main(int argc, char** argv) {
  gnn::app::MoleculeProgramDefaults d;
  d.name = "molecule_property";
  d.summary = "graph-level property prediction (GIN/GCN/D-MPNN) on molecules with fixed-size batches";
  d.models = {"gin", "gcn", "gine", "transformer", "gen", "nnconv", "pna", "dmpnn"};
  d.training.epochs = 1;
  d.training.lr = 1e-3;
  return gnn::app::runMoleculeProgram(argc, argv, d);
}
