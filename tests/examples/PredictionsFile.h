// A predictions file as the programs write it (`line,id,smiles,prediction`: the training programs' --predict,
// predict's --out), read back, and the round trip the program tests share: `predict` on the SMILES of some
// rows gives those rows back, with the same prediction bits.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "RunProgram.h"

namespace gnn::testing {

struct PredictionRow {
  std::string line, id, smiles, prediction;
};

/// The rows of a predictions file; its header must be line,id,smiles,prediction. The smiles field may be
/// quoted (it is read between the id and the last comma).
inline std::vector<PredictionRow> readPredictions(const std::string& path) {
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header, "line,id,smiles,prediction") << path;
  std::vector<PredictionRow> rows;
  while (std::getline(in, line)) {
    PredictionRow r;
    r.line = line.substr(0, line.find(','));
    r.prediction = line.substr(line.rfind(',') + 1);
    const size_t idEnd = line.find(',', r.line.size() + 1);
    r.id = line.substr(r.line.size() + 1, idEnd - r.line.size() - 1);
    r.smiles = line.substr(idEnd + 1, line.rfind(',') - idEnd - 1);
    rows.push_back(r);
  }
  return rows;
}

/// Writes the rows' SMILES to `smi`, runs `predict --checkpoint ck --input smi --out out <args>` and expects
/// the same rows back in the same order: the same SMILES and the same prediction bits.
inline void expectPredictReproduces(const std::string& ck, const std::vector<PredictionRow>& rows,
                                    const std::string& smi, const std::string& out,
                                    const std::string& args = "") {
  {
    std::ofstream f(smi);
    for (const PredictionRow& r : rows) f << r.smiles << "\n";
  }
  const ProgramResult p =
      runExample("predict", "--checkpoint " + ck + " --input " + smi + " --out " + out + " " + args);
  ASSERT_EQ(p.code, 0) << p.out;
  const std::vector<PredictionRow> again = readPredictions(out);
  ASSERT_EQ(again.size(), rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(again[k].smiles, rows[k].smiles) << "row " << k;
    EXPECT_EQ(again[k].prediction, rows[k].prediction) << "row " << k << " " << rows[k].smiles;
  }
}

}  // namespace gnn::testing
