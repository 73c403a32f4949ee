#include "app/HtmlReport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "app/Ensemble.h"
#include "app/HtmlEscape.h"
#include "app/SvgPlot.h"
#include "gnn/metrics/Calibration.h"
#include "gnn/metrics/Evaluation.h"
#include "gnn/metrics/Metrics.h"

namespace gnn::app {

namespace {

using nlohmann::json;

std::string num(double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// A JSON value as a table cell: strings as they are (escaped), numbers with 4 significant digits, null "n/a".
std::string cell(const json& v) {
  if (v.is_string()) return htmlEscape(v.get<std::string>());
  if (v.is_number_integer() || v.is_boolean()) return v.dump();
  if (v.is_number()) return num(v.get<double>());
  if (v.is_null()) return "n/a";
  return htmlEscape(v.dump());
}

std::string targetName(const std::vector<std::string>& names, int64_t t) {
  return t < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(t)]
                                                : "target" + std::to_string(t);
}

// One target's labelled rows of a prediction: their row index, and the values per row.
struct TargetRows {
  std::vector<int64_t> row;
  std::vector<double> pred, score, target, var;
};

TargetRows labelled(const MoleculePredictions& p, int64_t t) {
  TargetRows r;
  const int64_t n = p.pred.defined() ? p.pred.dim(0) : 0, tasks = n > 0 ? p.pred.dim(1) : 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = i * tasks + t;
    if (p.mask.defined() && p.mask.at(k) == 0) continue;
    r.row.push_back(i);
    r.pred.push_back(p.pred.at(k));
    r.score.push_back(p.score.at(k));
    r.target.push_back(p.target.at(k));
    r.var.push_back(p.uncertainty.defined() ? p.uncertainty.at(k) : NAN);
  }
  return r;
}

// The page under construction: its body and the plots drawn so far.
struct Page {
  std::ostringstream body;
  int64_t plots = 0;
  void plot(const SvgPlot& p) {
    body << p.svg();
    ++plots;
  }
};

// Indices 0..n-1, or `most` of them evenly spread when there are more (a plot of every molecule of a large
// set would make the page too heavy to open).
std::vector<size_t> thinned(size_t n, int64_t most) {
  std::vector<size_t> idx;
  const size_t m = most > 0 ? std::min(n, static_cast<size_t>(most)) : n;
  for (size_t k = 0; k < m; ++k) idx.push_back(m == n ? k : k * n / m);
  return idx;
}

void configurationSection(const HtmlReportInput& in, Page& page) {
  const json& r = in.results;
  auto row = [&](const std::string& name, const std::string& value) {
    page.body << "<tr><th>" << htmlEscape(name) << "</th><td>" << value << "</td></tr>\n";
  };
  page.body << "<section id=\"configuration\"><h2>Run</h2><div class=\"cols\"><table class=\"kv\">\n";
  row("program", htmlEscape(in.program));
  for (const char* k : {"data", "task", "model", "layers", "hidden", "parameters"})
    if (r.contains(k)) row(k, cell(r[k]));
  if (r.contains("targets")) {
    std::string t;
    for (const auto& name : r["targets"]) t += (t.empty() ? "" : ", ") + cell(name);
    row("targets", t);
  }
  if (r.contains("split") && r["split"].is_object()) {
    const json& s = r["split"];
    row("split", cell(s.value("kind", json("?"))) + ": " + cell(s.value("train", json())) + " train / " +
                     cell(s.value("valid", json())) + " valid / " + cell(s.value("test", json())) + " test" +
                     (s.contains("seed") ? " (seed " + cell(s["seed"]) + ")" : ""));
  }
  for (const char* k :
       {"rejected", "epochs", "best_epoch", "selection_metric", "evaluation_only", "ensemble_size"})
    if (r.contains(k)) row(k, cell(r[k]));
  page.body << "</table>\n<table class=\"kv\"><caption>Machine</caption>\n";
  for (const char* k : {"threads", "precision", "gemm_isa", "bf16_native", "peak_rss_mb", "seconds"})
    if (r.contains(k)) row(k, cell(r[k]));
  row("hardware threads", std::to_string(std::thread::hardware_concurrency()));
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      row("cpu", htmlEscape(line.substr(line.find(':') + 2)));
      break;
    }
  page.body << "</table></div>\n<details><summary>Every flag of the run</summary><div class=\"cols\"><table "
               "class=\"kv\">\n";
  for (const auto& [key, value] : in.configuration.items()) {
    if (key == "derived") continue;
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    row("--" + flag, cell(value));
  }
  page.body << "</table><table class=\"kv\">\n";
  for (const auto& [key, value] : in.training.items()) {
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    row("--" + flag, cell(value));
  }
  page.body << "</table></div></details></section>\n";
}

