// MoleculeProgram: the whole command-line program that trains a graph-level model on molecules with
// fixed-size batches (molecule_property, pcqm4m_graphormer, qm7_schnet are this program with other defaults):
// data and splits, featurisation cached once, the model, the Trainer loop, evaluation, --predict, the JSON.
//
//   int main(int argc, char** argv) {
//     app::MoleculeProgramDefaults d;  d.name = "molecule_property";  d.summary = "...";
//     return app::runMoleculeProgram(argc, argv, d);
//   }
#pragma once
#include "app/MoleculeFlags.h"

namespace gnn::app {

/// Parses the command line and runs; returns the exit code (see Program::run).
int runMoleculeProgram(int argc, char** argv, const MoleculeProgramDefaults& defaults);

}  // namespace gnn::app
