#include "app/ShippedData.h"

#include <filesystem>

namespace gnn::app {

std::string shippedDataLabel(const std::string& name) { return "examples/data/" + name; }

std::string shippedData(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const fs::path& p : {fs::path("examples/data") / name, fs::path("../examples/data") / name,
                            fs::path("../../examples/data") / name, fs::path(GNN_EXAMPLES_DATA) / name})
    if (fs::exists(p, ec)) return p.string();
  return shippedDataLabel(name);
}

}  // namespace gnn::app