void curvesSection(const HtmlReportInput& in, Page& page) {
  page.body << "<section id=\"curves\"><h2>Learning curves</h2>\n";
  bool any = false, anyTest = false;
  for (const LearningCurve& c : in.curves) {
    any = any || !c.epochs.empty();
    for (const EpochRecord& e : c.epochs) anyTest = anyTest || std::isfinite(e.test);
  }
  if (!any) {
    page.body << "<p>No epoch was trained in this run (evaluation only): no learning curves.</p></section>\n";
    return;
  }
  const std::vector<EpochRecord>& first = in.curves.front().epochs;
  if (in.epochsBeforeRun > 0 && in.epochsBeforeRun <= static_cast<int64_t>(first.size())) {
    const int64_t last = first[static_cast<size_t>(in.epochsBeforeRun) - 1].epoch;
    const std::string n = std::to_string(first.front().epoch) + "-" + std::to_string(last);
    if (in.evaluationOnly)
      page.body << "<p>No epoch was trained in this run (evaluation only): the curves are those of the run that "
                   "wrote its checkpoint (epochs " << n << ").</p>\n";
    else
      page.body << "<p>Epochs " << n << " were trained before this run continued from a checkpoint; the rest in "
                   "this run.</p>\n";
  }
  SvgPlot loss("Training loss", "epoch", "mean training loss per epoch");
  SvgPlot metric("Validation " + in.metricName + (anyTest ? " and test" : ""), "epoch", in.metricName);
  loss.setLegendCorner(SvgPlot::Corner::TopRight);
  metric.setLegendCorner(SvgPlot::Corner::TopRight);
  loss.setIntegerX();
  metric.setIntegerX();
  int color = 0;
  for (const LearningCurve& c : in.curves) {
    std::vector<double> x, l, v, t;
    for (const EpochRecord& e : c.epochs) {
      x.push_back(static_cast<double>(e.epoch));
      l.push_back(e.loss);
      v.push_back(e.valid);
      t.push_back(e.test);
    }
    const std::string suffix = in.curves.size() > 1 ? " (" + c.name + ")" : "";
    loss.addLine("train" + suffix, x, l, false, color);
    metric.addLine("valid" + suffix, x, v, false, color);
    if (anyTest) metric.addLine("test" + suffix, x, t, /*dashed=*/true, color);
    ++color;
  }
  page.body << "<div class=\"plots\">";
  page.plot(loss);
  page.plot(metric);
  page.body << "</div></section>\n";
}

// Per-target metrics of the predicted set (gnn/metrics/Evaluation.h), then the mean over targets.
void metricsTable(const HtmlReportInput& in, const MoleculePredictions& p, Page& page) {
  const bool cls = in.task == MoleculeTask::Classification;
  const std::vector<Metric> ms =
      cls ? std::vector<Metric>{Metric::RocAuc, Metric::Prc, Metric::Accuracy, Metric::F1, Metric::Mcc}
          : std::vector<Metric>{Metric::Mae, Metric::Rmse, Metric::R2};
  const Evaluation e = scoreTargets(p.score, p.target, p.mask, ms, in.targetNames);
  page.body << "<table class=\"metrics\"><caption>" << htmlEscape(in.predictedSet) << " set, "
            << p.positions.size() << " molecules</caption>\n<tr><th>target</th><th>labelled</th>";
  for (Metric m : ms) page.body << "<th>" << metricName(m) << "</th>";
  page.body << "</tr>\n";
  const int64_t tasks = p.pred.dim(1);
  for (int64_t t = 0; t < tasks; ++t) {
    const std::string name = targetName(in.targetNames, t);
    page.body << "<tr><td>" << htmlEscape(name) << "</td><td>" << labelled(p, t).row.size() << "</td>";
    for (Metric m : ms) {
      const std::string key = metricName(m) + "_per_target";
      const bool has = e.details.contains(key) && e.details[key].contains(name);
      page.body << "<td>" << (has ? cell(e.details[key][name]) : "n/a") << "</td>";
    }
    page.body << "</tr>\n";
  }
  if (tasks > 1) {
    page.body << "<tr class=\"mean\"><td>mean</td><td></td>";
    for (Metric m : ms)
      page.body << "<td>" << (e.details.contains(metricName(m)) ? cell(e.details[metricName(m)]) : "n/a")
                << "</td>";
    page.body << "</tr>\n";
  }
  page.body << "</table>\n";
}

