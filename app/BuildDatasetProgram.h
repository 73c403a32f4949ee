// BuildDatasetProgram: the `build_dataset` program, which turns molecules (PCQM4Mv2 raw layout, MoleculeNet CSV,
// .smi, SDF, XYZ) into an .npz dataset, and whose `inspect` command summarises one (examples/build_dataset.cpp
// documents its use; docs/datasets.md both commands).
//
//   int main(int argc, char** argv) { return gnn::app::runBuildDatasetProgram(argc, argv); }
#pragma once

namespace gnn::app {

/// Runs `build_dataset [inspect] ...`; returns the exit code: 0 success, 1 an error (or --strict with rejected
/// molecules), 2 a bad command line, 130 / 143 stopped by SIGINT / SIGTERM (no output left behind).
int runBuildDatasetProgram(int argc, char** argv);

}  // namespace gnn::app
