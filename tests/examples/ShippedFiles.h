// The example data the end-to-end tests run on (examples/data: shipped with the repository), and the predictions
// CSV the programs write, read back as text.
#pragma once
#include <fstream>
#include <map>
#include <string>

namespace gnn::testing {

inline const std::string kEsolCsv =
    std::string(GNN_SOURCE_DIR) + "/examples/data/moleculenet/delaney-processed.csv.gz";
inline const std::string kBbbpCsv = std::string(GNN_SOURCE_DIR) + "/examples/data/moleculenet/BBBP.csv.gz";

/// A predictions CSV as text: its header and, per source line (the first field), its row as written.
struct PredictionCsv {
  std::string header;
  std::map<std::string, std::string> rows;
};
inline PredictionCsv readPredictionCsv(const std::string& path) {
  std::ifstream in(path);
  PredictionCsv c;
  std::getline(in, c.header);
  for (std::string line; std::getline(in, line);) c.rows[line.substr(0, line.find(','))] = line;
  return c;
}

}  // namespace gnn::testing