// The R2 of the labelled molecules' points (gnn/metrics' r2Score, the JSON's), so that a parity plot says how close
// to y = x they lie. The values were float32 predictions and targets: the float copies are exact.
double rSquared(const TargetRows& r) {
  const int64_t n = static_cast<int64_t>(r.target.size());
  const std::vector<float> pred(r.pred.begin(), r.pred.end()), target(r.target.begin(), r.target.end());
  return r2Score(Tensor::fromVector<float>(pred, {n, 1}), Tensor::fromVector<float>(target, {n, 1}));
}

void parityPlots(const HtmlReportInput& in, const MoleculePredictions& p, Page& page) {
  const int64_t tasks = p.pred.dim(1);
  page.body << "<div class=\"plots\">";
  for (int64_t t = 0; t < std::min(tasks, in.maxPlottedTargets); ++t) {
    const TargetRows r = labelled(p, t);
    const std::string name = targetName(in.targetNames, t);
    if (r.row.empty()) {
      page.body << "<p>" << htmlEscape(name) << ": no labelled molecule in the "
                << htmlEscape(in.predictedSet) << " set.</p>";
      continue;
    }
    std::vector<double> x, y;
    for (size_t k : thinned(r.row.size(), in.maxPointsPerPlot)) {
      x.push_back(r.target[k]);
      y.push_back(r.pred[k]);
    }
    SvgPlot plot("Parity: " + name + " (" + in.predictedSet + "), R2 = " + num(rSquared(r)), "true " + name,
                 "predicted " + name);
    plot.addPoints(x.size() == r.row.size() ? "molecules"
                                            : "molecules (" + std::to_string(x.size()) + " of " +
                                                  std::to_string(r.row.size()) + ")",
                   x, y);
    plot.setEqualAxes();
    plot.addDiagonal("y = x");
    page.plot(plot);
  }
  page.body << "</div>\n";
}

// ROC (false vs true positive rate) and precision-recall points of one target, thresholds from the highest
// score down, tied scores taken together; the precision-recall curve drawn as the steps average precision
// sums.
void classificationCurves(const TargetRows& r, std::vector<double>& fpr, std::vector<double>& tpr,
                          std::vector<double>& recall, std::vector<double>& precision) {
  std::vector<size_t> order(r.row.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.score[a] > r.score[b]; });
  double positives = 0;
  for (double y : r.target) positives += y > 0.5;
  const double negatives = static_cast<double>(r.target.size()) - positives;
  double tp = 0, fp = 0, lastRecall = 0;
  fpr = {0};
  tpr = {0};
  recall = {0};
  precision = {1};
  for (size_t k = 0; k < order.size();) {
    const double s = r.score[order[k]];
    for (; k < order.size() && r.score[order[k]] == s; ++k) (r.target[order[k]] > 0.5 ? tp : fp) += 1;
    fpr.push_back(fp / negatives);
    tpr.push_back(tp / positives);
    const double rec = tp / positives, prec = tp / (tp + fp);
    if (rec > lastRecall) {  // a step: the precision at this threshold over the recall it adds
      recall.push_back(lastRecall);
      precision.push_back(prec);
      recall.push_back(rec);
      precision.push_back(prec);
      lastRecall = rec;
    }
  }
}

