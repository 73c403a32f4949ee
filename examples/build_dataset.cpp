// build_dataset: molecules (PCQM4Mv2 raw layout, MoleculeNet CSV, .smi, SDF, XYZ; .gz or not) -> an .npz
// dataset with OGB's smiles2graph features, optional 3D coordinates and Graphormer encodings.
// `build_dataset inspect FILE.npz` summarises a built dataset. docs/datasets.md documents both.
// SIGINT / SIGTERM stop a build cleanly: every temp file is removed, no output is left, exit 130 / 143.
//
//   build_dataset --input HIV.csv.gz --target-cols HIV_active --out hiv.npz --threads 2
//   build_dataset inspect hiv.npz
#include "app/BuildDatasetProgram.h"

int main(int argc, char** argv) { return gnn::app::runBuildDatasetProgram(argc, argv); }
