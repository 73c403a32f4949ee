#include "gnn/Metrics.h"

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

}  // namespace gnn
