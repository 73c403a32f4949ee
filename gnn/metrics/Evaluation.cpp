#include "gnn/metrics/Evaluation.h"

#include <stdexcept>

#include "gnn/metrics/Metrics.h"

namespace gnn {

namespace {

struct MetricRow {
  Metric metric;
  const char* spelling;  // as --metric takes it
  const char* name;      // in results
  bool higherIsBetter;
  bool classification;
};

const MetricRow kMetrics[] = {
    {Metric::Mae, "mae", "mae", false, false},
    {Metric::Rmse, "rmse", "rmse", false, false},
    {Metric::R2, "r2", "r2", true, false},
    {Metric::StdMae, "std_mae", "std_mae", false, false},
    {Metric::RocAuc, "roc", "rocauc", true, true},
    {Metric::Prc, "prc", "prc", true, true},
    {Metric::Accuracy, "accuracy", "accuracy", true, true},
    {Metric::F1, "f1", "f1", true, true},
    {Metric::Mcc, "mcc", "mcc", true, true},
};

const MetricRow& rowOf(Metric m) {
  for (const MetricRow& r : kMetrics)
    if (r.metric == m) return r;
  throw std::logic_error("unknown metric");
}

// One task's value of a metric (std_mae: the MAE; the division by the target's std is done over targets).
double perTarget(Metric m, const Tensor& s, const Tensor& y, const Tensor& mask) {
  switch (m) {
    case Metric::Mae:
    case Metric::StdMae:
      return meanAbsoluteError(s, y, mask);
    case Metric::Rmse:
      return rootMeanSquaredError(s, y, mask);
    case Metric::R2:
      return r2Score(s, y, mask);
    case Metric::RocAuc:
      return rocAuc(s, y, mask);
    case Metric::Prc:
      return averagePrecision(s, y, mask);
    case Metric::Accuracy:
      return binaryAccuracy(s, y, mask);
    case Metric::F1:
      return f1Score(s, y, mask);
    case Metric::Mcc:
      return matthewsCorrelation(s, y, mask);
  }
  return NAN;
}

// Column t of an [n, T] tensor as [n, 1].
Tensor column(const Tensor& a, int64_t t, DType dtype) {
  const int64_t n = a.dim(0);
  Tensor c = Tensor::zeros({n, 1}, dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == DType::U8)
      c.matrix<uint8_t>()(i, 0) = a.matrix<uint8_t>()(i, t);
    else
      c.matrix<float>()(i, 0) = a.matrix<float>()(i, t);
  }
  return c;
}

}  // namespace

std::string metricName(Metric m) {
  return rowOf(m).name;
}
bool higherIsBetter(Metric m) {
  return rowOf(m).higherIsBetter;
}
bool isClassificationMetric(Metric m) {
  return rowOf(m).classification;
}

std::string knownMetricNames() {
  std::string s;
  for (const MetricRow& r : kMetrics) s += (s.empty() ? "" : ", ") + std::string(r.spelling);
  return s;
}

std::vector<Metric> parseMetrics(const std::string& list) {
  std::vector<Metric> out;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(',', begin), list.size());
    const std::string name = list.substr(begin, end - begin);
    const MetricRow* found = nullptr;
    for (const MetricRow& r : kMetrics)
      if (name == r.spelling || name == r.name || (r.metric == Metric::Prc && name == "ap")) found = &r;
    if (name.empty())
      throw std::invalid_argument("'" + list + "' has an empty metric name (known: " + knownMetricNames() +
                                  ")");
    if (!found)
      throw std::invalid_argument("unknown metric '" + name + "' (known: " + knownMetricNames() + ")");
    for (Metric m : out)
      if (m == found->metric)
        throw std::invalid_argument("metric '" + name + "' is named twice in '" + list + "'");
    out.push_back(found->metric);
    begin = end + 1;
  }
  return out;
}

Metric defaultMetric(bool classification, int64_t targets) {
  if (classification) return Metric::RocAuc;
  return targets > 1 ? Metric::StdMae : Metric::Mae;
}

Evaluation scoreTargets(const Tensor& scores, const Tensor& targets, const Tensor& mask,
                        const std::vector<Metric>& metrics, const std::vector<std::string>& targetNames,
                        const std::vector<double>& targetStd) {
  Evaluation e;
  const int64_t tasks = scores.defined() ? scores.dim(1) : 0;
  const int64_t n = scores.defined() ? scores.dim(0) : 0;
  if (n == 0 || metrics.empty()) return e;
  std::vector<Tensor> s, y, m;
  for (int64_t t = 0; t < tasks; ++t) {
    s.push_back(column(scores, t, DType::F32));
    y.push_back(column(targets, t, DType::F32));
    m.push_back(column(mask, t, DType::U8));
  }
  for (Metric metric : metrics) {
    nlohmann::json per = nlohmann::json::object();
    // Over targets: the mean of the per-target values where defined (std_mae: of MAE / std).
    double sum = 0;
    int64_t counted = 0;
    for (int64_t t = 0; t < tasks; ++t) {
      const std::string name = t < static_cast<int64_t>(targetNames.size())
                                   ? targetNames[static_cast<size_t>(t)]
                                   : "target" + std::to_string(t);
      const double v =
          perTarget(metric, s[static_cast<size_t>(t)], y[static_cast<size_t>(t)], m[static_cast<size_t>(t)]);
      per[name] = v;
      if (std::isnan(v)) continue;
      const double stdev =
          metric == Metric::StdMae && !targetStd.empty() ? targetStd[static_cast<size_t>(t)] : 1.0;
      sum += v / stdev;
      ++counted;
    }
    const double overall = counted ? sum / static_cast<double>(counted) : NAN;
    e.details[metricName(metric)] = overall;
    e.details[metric == Metric::StdMae ? "mae_per_target" : metricName(metric) + "_per_target"] = per;
    if (metric == metrics.front()) e.metric = overall;
  }
  return e;
}

Evaluation scoreTargets(const Tensor& scores, const Tensor& targets, const Tensor& mask, bool classification,
                        const std::vector<std::string>& targetNames, const std::vector<double>& targetStd) {
  const int64_t tasks = scores.defined() ? scores.dim(1) : 0;
  return scoreTargets(scores, targets, mask, {defaultMetric(classification, tasks)}, targetNames, targetStd);
}

}  // namespace gnn