void classificationPlots(const HtmlReportInput& in, const MoleculePredictions& p, Page& page) {
  const Evaluation e = scoreTargets(p.score, p.target, p.mask, {Metric::RocAuc, Metric::Prc}, in.targetNames);
  const int64_t tasks = p.pred.dim(1);
  page.body << "<div class=\"plots\">";
  for (int64_t t = 0; t < std::min(tasks, in.maxPlottedTargets); ++t) {
    const TargetRows r = labelled(p, t);
    const std::string name = targetName(in.targetNames, t);
    double positives = 0;
    for (double y : r.target) positives += y > 0.5;
    if (positives == 0 || positives == static_cast<double>(r.row.size())) {
      page.body << "<p>" << htmlEscape(name) << ": the " << htmlEscape(in.predictedSet) << " set's "
                << r.row.size() << " labelled molecule(s) have one class only: no ROC or PR curve.</p>";
      continue;
    }
    std::vector<double> fpr, tpr, recall, precision;
    classificationCurves(r, fpr, tpr, recall, precision);
    auto area = [&](const char* metric) {
      const std::string key = std::string(metric) + "_per_target";
      return e.details.contains(key) && e.details[key].contains(name) ? cell(e.details[key][name]) : "n/a";
    };
    SvgPlot roc("ROC: " + name + " (" + in.predictedSet + ")", "false positive rate", "true positive rate");
    roc.setXRange(0, 1);
    roc.setYRange(0, 1);
    roc.setSubtitle("ROC-AUC " + area("rocauc") + ", " + std::to_string(r.row.size()) + " molecules");
    roc.addLine("ROC (AUC " + area("rocauc") + ")", fpr, tpr);
    roc.addReference(0, 0, 1, 1, "chance");
    roc.setLegendCorner(SvgPlot::Corner::BottomRight);
    page.plot(roc);
    SvgPlot pr("Precision-recall: " + name + " (" + in.predictedSet + ")", "recall", "precision");
    pr.setXRange(0, 1);
    pr.setYRange(0, 1.02);
    pr.setSubtitle("average precision " + area("prc") + ", positives " + num(positives / r.row.size()));
    pr.addLine("PR (AP " + area("prc") + ")", recall, precision);
    const double base = positives / static_cast<double>(r.row.size());
    pr.addReference(0, base, 1, base, "positive fraction");
    pr.setLegendCorner(SvgPlot::Corner::BottomLeft);
    page.plot(pr);
  }
  page.body << "</div>\n";
}

// Observed fraction of labelled rows whose error lies inside the central p-interval of N(mu, v), for p =
// k/100 (gnn::miscalibrationArea's curve).
std::vector<double> observedFractions(const TargetRows& r, std::vector<double>& expected) {
  std::vector<double> observed;
  expected.clear();
  for (int k = 0; k <= 100; ++k) {
    const double p = k / 100.0;
    expected.push_back(p);
    if (k == 0 || k == 100) {
      observed.push_back(p);
      continue;
    }
    const double z = centralIntervalHalfWidth(p);
    double inside = 0;
    for (size_t i = 0; i < r.row.size(); ++i)
      inside += std::fabs(r.target[i] - r.pred[i]) <= std::sqrt(r.var[i]) * z;
    observed.push_back(r.row.empty() ? NAN : inside / static_cast<double>(r.row.size()));
  }
  return observed;
}

// Reliability of probabilities: ten equal bins of the predicted probability, the mean prediction and the
// fraction of positives in each bin that holds a molecule.
void reliability(const TargetRows& r, std::vector<double>& meanPred, std::vector<double>& positives) {
  double sum[10] = {}, pos[10] = {}, count[10] = {};
  for (size_t i = 0; i < r.row.size(); ++i) {
    const int b = std::clamp(static_cast<int>(r.pred[i] * 10), 0, 9);
    sum[b] += r.pred[i];
    pos[b] += r.target[i] > 0.5;
    count[b] += 1;
  }
  for (int b = 0; b < 10; ++b)
    if (count[b] > 0) {
      meanPred.push_back(sum[b] / count[b]);
      positives.push_back(pos[b] / count[b]);
    }
}

}  // namespace

