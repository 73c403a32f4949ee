#include "app/MoleculeProgram.h"

#include <iostream>
#include <optional>
#include <utility>

#include "app/EpochOrderFlags.h"
#include "app/MoleculeRun.h"

namespace gnn::app {

namespace detail {

int MoleculeRun::run() {
  startOrContinue();
  loadData();
  deriveRunConfig();
  TrainData data = makeTrainLoader();
  // The pages faulted in while the data was read go to the heap before the model and the steps allocate.
  if (heapWarmUp_) {
    heapWarmUp_->release();
    data.results["heap_warm_up_mb"] = static_cast<double>(heapWarmUp_->touchedBytes()) / (1 << 20);
  }
  if (s_.paddingReportOnly) return reportPadding(data);
  buildModel();
  const Training training = trainMembers();
  std::optional<EnsembleScores> ensemble;
  if (scoresAnEnsemble()) ensemble = evaluateEnsemble();
  InferenceTime inference = training.inference;
  const OwnScores own = evaluateOnly(inference);
  writePredictions(ensemble);
  const MoleculeResults results = collectResults(std::move(data.results), ensemble, own, inference);
  writeMoleculeResults(std::cout, results, tf_.json);
  writeReport(results.json, training, ensemble, own.valid.has_value());
  return 0;
}

}  // namespace detail

int runMoleculeProgram(int argc, char** argv, const MoleculeProgramDefaults& d) {
  Program prog(d.name, d.summary);
  MoleculeSettings s;
  addMoleculeFlags(prog, s, d);
  EpochOrderFlags order;
  order.addTo(prog.group("Batches"));
  return prog.run(argc, argv, [&] {
    s.training.apply(prog);
    s.transfer.check(prog, s.training);
    s.training.programTraining["class_balance"] = s.classBalance;  // decides the weights as --lr does
    s.device.apply(prog);
    return detail::MoleculeRun(prog, s, d, order).run();
  });
}

}  // namespace gnn::app
