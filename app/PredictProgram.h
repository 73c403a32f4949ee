// PredictProgram: the `predict` program, which applies a checkpoint of molecule_property, pcqm4m_graphormer or
// qm7_schnet to new molecules and writes the predictions as CSV (examples/predict.cpp documents its use).
//
//   int main(int argc, char** argv) { return gnn::app::runPredictProgram(argc, argv); }
#pragma once

namespace gnn::app {

/// Parses the command line and runs; returns the exit code (see Program::run): 1 also when no molecule was
/// predicted.
int runPredictProgram(int argc, char** argv);

}  // namespace gnn::app
