// MoleculeProgram: the whole command-line program that trains a graph-level model on molecules with
// fixed-size batches (molecule_property, pcqm4m_graphormer, qm7_schnet are this program with other defaults):
// data and splits, featurisation cached once, the model, the Trainer loop, evaluation, --predict, the JSON.
//
//   int main(int argc, char** argv) {
//     app::MoleculeProgramDefaults d;  d.name = "molecule_property";  d.summary = "...";
//     return app::runMoleculeProgram(argc, argv, d);
//   }
#pragma once
#include <string>
#include <vector>

#include "app/TrainingFlags.h"

namespace gnn::app {

struct MoleculeProgramDefaults {
  std::string name = "molecule_property";
  std::string summary;
  std::string epilog;               // more --help text (examples), printed before the common notes
  std::string data = "pcqm4mv2_style";  // a folder of examples/data
  std::string targetCols;           // default --target-cols
  std::string model = "gin";
  std::vector<std::string> models = {"gin", "gcn"};  // what --model accepts
  std::string strategy = "plan";
  int64_t batchSize = 128;
  int64_t layers = 5, hidden = 300;     // --layers, --hidden (gin, gcn; schnet: interactions and width)
  std::string targetScaling = "standard";  // schnet programs: "atomref"
  std::string overSize = "error";          // Graphormer programs: "skip" (molecules above --max-node)
  std::string split = "auto";
  TrainingDefaults training;
};

/// Parses the command line and runs; returns the exit code (see Program::run).
int runMoleculeProgram(int argc, char** argv, const MoleculeProgramDefaults& defaults);

}  // namespace gnn::app
