#include "app/MoleculeResults.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace gnn::app {

namespace {

// A score of the summary: 5 significant digits; a missing or non-finite one is a set without labels.
std::string summaryScore(const nlohmann::json& v) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) return std::string("n/a (no labels)");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5g", v.get<double>());
  return std::string(buf);
}

void printMoleculeSummary(std::ostream& os, const MoleculeResults& r) {
  const nlohmann::json& out = r.json;
  const nlohmann::json& sum = r.summary;
  const std::string selectedName = metricName(r.metrics.front());
  os << "best epoch " << r.bestEpoch << " of " << r.epochs << ": valid " << selectedName << " "
     << summaryScore(out.at("valid_metric"));
  if (out.contains("test_metric")) os << ", test " << selectedName << " " << summaryScore(out.at("test_metric"));
  os << "\n";
  for (size_t k = 1; k < r.metrics.size(); ++k) {  // the other --metric values, at the same epoch
    const std::string name = metricName(r.metrics[k]);
    os << "  valid " << name << " " << summaryScore(out.value("valid_" + name, nlohmann::json()));
    if (out.contains("test_" + name)) os << ", test " << name << " " << summaryScore(out.at("test_" + name));
    os << "\n";
  }
  const Metric selected = r.metrics.front();
  const std::string perKey = selected == Metric::StdMae ? "mae_per_target" : selectedName + "_per_target";
  const std::string label = selected == Metric::RocAuc ? "ROC-AUC" : selected == Metric::StdMae ? "MAE" : selectedName;
  if (r.targets > 1 && sum.contains("test_details") && sum["test_details"].is_object() &&
      sum["test_details"].contains(perKey))
    for (const auto& [name, v] : sum["test_details"][perKey].items())
      os << "  test " << label << " " << name << " " << summaryScore(v) << "\n";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.0f molecules/s in training, param_l2 %.6f\n",
                sum["train_samples_per_s"].get<double>(), out.at("param_l2").get<double>());
  os << buf;
}

}  // namespace

void writeMoleculeResults(std::ostream& os, const MoleculeResults& r, bool asJson) {
  if (asJson)
    os << r.json.dump() << std::endl;
  else
    printMoleculeSummary(os, r);
}

}  // namespace gnn::app
