#include "gnn/metrics/Metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace gnn {
namespace {

void checkSame(const Tensor& a, const Tensor& b, const Tensor& mask, const char* what) {
  GNN_CHECK_ARG(a.numel() == b.numel(), what, ": prediction ", shapeString(a.shape()), " and target ",
                shapeString(b.shape()), " differ in size");
  if (mask.defined())
    GNN_CHECK_ARG(mask.numel() == b.numel() || mask.numel() == b.rows(), what, ": mask ", shapeString(mask.shape()),
                  " matches neither the target ", shapeString(b.shape()), " nor its rows");
}

bool elementCounts(const Tensor& mask, const Tensor& target, int64_t i) {
  if (!mask.defined()) return true;
  if (mask.numel() == target.numel()) return mask.at(i) != 0;
  return mask.at(i / target.cols()) != 0;
}

// The counted (value, target) pairs of task t (column t; a NaN target does not count), in row order.
std::vector<std::pair<double, double>> taskPairs(const Tensor& values, const Tensor& target, const Tensor& mask,
                                                 int64_t t) {
  const int64_t rows = target.rows(), tasks = target.numel() / std::max<int64_t>(rows, 1);
  std::vector<std::pair<double, double>> v;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = r * tasks + t;
    if (elementCounts(mask, target, i) && !std::isnan(target.at(i))) v.emplace_back(values.at(i), target.at(i));
  }
  return v;
}

// The mean over tasks of `perTask` (NaN: not defined for that task, left out); NaN when no task has a value.
template <class PerTask>
double meanOverTasks(const Tensor& values, const Tensor& target, const Tensor& mask, const char* what, PerTask perTask) {
  checkSame(values, target, mask, what);
  const int64_t rows = target.rows(), tasks = target.numel() / std::max<int64_t>(rows, 1);
  double sum = 0;
  int64_t used = 0;
  for (int64_t t = 0; t < tasks; ++t) {
    const double v = perTask(taskPairs(values, target, mask, t));
    if (std::isnan(v)) continue;
    sum += v;
    ++used;
  }
  return used ? sum / static_cast<double>(used) : std::numeric_limits<double>::quiet_NaN();
}

struct Confusion {
  double tp = 0, fp = 0, tn = 0, fn = 0;
};
// Logit > 0 (probability > 0.5) decides positive; a label above 0.5 is positive.
Confusion confusion(const std::vector<std::pair<double, double>>& v) {
  Confusion c;
  for (const auto& [logit, label] : v) {
    const bool predicted = logit > 0, actual = label > 0.5;
    (predicted ? (actual ? c.tp : c.fp) : (actual ? c.fn : c.tn)) += 1;
  }
  return c;
}

}  // namespace

double meanAbsoluteError(const Tensor& pred, const Tensor& target, const Tensor& mask) {
  checkSame(pred, target, mask, "meanAbsoluteError");
  double s = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < target.numel(); ++i)
    if (elementCounts(mask, target, i)) {
      s += std::abs(pred.at(i) - target.at(i));
      ++n;
    }
  return n ? s / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

double rootMeanSquaredError(const Tensor& pred, const Tensor& target, const Tensor& mask) {
  checkSame(pred, target, mask, "rootMeanSquaredError");
  double s = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < target.numel(); ++i)
    if (elementCounts(mask, target, i)) {
      double d = pred.at(i) - target.at(i);
      s += d * d;
      ++n;
    }
  return n ? std::sqrt(s / static_cast<double>(n)) : std::numeric_limits<double>::quiet_NaN();
}