namespace {

// Uncertainty scores (NLL, Spearman, miscalibration area for regression; NLL for classification) before and
// after the calibration, per target and averaged, and the calibration plots.
void uncertaintySection(const HtmlReportInput& in, Page& page) {
  const MoleculePredictions& after = *in.predicted;
  const MoleculePredictions* before =
      in.uncalibrated != nullptr && in.calibration != "none" ? in.uncalibrated : nullptr;
  const bool cls = in.task == MoleculeTask::Classification;
  const bool variance = after.uncertainty.defined() && (before == nullptr || before->uncertainty.defined());
  if (cls ? !variance && before == nullptr : !variance) return;
  page.body << "<section id=\"uncertainty\"><h2>Uncertainty and calibration</h2>\n<p>"
            << (variance ? "Each prediction comes with a variance (the uncertainty column of --predict). "
                         : "")
            << (before != nullptr
                    ? "Calibration: " + htmlEscape(in.calibration) + ", fitted on the validation set; the " +
                          htmlEscape(in.predictedSet) + " set is scored before and after it."
                    : std::string("No calibration was fitted."))
            << (cls ? " The plots compare the predicted probability with the observed fraction of positives "
                      "(ten bins)."
                    : " The plots show, for each expected fraction p, the observed fraction of errors |y - "
                      "mu| inside the "
                      "central p-interval of N(mu, variance); the miscalibration area is the mean distance "
                      "to y = x.")
            << "</p>\n";
  auto scores = [&](const MoleculePredictions& p) {
    return cls ? classificationUncertaintyScores(p, in.targetNames) : uncertaintyScores(p, in.targetNames);
  };
  std::vector<std::pair<std::string, json>> columns;
  if (before != nullptr) columns.emplace_back("uncalibrated", scores(*before));
  columns.emplace_back(before != nullptr ? "calibrated" : "", scores(after));
  const std::vector<std::string> names =
      cls ? std::vector<std::string>{"nll"}
          : std::vector<std::string>{"nll", "spearman", "miscalibration_area"};
  page.body << "<table class=\"metrics\"><tr><th>target</th>";
  for (const auto& [label, s] : columns)
    for (const std::string& n : names)
      page.body << "<th>" << n << (label.empty() ? "" : " " + label) << "</th>";
  page.body << "</tr>\n";
  const int64_t tasks = after.pred.dim(1);
  for (int64_t t = -1; t < tasks; ++t) {  // -1: the mean over targets
    if (t == -1 && tasks == 1) continue;
    const std::string name = t < 0 ? "" : targetName(in.targetNames, t);
    page.body << "<tr" << (t < 0 ? " class=\"mean\"" : "") << "><td>" << (t < 0 ? "mean" : htmlEscape(name))
              << "</td>";
    for (const auto& [label, s] : columns)
      for (const std::string& n : names) {
        const json& v = t < 0 ? s : s["per_target"][name];
        page.body << "<td>" << (v.contains(n) ? cell(v[n]) : "n/a") << "</td>";
      }
    page.body << "</tr>\n";
  }
  page.body << "</table>\n<div class=\"plots\">";
  for (int64_t t = 0; t < std::min(tasks, in.maxPlottedTargets); ++t) {
    const std::string name = targetName(in.targetNames, t);
    SvgPlot plot((cls ? "Reliability: " : "Calibration: ") + name + " (" + in.predictedSet + ")",
                 cls ? "mean predicted probability" : "expected fraction inside the interval",
                 cls ? "fraction of positives" : "observed fraction inside the interval");
    plot.setXRange(0, 1);
    plot.setYRange(0, 1);
    for (const auto& [label, s] : columns) {
      const TargetRows r = labelled(label == "uncalibrated" ? *before : after, t);
      if (r.row.empty()) continue;
      std::vector<double> x, y;
      if (cls)
        reliability(r, x, y);
      else
        y = observedFractions(r, x);
      const std::string area =
          cls ? "" : " (area " + cell(s["per_target"][name].value("miscalibration_area", json())) + ")";
      plot.addLine((label.empty() ? "test" : label) + area, x, y, /*dashed=*/label == "uncalibrated");
    }
    if (plot.points() == 0) continue;
    plot.addReference(0, 0, 1, 1, "ideal");
    plot.setLegendCorner(SvgPlot::Corner::TopLeft);
    page.plot(plot);
  }
  page.body << "</div></section>\n";
}

// The predictions furthest from their label (regression: the absolute error; classification: |p - y|).
void worstSection(const HtmlReportInput& in, const MoleculePredictions& p, Page& page) {
  struct Entry {
    double error;
    int64_t row, target;
  };
  std::vector<Entry> all;
  const int64_t tasks = p.pred.dim(1);
  for (int64_t t = 0; t < tasks; ++t) {
    const TargetRows r = labelled(p, t);
    for (size_t k = 0; k < r.row.size(); ++k)
      all.push_back({std::fabs(r.pred[k] - r.target[k]), r.row[k], t});
  }
  if (all.empty() || in.dataset == nullptr) return;
  const size_t shown = std::min<size_t>(all.size(), 10);
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(shown), all.end(),
                    [](const Entry& a, const Entry& b) {
                      return a.error > b.error || (a.error == b.error && a.row < b.row);
                    });
  const bool unc = p.uncertainty.defined();
  page.body << "<table class=\"worst\"><caption>The " << shown
            << " predictions furthest from their label</caption>\n"
            << "<tr><th>line</th><th>SMILES</th>" << (tasks > 1 ? "<th>target</th>" : "")
            << "<th>true</th><th>" << (in.task == MoleculeTask::Classification ? "probability" : "predicted")
            << "</th>" << (unc ? "<th>uncertainty (variance)</th>" : "") << "</tr>\n";
  for (size_t k = 0; k < shown; ++k) {
    const Entry& e = all[k];
    const size_t pos = static_cast<size_t>(p.positions[static_cast<size_t>(e.row)]);
    const int64_t at = e.row * tasks + e.target;
    page.body << "<tr><td>" << in.dataset->sourceLine(pos) << "</td><td class=\"smiles\">"
              << (in.dataset->hasSmiles() ? htmlEscape(in.dataset->smiles(pos)) : "") << "</td>"
              << (tasks > 1 ? "<td>" + htmlEscape(targetName(in.targetNames, e.target)) + "</td>" : "")
              << "<td>" << num(p.target.at(at)) << "</td><td>" << num(p.pred.at(at)) << "</td>"
              << (unc ? "<td>" + num(p.uncertainty.at(at)) + "</td>" : "") << "</tr>\n";
  }
  page.body << "</table>\n";
}

