#include "gnn/metrics/Calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace gnn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

void checkSizes(const char* fn, const std::vector<double>& pred, const std::vector<double>& target,
                const std::vector<double>& var) {
  if (pred.size() != target.size() || pred.size() != var.size())
    throw std::invalid_argument(std::string(fn) + ": " + std::to_string(pred.size()) + " predictions, " +
                                std::to_string(target.size()) + " targets and " + std::to_string(var.size()) +
                                " variances; they must be as many");
}

// Average ranks (1-based), ties sharing the mean of the ranks they span.
std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    const double mean = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) r[order[k]] = mean;
    i = j + 1;
  }
  return r;
}

}  // namespace

double gaussianNll(const std::vector<double>& pred, const std::vector<double>& target,
                   const std::vector<double>& var) {
  checkSizes("gaussianNll", pred, target, var);
  if (pred.empty()) return kNaN;
  double sum = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    const double r = target[i] - pred[i];
    sum += 0.5 * std::log(2 * kPi * var[i]) + r * r / (2 * var[i]);
  }
  return sum / static_cast<double>(pred.size());
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    throw std::invalid_argument("spearman: " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                                " values; they must be as many");
  if (a.size() < 2) return kNaN;
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n,
               mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa == 0 || sbb == 0) return kNaN;
  return sab / std::sqrt(saa * sbb);
}

double errorUncertaintySpearman(const std::vector<double>& pred, const std::vector<double>& target,
                                const std::vector<double>& var) {
  checkSizes("errorUncertaintySpearman", pred, target, var);
  std::vector<double> err(pred.size());
  for (size_t i = 0; i < pred.size(); ++i) err[i] = std::fabs(target[i] - pred[i]);
  return spearman(var, err);
}

// erfinv by Newton's method on std::erf from Giles' single-precision approximation ("Approximating the erfinv
// function", GPU Computing Gems Jade Edition, 2011): three steps reach double precision for p < 1 - 1e-12.
double centralIntervalHalfWidth(double p) {
  if (!(p >= 0) || p > 1)
    throw std::invalid_argument("centralIntervalHalfWidth: p " + std::to_string(p) + " is not in [0, 1]");
  if (p == 0) return 0;
  if (p == 1) return std::numeric_limits<double>::infinity();
  double w = -std::log((1 - p) * (1 + p)), x;
  if (w < 5) {
    w -= 2.5;
    double q = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      q = c + q * w;
    x = q * p;
  } else {
    w = std::sqrt(w) - 3;
    double q = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      q = c + q * w;
    x = q * p;
  }
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - p) / (2 / std::sqrt(kPi) * std::exp(-x * x));
  return std::sqrt(2.0) * x;
}

double miscalibrationArea(const std::vector<double>& pred, const std::vector<double>& target,
                          const std::vector<double>& var, int bins) {
  checkSizes("miscalibrationArea", pred, target, var);
  if (bins < 1)
    throw std::invalid_argument("miscalibrationArea: bins " + std::to_string(bins) + " must be >= 1");
  if (pred.empty()) return kNaN;
  const double n = static_cast<double>(pred.size());
  double area = 0;  // the end points k = 0 and k = bins match by definition
  for (int k = 1; k < bins; ++k) {
    const double p = static_cast<double>(k) / bins, z = centralIntervalHalfWidth(p);
    int64_t within = 0;
    for (size_t i = 0; i < pred.size(); ++i)
      within += std::sqrt(var[i]) * z >= std::fabs(target[i] - pred[i]);
    area += std::fabs(static_cast<double>(within) / n - p);
  }
  return area / bins;
}

double zScalingFactor(const std::vector<double>& pred, const std::vector<double>& target,
                      const std::vector<double>& var) {
  checkSizes("zScalingFactor", pred, target, var);
  double sum = 0;
  int64_t rows = 0;
  for (size_t i = 0; i < pred.size(); ++i)
    if (var[i] > 0) {
      const double r = target[i] - pred[i];
      sum += r * r / var[i];
      ++rows;
    }
  return rows > 0 ? sum / static_cast<double>(rows) : kNaN;
}

namespace {
// Platt's objective: the cross-entropy of sigmoid(a z + b) against targets t, summed, in the numerically
// stable form of Lin, Lin and Weng (log(1 + e^x) without overflow).
double plattLoss(const std::vector<double>& z, const std::vector<double>& t, double a, double b) {
  double f = 0;
  for (size_t i = 0; i < z.size(); ++i) {
    const double x = a * z[i] + b;  // log-odds of a positive
    f += x >= 0 ? (1 - t[i]) * x + std::log1p(std::exp(-x)) : -t[i] * x + std::log1p(std::exp(x));
  }
  return f;
}
}  // namespace

