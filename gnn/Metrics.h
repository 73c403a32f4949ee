// Metrics over masked rows, for evaluation (plain Tensors, no autograd): MAE, RMSE, accuracy, ROC-AUC. A mask is
// uint8 (1 = counts) shaped like the target, or [M] masking whole rows; undefined = everything counts. With
// fixed-size batches pass the batch's yMask (0 on padding graphs and on missing labels).
//
//   double mae = meanAbsoluteError(pred, batch.y, batch.yMask);
//   double auc = rocAuc(logits, labels, mask);     // OGB's evaluator: mean over tasks with both classes
#pragma once
#include "gnn/Tensor.h"

namespace gnn {

double meanAbsoluteError(const Tensor& pred, const Tensor& target, const Tensor& mask = Tensor());
double rootMeanSquaredError(const Tensor& pred, const Tensor& target, const Tensor& mask = Tensor());
/// logits [M, C] (C >= 2: argmax) or [M] / [M, 1] (binary: logit > 0) against labels [M] (int or float).
double accuracy(const Tensor& logits, const Tensor& labels, const Tensor& mask = Tensor());
/// Area under the ROC curve of scores [M, T] (or [M]) against 0/1 labels, ties counted half (Mann-Whitney U,
/// equal to sklearn's roc_auc_score); averaged over the T tasks that have both a positive and a negative
/// counted label, as OGB's Evaluator does. NaN when no task has both.
double rocAuc(const Tensor& scores, const Tensor& labels, const Tensor& mask = Tensor());

}  // namespace gnn