// The run's metrics at the best epoch as --json has them (valid_<name>, test_<name>), then the whole object.
void resultsSection(const HtmlReportInput& in, Page& page) {
  page.body << "<section id=\"results\"><h2>Results</h2>\n<table "
               "class=\"metrics\"><tr><th>metric</th><th>valid</th>"
            << "<th>test</th></tr>\n";
  std::vector<std::string> metrics;
  for (const auto& [key, value] : in.results.items())
    if (key.rfind("valid_", 0) == 0 && (value.is_number() || value.is_null()) && key != "valid_metric" &&
        key != "valid_graphs")
      metrics.push_back(key.substr(6));
  for (const std::string& m : metrics)
    page.body << "<tr><td>" << htmlEscape(m) << "</td><td>" << cell(in.results["valid_" + m]) << "</td><td>"
              << (in.results.contains("test_" + m) ? cell(in.results["test_" + m]) : "") << "</td></tr>\n";
  for (const char* block : {"ensemble", "uncertainty"})
    if (in.results.contains(block) && in.results[block].is_object()) {
      const json& b = in.results[block];
      for (const auto& [key, value] : b.items())
        if (key.rfind("valid_", 0) == 0 && value.is_number())
          page.body << "<tr><td>" << block << " " << htmlEscape(key.substr(6)) << "</td><td>" << cell(value)
                    << "</td><td>"
                    << (b.contains("test_" + key.substr(6)) ? cell(b["test_" + key.substr(6)]) : "")
                    << "</td></tr>\n";
    }
  page.body << "</table>\n<details><summary>All results (the --json object)</summary><pre>"
            << htmlEscape(in.results.dump(2, ' ', false, json::error_handler_t::replace))
            << "</pre></details></section>\n";
}

