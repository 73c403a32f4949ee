// Calibration: how well predicted Gaussian uncertainties match the errors they describe, and z-scaling, the
// one-factor fit that recalibrates them. Pure functions over one target's labelled rows: predictions, targets
// and predicted variances (target units squared), as Chemprop v2's uncertainty evaluators score them
// (chemprop/uncertainty/evaluator.py: "nll-regression", "spearman", "miscalibration_area").
//
//   double s2 = zScalingFactor(validPred, validTarget, validVar);      // fitted on validation
//   std::vector<double> calibrated = scaleVariances(testVar, s2);
//   double before = miscalibrationArea(testPred, testTarget, testVar);
//   double after = miscalibrationArea(testPred, testTarget, calibrated);
//
// and, for classification, the two recalibrations of probabilities: Platt scaling and isotonic regression.
//
//   IsotonicFit f = isotonicRegression(validProb, validLabel);
//   double calibrated = f(testProb[i]);
#pragma once
#include <vector>

namespace gnn {

/// Mean Gaussian negative log-likelihood of the targets: 1/2 log(2 pi v) + (y - mu)^2 / (2 v) averaged over
/// rows (Chemprop's NLLRegressionEvaluator). +inf when a variance is 0 and its error is not; NaN for no rows.
double gaussianNll(const std::vector<double>& pred, const std::vector<double>& target,
                   const std::vector<double>& var);

/// Spearman rank correlation of `a` and `b`: Pearson's correlation of their ranks, ties given their average
/// rank (scipy.stats.spearmanr). NaN for fewer than 2 rows or when either side is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

/// Spearman correlation between the predicted variance and the absolute error |y - mu| (Chemprop's
/// SpearmanEvaluator): near 1 when the uncertainty ranks the errors.
double errorUncertaintySpearman(const std::vector<double>& pred, const std::vector<double>& target,
                                const std::vector<double>& var);

/// Miscalibration area (Chemprop's CalibrationAreaEvaluator; Tran et al. 2020, "Methods for comparing
/// uncertainty quantifications for material property predictions", Mach. Learn.: Sci. Technol. 1 025006): for
/// each expected fraction p = k / bins, k = 0..bins, the observed fraction of rows whose |y - mu| lies within
/// the central p-interval of N(mu, v), i.e. |y - mu| <= sqrt(2 v) erfinv(p) (0 at p = 0 and 1 at p = 1 by
/// definition); the area is (1 / bins) sum_k |observed_k - p_k|. 0 is perfect, 0.5 the worst. NaN for no
/// rows.
double miscalibrationArea(const std::vector<double>& pred, const std::vector<double>& target,
                          const std::vector<double>& var, int bins = 100);

/// Z-scaling (Levi et al. 2022, "Evaluating and Calibrating Uncertainty Prediction in Regression Tasks",
/// Sensors 22, 5540; Chemprop's ZScalingCalibrator): the factor s^2 that minimises the Gaussian NLL of the
/// rows under variances s^2 v. Setting the derivative of sum 1/2 log(s^2 v) + r^2 / (2 s^2 v) to 0 gives the
/// closed form s^2 = mean(r^2 / v), over the rows with v > 0 (a row of zero variance has no finite likelihood
/// at any s). NaN when no row has v > 0.
double zScalingFactor(const std::vector<double>& pred, const std::vector<double>& target,
                      const std::vector<double>& var);

/// Platt scaling's two parameters: a calibrated probability is sigmoid(a z + b) of the logit z.
struct PlattParameters {
  double a = 1, b = 0;
};

/// Platt scaling (Platt 1999, "Probabilistic outputs for support vector machines"; sklearn's
/// _sigmoid_calibration, Chemprop's PlattCalibrator): a, b minimising the cross-entropy of sigmoid(a z + b)
/// against Platt's smoothed targets (N+ + 1) / (N+ + 2) for the positives and 1 / (N- + 2) for the negatives
/// (labels above 0.5 are positives), by Newton's method with a backtracking step (Lin, Lin and Weng 2007, "A
/// note on Platt's probabilistic outputs for support vector machines"), from a = 1, b = 0. No rows: a = 1, b
/// = 0.
PlattParameters plattScaling(const std::vector<double>& logits, const std::vector<double>& labels);

/// A fitted isotonic regression: the thresholds (x increasing, y non-decreasing in [0, 1]) between which a
/// value is interpolated linearly, as sklearn's IsotonicRegression(out_of_bounds="clip") predicts.
struct IsotonicFit {
  std::vector<double> x, y;
  /// v clipped to [x.front(), x.back()] and interpolated between the thresholds around it (scipy's interp1d,
  /// kind="linear": the pair x[k-1] < v <= x[k]); one threshold: its y; none: v itself.
  double operator()(double v) const;
};

/// Isotonic regression of `labels` on `values` (Chemprop v2's IsotonicCalibrator: sklearn's
/// IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip") fitted on the probabilities against 0/1
/// labels; Zadrozny and Elkan 2002, "Transforming classifier scores into accurate multiclass probability
/// estimates", KDD): rows sorted by value, values closer than 1e-15 pooled into one point weighted by its
/// rows (their mean label), then pool-adjacent-violators (sklearn's single-pass form) gives the
/// non-decreasing fit of least weighted squares, clipped to [0, 1]; interior points equal to both neighbours
/// are dropped (they change no interpolated value). No rows: an empty fit (the identity).
IsotonicFit isotonicRegression(const std::vector<double>& values, const std::vector<double>& labels);

/// Mean binary negative log-likelihood -log(p y + (1 - p)(1 - y)) of probabilities p against 0/1 labels
/// (Chemprop's NLLClassEvaluator). NaN for no rows.
double binaryNll(const std::vector<double>& prob, const std::vector<double>& labels);

/// v * s2, row by row.
std::vector<double> scaleVariances(const std::vector<double>& var, double s2);

/// sqrt(2) erfinv(p) for p in [0, 1): the half-width, in standard deviations, of the central interval of a
/// normal distribution that holds probability p (+inf at p = 1).
double centralIntervalHalfWidth(double p);

}  // namespace gnn
