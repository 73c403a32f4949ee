// Helpers shared by the molecular-data tests: temp paths, the shipped data folders, running the Python
// reference featuriser (tests/reference/ogb_smiles2graph.py) when Debian's python3-rdkit is present.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "data/ProcessTempRoot.h"

namespace gnn::testing {

inline std::string sharedData(const std::string& rel) { return "/work/shared/data/" + rel; }
inline std::string shippedData(const std::string& rel) { return std::string(GNN_SOURCE_DIR) + "/examples/data/" + rel; }
/// The shipped copy when present, else the shared folder.
inline std::string moleculeData(const std::string& rel) {
  const std::string shipped = shippedData(rel);
  return std::filesystem::exists(shipped) ? shipped : sharedData(rel);
}

/// A fresh folder `name` inside this process's temporary folder (removed when the process exits).
inline std::filesystem::path tempDir(const std::string& name) {
  static const ProcessTempRoot root("gnn_mol_test_");
  auto p = root.path() / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

inline bool pythonRdkitAvailable() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import rdkit' > /dev/null 2>&1") == 0;
  return ok;
}

/// Runs the reference script on a file of SMILES (one per line); returns its JSON lines.
inline std::string runReference(const std::string& smilesFile, const std::string& extra = "") {
  const std::string out = smilesFile + ".ref.jsonl";
  const std::string cmd = "/usr/bin/python3 " + std::string(GNN_SOURCE_DIR) + "/tests/reference/ogb_smiles2graph.py " +
                          smilesFile + " " + extra + " > " + out;
  if (std::system(cmd.c_str()) != 0) return "";
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gnn::testing