const char* const kStyle =
    R"(body{font-family:sans-serif;max-width:1180px;margin:16px auto;padding:0 10px;color:#111}
h1{font-size:24px}h2{font-size:19px;border-bottom:1px solid #ccc;padding-bottom:3px;margin-top:28px}
table{border-collapse:collapse;margin:8px 16px 8px 0;font-size:14px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
table.kv th{background:#f4f4f4;font-weight:normal;white-space:nowrap}
caption{font-weight:bold;text-align:left;padding:4px 0}tr.mean td{font-weight:bold}
td.smiles{font-family:monospace;word-break:break-all;max-width:560px}
.cols{display:flex;flex-wrap:wrap;align-items:flex-start}.plots{display:flex;flex-wrap:wrap;gap:12px}
svg.plot{max-width:100%;height:auto;border:1px solid #eee}pre{font-size:12px;background:#f8f8f8;padding:8px;
overflow-x:auto}details{margin:8px 0})";

// On load: each plot counts as rendered when it was laid out with a non-empty size, its data have a
// non-empty bounding box, and the browser counts the points data-points promises (markers and line vertices).
const char* const kScript = R"(window.addEventListener('load', function () {
  var plots = document.querySelectorAll('svg.plot'), rendered = 0, drawn = 0;
  plots.forEach(function (s) {
    var r = s.getBoundingClientRect(), d = s.querySelector('g.data'), b = d ? d.getBBox() : null;
    var n = s.querySelectorAll('circle.pt').length;
    s.querySelectorAll('polyline.series').forEach(function (l) { n += l.points.numberOfItems; });
    var ok = r.width > 0 && r.height > 0 && b !== null && b.width > 0 && b.height > 0 &&
             n === Number(s.getAttribute('data-points'));
    s.setAttribute('data-rendered', ok ? 'yes' : 'no');
    if (ok) rendered++;
    drawn += n;
  });
  document.body.setAttribute('data-plots-rendered', String(rendered));
  document.body.setAttribute('data-points-drawn', String(drawn));
});)";

}  // namespace

std::string htmlReport(const HtmlReportInput& in) {
  Page page;
  configurationSection(in, page);
  curvesSection(in, page);
  if (in.predicted != nullptr && in.predicted->pred.defined() && in.predicted->pred.dim(0) > 0) {
    const MoleculePredictions& p = *in.predicted;
    const bool cls = in.task == MoleculeTask::Classification;
    page.body << "<section id=\"predictions\"><h2>" << (cls ? "Classification" : "Regression") << ": the "
              << htmlEscape(in.predictedSet) << " set</h2>\n";
    metricsTable(in, p, page);
    if (p.pred.dim(1) > in.maxPlottedTargets)
      page.body << "<p>Plots of the first " << in.maxPlottedTargets << " of " << p.pred.dim(1)
                << " targets; the table lists all.</p>\n";
    if (cls)
      classificationPlots(in, p, page);
    else
      parityPlots(in, p, page);
    worstSection(in, p, page);
    page.body << "</section>\n";
    uncertaintySection(in, page);
  } else {
    page.body << "<section id=\"predictions\"><h2>Predictions</h2><p>No molecule to score.</p></section>\n";
  }
  resultsSection(in, page);
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" << htmlEscape(in.program)
    << " report</title>\n<style>" << kStyle << "</style>\n<script>" << kScript << "</script>\n</head>\n"
    << "<body data-plots=\"" << page.plots << "\" data-plots-rendered=\"0\">\n<h1>" << htmlEscape(in.program)
    << " report: " << htmlEscape(in.results.value("model", std::string("model"))) << ", "
    << htmlEscape(moleculeTaskName(in.task)) << "</h1>\n"
    << page.body.str() << "</body></html>\n";
  return o.str();
}

void writeHtmlReport(const std::string& path, const HtmlReportInput& in) {
  const std::string page = htmlReport(in);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << page;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": cannot write the HTML report (" + tmp + " failed)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot write the HTML report (" + ec.message() + ")");
  }
}

}  // namespace gnn::app
