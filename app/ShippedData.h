// ShippedData: finds the datasets shipped in examples/data, so defaults can be shown as the relative path a
// user sees in the source tree (`examples/data/cora`) and still be found from the build folder.
//
//   std::string dir = app::shippedData("cora");   // "examples/data/cora" from the source root, else the
//                                                   // source tree's copy by absolute path
#pragma once
#include <string>

namespace gnn::app {

/// `examples/data/<name>` as a user would type it; shown in --help.
std::string shippedDataLabel(const std::string& name);
/// The first that exists: `examples/data/<name>` and `../examples/data/<name>` from the working directory,
/// then the source tree this program was built from. Returns the label when none exists (the caller's open
/// then names the path in its error).
std::string shippedData(const std::string& name);

}  // namespace gnn::app
