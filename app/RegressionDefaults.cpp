#include "app/RegressionDefaults.h"

#include <stdexcept>

#include "data/MoleculeSource.h"

namespace gnn::app {

namespace {
RegressionDefaults named(const std::string& convention) {
  RegressionDefaults r;
  r.convention = convention;
  if (convention == "chemprop") {
    r.loss = "mse";
    r.metric = "rmse";
  } else if (convention != "ogb-lsc" && convention != "mae") {
    throw std::invalid_argument("regression convention '" + convention + "': must be chemprop, ogb-lsc or mae");
  }
  return r;
}
}  // namespace

RegressionDefaults RegressionDefaults::forData(const std::string& dataPath, const std::string& format,
                                               const std::string& programConvention) {
  const std::string f = format.empty() ? guessMoleculeFormat(dataPath) : format;
  return named(f == "pcqm4mv2" ? "ogb-lsc" : programConvention);
}

RegressionDefaults RegressionDefaults::earlier() { return named("mae"); }

nlohmann::json RegressionDefaults::toJson() const {
  return {{"convention", convention}, {"loss", loss}, {"metric", metric}};
}

RegressionDefaults RegressionDefaults::fromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("convention") || !j["convention"].is_string())
    throw std::invalid_argument("regression_defaults: an object with a 'convention' string");
  RegressionDefaults r = named(j["convention"].get<std::string>());
  if (r.toJson() != j) throw std::invalid_argument("regression_defaults: loss or metric other than its convention's");
  return r;
}

}  // namespace gnn::app