PlattParameters plattScaling(const std::vector<double>& logits, const std::vector<double>& labels) {
  if (logits.size() != labels.size())
    throw std::invalid_argument("plattScaling: " + std::to_string(logits.size()) + " logits and " +
                                std::to_string(labels.size()) + " labels; they must be as many");
  PlattParameters p;
  if (logits.empty()) return p;
  double positives = 0;
  for (double y : labels) positives += y > 0.5;
  const double negatives = static_cast<double>(labels.size()) - positives;
  std::vector<double> t(labels.size());
  for (size_t i = 0; i < labels.size(); ++i)
    t[i] = labels[i] > 0.5 ? (positives + 1) / (positives + 2) : 1 / (negatives + 2);
  double f = plattLoss(logits, t, p.a, p.b);
  for (int iter = 0; iter < 100; ++iter) {
    // Gradient and Hessian of the loss in (a, b); a tiny ridge keeps the Hessian invertible.
    double ga = 0, gb = 0, haa = 1e-12, hab = 0, hbb = 1e-12;
    for (size_t i = 0; i < logits.size(); ++i) {
      const double x = p.a * logits[i] + p.b;
      const double q = x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
      const double d = q - t[i], w = q * (1 - q);
      ga += d * logits[i];
      gb += d;
      haa += w * logits[i] * logits[i];
      hab += w * logits[i];
      hbb += w;
    }
    if (std::fabs(ga) < 1e-10 && std::fabs(gb) < 1e-10) break;
    const double det = haa * hbb - hab * hab;
    const double da = -(hbb * ga - hab * gb) / det, db = -(haa * gb - hab * ga) / det;
    double step = 1;
    for (; step >= 1e-10; step /= 2) {
      const double next = plattLoss(logits, t, p.a + step * da, p.b + step * db);
      if (next < f + 1e-4 * step * (ga * da + gb * db)) {
        p.a += step * da;
        p.b += step * db;
        f = next;
        break;
      }
    }
    if (step < 1e-10) break;  // no step lowers the loss: at the minimum up to rounding
  }
  return p;
}

double IsotonicFit::operator()(double v) const {
  if (x.empty()) return v;
  if (x.size() == 1) return y.front();
  v = std::min(std::max(v, x.front()), x.back());
  // scipy's interp1d: the first threshold not below v, kept within 1 .. n - 1, and the one before it.
  size_t hi = static_cast<size_t>(std::lower_bound(x.begin(), x.end(), v) - x.begin());
  hi = std::min(std::max<size_t>(hi, 1), x.size() - 1);
  const size_t lo = hi - 1;
  const double slope = (y[hi] - y[lo]) / (x[hi] - x[lo]);
  return slope * (v - x[lo]) + y[lo];
}

IsotonicFit isotonicRegression(const std::vector<double>& values, const std::vector<double>& labels) {
  if (values.size() != labels.size())
    throw std::invalid_argument("isotonicRegression: " + std::to_string(values.size()) + " values and " +
                                std::to_string(labels.size()) + " labels; they must be as many");
  IsotonicFit f;
  if (values.empty()) return f;
  for (double v : values)
    if (!std::isfinite(v)) throw std::invalid_argument("isotonicRegression: a value is not finite");
  // Sorted by value, then label (numpy's lexsort((y, X))).
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return values[a] != values[b] ? values[a] < values[b] : labels[a] < labels[b];
  });
  // Equal values (within float64's resolution, as sklearn's _make_unique) pooled: mean label, weight = rows.
  std::vector<double> y, w;
  double currentX = values[order[0]], sumY = 0, sumW = 0;
  for (size_t j : order) {
    if (values[j] - currentX >= 1e-15) {
      f.x.push_back(currentX);
      y.push_back(sumY / sumW);
      w.push_back(sumW);
      currentX = values[j];
      sumY = sumW = 0;
    }
    sumY += labels[j];
    sumW += 1;
  }
  f.x.push_back(currentX);
  y.push_back(sumY / sumW);
  w.push_back(sumW);
  // Pool adjacent violators (sklearn's _inplace_contiguous_isotonic_regression): blocks [i .. target[i]], each
  // holding its weighted mean in y[i] and its weight in w[i]; a decreasing run is pooled into one block, then the
  // scan steps back to the block before it, so one pass suffices.
  const size_t n = y.size();
  std::vector<size_t> target(n);
  std::iota(target.begin(), target.end(), size_t{0});
  for (size_t i = 0; i < n;) {
    size_t k = target[i] + 1;
    if (k == n) break;
    if (y[i] < y[k]) {
      i = k;
      continue;
    }
    double sumWy = w[i] * y[i], sumWeights = w[i];
    while (true) {
      const double prev = y[k];
      sumWy += w[k] * y[k];
      sumWeights += w[k];
      k = target[k] + 1;
      if (k == n || prev < y[k]) {
        y[i] = sumWy / sumWeights;
        w[i] = sumWeights;
        target[i] = k - 1;
        target[k - 1] = i;
        if (i > 0) i = target[i - 1];
        break;
      }
    }
  }
  for (size_t i = 0; i < n;) {
    const size_t k = target[i] + 1;
    for (size_t j = i + 1; j < k; ++j) y[j] = y[i];
    i = k;
  }
  for (double& v : y) v = std::min(std::max(v, 0.0), 1.0);
  // Interior points equal to both neighbours (sklearn's trim_duplicates).
  std::vector<double> keptX, keptY;
  for (size_t i = 0; i < n; ++i)
    if (i == 0 || i + 1 == n || y[i] != y[i - 1] || y[i] != y[i + 1]) {
      keptX.push_back(f.x[i]);
      keptY.push_back(y[i]);
    }
  f.x = std::move(keptX);
  f.y = std::move(keptY);
  return f;
}

double binaryNll(const std::vector<double>& prob, const std::vector<double>& labels) {
  if (prob.size() != labels.size())
    throw std::invalid_argument("binaryNll: " + std::to_string(prob.size()) + " probabilities and " +
                                std::to_string(labels.size()) + " labels; they must be as many");
  if (prob.empty()) return kNaN;
  double sum = 0;
  for (size_t i = 0; i < prob.size(); ++i)
    sum -= std::log(prob[i] * labels[i] + (1 - prob[i]) * (1 - labels[i]));
  return sum / static_cast<double>(prob.size());
}

std::vector<double> scaleVariances(const std::vector<double>& var, double s2) {
  std::vector<double> out(var.size());
  for (size_t i = 0; i < var.size(); ++i) out[i] = var[i] * s2;
  return out;
}

}  // namespace gnn
