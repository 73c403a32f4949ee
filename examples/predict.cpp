// predict: applies a checkpoint of molecule_property, pcqm4m_graphormer or qm7_schnet to new molecules. The molecules are featurised exactly as
// the checkpoint records (OGB's features with the same options), the model is rebuilt from the checkpoint's
// configuration (Graphormer's encodings and SchNet's radius graph computed as at training time; SchNet needs
// coordinates: SDF or XYZ input, or SMILES with the seeded conformers the checkpoint's featurisation names),
// and the predictions are written as CSV (line,id,smiles,prediction[_<target>]), in target units. Batches
// grow to fit every molecule (Graphormer: up to kMaxGraphormerAtoms atoms); molecules RDKit rejects or too
// large are listed on stderr with their line and reason; the rest are predicted. An ensemble checkpoint
// (molecule_property --ensemble-size) predicts with every member: the mean, then the members' variance (scaled by
// the calibration fitted on the run's validation set) as uncertainty column(s), as the run's --predict wrote; a
// --task regression-mve model writes its mean and its (z-scaled) variance, and a single calibrated model (kept as
// an ensemble of one) its calibrated prediction. A run with --uncertainty mc-dropout predicts as its
// --predict did: the mean and the calibrated variance of its MC dropout samples (app/McDropout.h), the same bits
// in any batching. --embeddings FILE.npz also
// writes each predicted molecule's learned representation (the vector the model's head reads; see
// app/MoleculeEmbeddings.h) with the CSV's line, id and SMILES, in the CSV's order.
//
//   predict --checkpoint bbbp.ckpt --input new.smi --out new.csv
//   predict --checkpoint gap.ckpt --input candidates.csv.gz --smiles-col SMILES --out gap.csv --weights last
//   predict --checkpoint bbbp.ckpt --input new.smi --out new.csv --embeddings new.npz
#include "app/PredictProgram.h"

int main(int argc, char** argv) { return gnn::app::runPredictProgram(argc, argv); }
