// pcqm4m_graphormer: HOMO-LUMO gap regression on PCQM4Mv2 with Graphormer (Ying et al. 2021), the model the IPU
// port of our field was built for, on fixed-size batches. Reads the PCQM4Mv2 raw layout (data.csv.gz and
// split/; default: the shipped PCQM4Mv2-style set), builds or reuses the cached dataset with Graphormer's
// encodings (shortest paths, multi-hop edge features), trains Graphormer-slim (or base, OGB's GIN baseline for
// comparison, or GPS++, the hybrid MPNN/Transformer Graphcore trained on PCQM4Mv2 on IPUs) with L1 loss, reports
// validation MAE in eV, and predicts test molecules.
//
// Training batches hold --batch-size molecules of at most --max-node atoms (30, as the IPU port of Graphormer
// used); larger molecules are skipped in training and counted (--oversize skip, where Graphormer's collator
// drops them silently); validation and test batches grow to fit every molecule, so scores cover all of them.
//
//   pcqm4m_graphormer --time-budget 30 --save gap.ckpt       # Graphormer-slim for 30 minutes of training
//   pcqm4m_graphormer --model gin --time-budget 30           # OGB's GIN baseline, same data and budget
//   pcqm4m_graphormer --model gps --device ipu --ipu bow --plan-only ...   # GPS++ planned on IPUs (docs/device.md)
//   pcqm4m_graphormer --data pcqm4m-v2 --limit 100000        # the real PCQM4Mv2 folder (raw/, split/)
//   predict --checkpoint gap.ckpt --input new.smi --out gaps.csv
#include "app/MoleculeProgram.h"

int main(int argc, char** argv) {
  gnn::app::MoleculeProgramDefaults d;
  d.name = "pcqm4m_graphormer";
  d.summary = "HOMO-LUMO gap regression on PCQM4Mv2 with Graphormer (slim | base), OGB's GIN baseline or GPS++";
  d.data = "pcqm4mv2_style";
  d.model = "slim";
  d.models = {"slim", "base", "gin", "gps"};
  // Graphormer's collator batches a fixed number of molecules: every Graphormer batch has --batch-size real
  // ones (pad); GIN and GPS++ (as Graphcore's packed batches) pack by size ("auto").
  d.strategy = "auto";
  d.batchSize = 64;
  d.overSize = "skip";
  d.regression = "ogb-lsc";  // L1 loss, MAE: PCQM4Mv2's metric
  d.epilog =
      "Examples:\n"
      "  pcqm4m_graphormer --time-budget 30 --save gap.ckpt\n"
      "  pcqm4m_graphormer --model gin --time-budget 30\n"
      "  predict --checkpoint gap.ckpt --input new.smi --out gaps.csv\n"
      "Defaults: Adam, lr 5e-4 with a linear warmup of 1,000 steps and linear decay over the run (or the time "
      "budget), gradient clipping at 5, L1 loss on standardised gaps (Graphormer's PCQM4M recipe uses lr 2e-4, "
      "60,000 warmup steps of 1M, batch 256: sized for the full 3.4M molecules).";
  d.training.epochs = 1;
  d.training.lr = 5e-4;
  d.training.schedule = "warmup-linear";
  d.training.warmup = 1000;
  d.training.clipNorm = 5.0;
  return gnn::app::runMoleculeProgram(argc, argv, d);
}
