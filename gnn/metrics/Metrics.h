// Metrics over masked rows, for evaluation (plain Tensors, no autograd): MAE, RMSE, R², accuracy, ROC-AUC, average
// precision, F1, MCC. A mask is uint8 (1 = counts) shaped like the target, or [M] masking whole rows; undefined =
// everything counts. With fixed-size batches pass the batch's yMask (0 on padding graphs and on missing labels).
// Each value is the one scikit-learn's function of the same name gives on the counted elements of one task; with
// several tasks (columns) it is computed per task and averaged over the tasks where it is defined, as OGB's
// Evaluator does.
//
//   double mae = meanAbsoluteError(pred, batch.y, batch.yMask);
//   double auc = rocAuc(logits, labels, mask);     // OGB's evaluator: mean over tasks with both classes
#pragma once
#include "gnn/tensor/Tensor.h"

namespace gnn {

double meanAbsoluteError(const Tensor& pred, const Tensor& target, const Tensor& mask = Tensor());
double rootMeanSquaredError(const Tensor& pred, const Tensor& target, const Tensor& mask = Tensor());
/// logits [M, C] (C >= 2: argmax) or [M] / [M, 1] (binary: logit > 0) against labels [M] (int or float).
double accuracy(const Tensor& logits, const Tensor& labels, const Tensor& mask = Tensor());
/// Area under the ROC curve of scores [M, T] (or [M]) against 0/1 labels, ties counted half (Mann-Whitney U,
/// equal to sklearn's roc_auc_score); averaged over the T tasks that have both a positive and a negative
/// counted label, as OGB's Evaluator does. NaN when no task has both.
double rocAuc(const Tensor& scores, const Tensor& labels, const Tensor& mask = Tensor());

/// Coefficient of determination of pred [M, T] against target [M, T] per task, 1 - SS_res / SS_tot
/// (sklearn.metrics.r2_score; a task whose targets are all equal scores 1 when predicted exactly, else 0, as
/// sklearn's force_finite), averaged over the tasks with at least two counted rows; NaN when none has.
double r2Score(const Tensor& pred, const Tensor& target, const Tensor& mask = Tensor());
/// Average precision of scores [M, T] against 0/1 labels per task: sum over the distinct score thresholds, from
/// the highest, of (R_n - R_{n-1}) P_n, with no interpolation (sklearn.metrics.average_precision_score, and OGB's
/// Evaluator for ogbg-molpcba: the precision-recall curve as steps, not the trapezoids of auc(recall,
/// precision)); averaged over the tasks with both classes, as rocAuc. NaN when no task has both.
double averagePrecision(const Tensor& scores, const Tensor& labels, const Tensor& mask = Tensor());
/// Binary decisions from logits [M, T] against 0/1 labels: a logit above 0 (a probability above 0.5) is a
/// positive. Per task, averaged over the tasks with a counted label; NaN when none has.
/// The fraction decided right (sklearn.metrics.accuracy_score).
double binaryAccuracy(const Tensor& logits, const Tensor& labels, const Tensor& mask = Tensor());
/// 2 TP / (2 TP + FP + FN); 0 when there is no positive, labelled or predicted (sklearn.metrics.f1_score).
double f1Score(const Tensor& logits, const Tensor& labels, const Tensor& mask = Tensor());
/// Matthews correlation (TP TN - FP FN) / sqrt((TP + FP)(TP + FN)(TN + FP)(TN + FN)); 0 when a factor of the
/// denominator is 0 (sklearn.metrics.matthews_corrcoef).
double matthewsCorrelation(const Tensor& logits, const Tensor& labels, const Tensor& mask = Tensor());

}  // namespace gnn