double accuracy(const Tensor& logits, const Tensor& labels, const Tensor& mask) {
  int64_t m = labels.numel();
  GNN_CHECK_ARG(logits.rows() == m, "accuracy: ", logits.rows(), " rows of logits for ", m, " labels");
  if (mask.defined()) GNN_CHECK_ARG(mask.numel() == m, "accuracy: mask has ", mask.numel(), " entries for ", m, " labels");
  int64_t c = logits.numel() / std::max<int64_t>(m, 1);
  int64_t right = 0, n = 0;
  for (int64_t r = 0; r < m; ++r) {
    if (mask.defined() && mask.at(r) == 0) continue;
    int64_t predicted;
    if (c == 1) {
      predicted = logits.at(r) > 0 ? 1 : 0;
    } else {
      predicted = 0;
      for (int64_t k = 1; k < c; ++k)
        if (logits.at(r * c + k) > logits.at(r * c + predicted)) predicted = k;
    }
    right += predicted == static_cast<int64_t>(std::llround(labels.at(r)));
    ++n;
  }
  return n ? static_cast<double>(right) / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

double rocAuc(const Tensor& scores, const Tensor& labels, const Tensor& mask) {
  checkSame(scores, labels, mask, "rocAuc");
  int64_t rows = labels.rows(), tasks = labels.numel() / std::max<int64_t>(rows, 1);
  double sum = 0;
  int64_t used = 0;
  for (int64_t t = 0; t < tasks; ++t) {
    std::vector<std::pair<double, int>> v;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t i = r * tasks + t;
      if (!elementCounts(mask, labels, i) || std::isnan(labels.at(i))) continue;
      v.emplace_back(scores.at(i), labels.at(i) > 0.5 ? 1 : 0);
    }
    int64_t pos = 0;
    for (auto& p : v) pos += p.second;
    int64_t neg = static_cast<int64_t>(v.size()) - pos;
    if (pos == 0 || neg == 0) continue;
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    // Sum of the positives' ranks, tied scores sharing their average rank.
    double rankSum = 0;
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      while (j < v.size() && v[j].first == v[i].first) ++j;
      double avgRank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
      for (size_t k = i; k < j; ++k)
        if (v[k].second) rankSum += avgRank;
      i = j;
    }
    double p = static_cast<double>(pos), q = static_cast<double>(neg);
    sum += (rankSum - p * (p + 1) / 2) / (p * q);
    ++used;
  }
  return used ? sum / static_cast<double>(used) : std::numeric_limits<double>::quiet_NaN();
}

double r2Score(const Tensor& pred, const Tensor& target, const Tensor& mask) {
  return meanOverTasks(pred, target, mask, "r2Score", [](const std::vector<std::pair<double, double>>& v) {
    if (v.size() < 2) return std::numeric_limits<double>::quiet_NaN();
    double mean = 0;
    for (const auto& p : v) mean += p.second;
    mean /= static_cast<double>(v.size());
    double ssRes = 0, ssTot = 0;
    for (const auto& [y, t] : v) {
      ssRes += (t - y) * (t - y);
      ssTot += (t - mean) * (t - mean);
    }
    if (ssTot == 0) return ssRes == 0 ? 1.0 : 0.0;
    return 1 - ssRes / ssTot;
  });
}

double averagePrecision(const Tensor& scores, const Tensor& labels, const Tensor& mask) {
  return meanOverTasks(scores, labels, mask, "averagePrecision", [](std::vector<std::pair<double, double>> v) {
    int64_t positives = 0;
    for (const auto& p : v) positives += p.second > 0.5;
    if (positives == 0 || positives == static_cast<int64_t>(v.size())) return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    // One step per distinct score: every molecule at or above it is predicted positive.
    double ap = 0, recallBefore = 0;
    int64_t tp = 0;
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      for (; j < v.size() && v[j].first == v[i].first; ++j) tp += v[j].second > 0.5;
      const double precision = static_cast<double>(tp) / static_cast<double>(j);
      const double recall = static_cast<double>(tp) / static_cast<double>(positives);
      ap += (recall - recallBefore) * precision;
      recallBefore = recall;
      i = j;
    }
    return ap;
  });
}

double binaryAccuracy(const Tensor& logits, const Tensor& labels, const Tensor& mask) {
  return meanOverTasks(logits, labels, mask, "binaryAccuracy", [](const std::vector<std::pair<double, double>>& v) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    const Confusion c = confusion(v);
    return (c.tp + c.tn) / static_cast<double>(v.size());
  });
}

double f1Score(const Tensor& logits, const Tensor& labels, const Tensor& mask) {
  return meanOverTasks(logits, labels, mask, "f1Score", [](const std::vector<std::pair<double, double>>& v) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    const Confusion c = confusion(v);
    const double denominator = 2 * c.tp + c.fp + c.fn;
    return denominator > 0 ? 2 * c.tp / denominator : 0.0;
  });
}

double matthewsCorrelation(const Tensor& logits, const Tensor& labels, const Tensor& mask) {
  return meanOverTasks(logits, labels, mask, "matthewsCorrelation", [](const std::vector<std::pair<double, double>>& v) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    const Confusion c = confusion(v);
    const double denominator = (c.tp + c.fp) * (c.tp + c.fn) * (c.tn + c.fp) * (c.tn + c.fn);
    return denominator > 0 ? (c.tp * c.tn - c.fp * c.fn) / std::sqrt(denominator) : 0.0;
  });
}

}  // namespace gnn
