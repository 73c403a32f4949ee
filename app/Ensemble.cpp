#include "app/Ensemble.h"

#include <cmath>
#include <stdexcept>

#include "gnn/metrics/Calibration.h"

namespace gnn::app {

namespace {

// Target t's labelled rows of `p`: predictions, targets, variances.
struct TargetRows {
  std::vector<double> pred, target, var;
};
TargetRows labelledRows(const MoleculePredictions& p, int64_t t) {
  TargetRows r;
  const int64_t n = p.pred.dim(0);
  auto pred = p.pred.matrix<float>(), target = p.target.matrix<float>();
  auto mask = p.mask.matrix<uint8_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (mask(i, t) == 0) continue;
    r.pred.push_back(pred(i, t));
    r.target.push_back(target(i, t));
    if (p.uncertainty.defined()) r.var.push_back(p.uncertainty.matrix<float>()(i, t));
  }
  return r;
}

std::string targetName(const std::vector<std::string>& names, int64_t t) {
  return t < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(t)] : std::to_string(t);
}

// The logit of a probability, kept finite when it is 0 or 1.
double logitOf(double q) {
  q = std::min(std::max(q, 1e-7), 1 - 1e-7);
  return std::log(q / (1 - q));
}

// JSON has no NaN: an undefined score (no labelled row, a constant side of a correlation) is null.
nlohmann::json number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

}  // namespace

std::string ensembleMemberPrefix(int64_t k) {
  return "member" + std::to_string(k);
}

MoleculePredictions combineEnsemble(const std::vector<MoleculePredictions>& members, MoleculeTask task) {
  if (members.empty()) throw std::invalid_argument("combineEnsemble: no member predictions");
  const MoleculePredictions& first = members.front();
  for (const MoleculePredictions& m : members)
    if (m.positions != first.positions || m.pred.shape() != first.pred.shape())
      throw std::invalid_argument("combineEnsemble: the members predicted other molecules or targets");
  if (task == MoleculeTask::RegressionMve)
    for (const MoleculePredictions& m : members)
      if (!m.uncertainty.defined() || m.uncertainty.shape() != first.pred.shape())
        throw std::invalid_argument("combineEnsemble: a mean-variance member predicted no variance");
  MoleculePredictions p = first;  // positions, targets, masks, shapes
  const int64_t n = first.pred.dim(0), tasks = first.pred.dim(1);
  const double count = static_cast<double>(members.size());
  p.pred = Tensor::zeros({n, tasks});
  p.score = Tensor::zeros({n, tasks});
  p.uncertainty = Tensor::zeros({n, tasks});
  auto pred = p.pred.matrix<float>(), score = p.score.matrix<float>(), var = p.uncertainty.matrix<float>();
  for (size_t k = 1; k < members.size(); ++k) p.padding.merge(members[k].padding);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t t = 0; t < tasks; ++t) {
      double sum = 0;
      for (const MoleculePredictions& m : members) sum += m.pred.matrix<float>()(i, t);
      const double mean = sum / count;
      double squares = 0;
      for (const MoleculePredictions& m : members) {
        const double d = m.pred.matrix<float>()(i, t) - mean;
        squares += d * d;
      }
      pred(i, t) = static_cast<float>(mean);
      var(i, t) = static_cast<float>(squares / count);
      if (task == MoleculeTask::RegressionMve) {
        // The members' own variances (aleatoric) averaged, plus the spread of their means (epistemic).
        double aleatoric = 0;
        for (const MoleculePredictions& m : members) aleatoric += m.uncertainty.matrix<float>()(i, t);
        var(i, t) = static_cast<float>(aleatoric / count + squares / count);
      }
      if (task != MoleculeTask::Classification) {
        score(i, t) = pred(i, t);
      } else {
        // The logit of the mean probability, kept finite when every member is certain.
        score(i, t) = static_cast<float>(logitOf(mean));
      }
    }
  return p;
}

void UncertaintyCalibration::apply(MoleculePredictions& p) const {
  if (method == "isotonic") {
    const int64_t n = p.pred.dim(0), tasks = p.pred.dim(1);
    if (static_cast<int64_t>(isotonic.size()) != tasks)
      throw std::invalid_argument("UncertaintyCalibration: isotonic fits for " + std::to_string(isotonic.size()) +
                                  " targets, predictions of " + std::to_string(tasks));
    auto score = p.score.matrix<float>(), pred = p.pred.matrix<float>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t t = 0; t < tasks; ++t) {
        const double q = isotonic[static_cast<size_t>(t)](pred(i, t));
        pred(i, t) = static_cast<float>(q);
        score(i, t) = static_cast<float>(logitOf(q));
      }
    return;
  }
  if (method == "platt") {
    const int64_t n = p.score.dim(0), tasks = p.score.dim(1);
    if (static_cast<int64_t>(plattA.size()) != tasks || static_cast<int64_t>(plattB.size()) != tasks)
      throw std::invalid_argument("UncertaintyCalibration: Platt parameters for " +
                                  std::to_string(plattA.size()) + " targets, predictions of " +
                                  std::to_string(tasks));
    auto score = p.score.matrix<float>(), pred = p.pred.matrix<float>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t t = 0; t < tasks; ++t) {
        const double x = plattA[static_cast<size_t>(t)] * score(i, t) + plattB[static_cast<size_t>(t)];
        score(i, t) = static_cast<float>(x);
        pred(i, t) = static_cast<float>(1.0 / (1.0 + std::exp(-x)));
      }
    return;
  }
  if (method == "none" || !p.uncertainty.defined()) return;
  const int64_t n = p.uncertainty.dim(0), tasks = p.uncertainty.dim(1);
  if (static_cast<int64_t>(varianceScale.size()) != tasks)
    throw std::invalid_argument("UncertaintyCalibration: " + std::to_string(varianceScale.size()) +
                                " variance scales for " + std::to_string(tasks) + " targets");
  auto var = p.uncertainty.matrix<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t t = 0; t < tasks; ++t)
      var(i, t) = static_cast<float>(static_cast<double>(var(i, t)) * varianceScale[static_cast<size_t>(t)]);
}

nlohmann::json UncertaintyCalibration::toJson() const {
  nlohmann::json j = {{"method", method}};
  if (method == "zscaling") j["variance_scale"] = varianceScale;
  if (method == "platt") {
    j["a"] = plattA;
    j["b"] = plattB;
  }
  if (method == "isotonic") {
    j["thresholds"] = nlohmann::json::array();
    for (const IsotonicFit& f : isotonic) j["thresholds"].push_back({{"x", f.x}, {"y", f.y}});
  }
  return j;
}

UncertaintyCalibration UncertaintyCalibration::fromJson(const nlohmann::json& j, const std::string& source) {
  auto bad = [&](const std::string& why) {
    return std::runtime_error(source + ": ensemble calibration " + why + "; the checkpoint cannot be used");
  };
  if (!j.is_object() || !j.contains("method") || !j["method"].is_string()) throw bad("names no method");
  UncertaintyCalibration c;
  c.method = j["method"].get<std::string>();
  if (c.method == "none") return c;
  if (c.method == "platt") {
    for (const auto& [key, into] : {std::pair{"a", &c.plattA}, std::pair{"b", &c.plattB}}) {
      if (!j.contains(key) || !j[key].is_array())
        throw bad(std::string("has no Platt parameter list '") + key + "'");
      for (const nlohmann::json& v : j[key]) {
        if (!v.is_number() || !std::isfinite(v.get<double>()))
          throw bad(std::string("Platt ") + key + " " + v.dump() + " is not finite");
        into->push_back(v.get<double>());
      }
    }
    if (c.plattA.size() != c.plattB.size()) throw bad("has Platt lists of different lengths");
    return c;
  }
  if (c.method == "isotonic") {
    if (!j.contains("thresholds") || !j["thresholds"].is_array()) throw bad("has no isotonic thresholds list");
    for (const nlohmann::json& t : j["thresholds"]) {
      IsotonicFit f;
      for (const auto& [key, into] : {std::pair{"x", &f.x}, std::pair{"y", &f.y}}) {
        if (!t.is_object() || !t.contains(key) || !t[key].is_array())
          throw bad(std::string("has an isotonic fit without its '") + key + "' list");
        for (const nlohmann::json& v : t[key]) {
          if (!v.is_number() || !std::isfinite(v.get<double>()))
            throw bad(std::string("isotonic ") + key + " " + v.dump() + " is not finite");
          into->push_back(v.get<double>());
        }
      }
      if (f.x.size() != f.y.size()) throw bad("has an isotonic fit whose x and y lists differ in length");
      for (size_t k = 0; k < f.x.size(); ++k)
        if ((k > 0 && (!(f.x[k] > f.x[k - 1]) || f.y[k] < f.y[k - 1])) || f.y[k] < 0 || f.y[k] > 1)
          throw bad("has an isotonic fit that is not increasing in x, non-decreasing in y and within [0, 1]");
      c.isotonic.push_back(std::move(f));
    }
    return c;
  }
  if (c.method != "zscaling") throw bad("method '" + c.method + "' is not zscaling, platt, isotonic or none");
  if (!j.contains("variance_scale") || !j["variance_scale"].is_array())
    throw bad("has no variance_scale list");
  for (const nlohmann::json& v : j["variance_scale"]) {
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
      throw bad("variance_scale " + v.dump() + " is not a finite positive number");
    c.varianceScale.push_back(v.get<double>());
  }
  return c;
}

UncertaintyCalibration fitZScaling(const MoleculePredictions& valid) {
  UncertaintyCalibration c;
  c.method = "zscaling";
  const int64_t tasks = valid.pred.dim(1);
  for (int64_t t = 0; t < tasks; ++t) {
    const TargetRows r = labelledRows(valid, t);
    const double s2 = zScalingFactor(r.pred, r.target, r.var);
    c.varianceScale.push_back(std::isfinite(s2) && s2 > 0 ? s2 : 1.0);
  }
  return c;
}

UncertaintyCalibration fitPlatt(const MoleculePredictions& valid) {
  UncertaintyCalibration c;
  c.method = "platt";
  const int64_t n = valid.score.dim(0), tasks = valid.score.dim(1);
  auto score = valid.score.matrix<float>(), target = valid.target.matrix<float>();
  auto mask = valid.mask.matrix<uint8_t>();
  for (int64_t t = 0; t < tasks; ++t) {
    std::vector<double> z, y;
    for (int64_t i = 0; i < n; ++i)
      if (mask(i, t) != 0) {
        z.push_back(score(i, t));
        y.push_back(target(i, t));
      }
    const PlattParameters p = plattScaling(z, y);
    c.plattA.push_back(p.a);
    c.plattB.push_back(p.b);
  }
  return c;
}

UncertaintyCalibration fitIsotonic(const MoleculePredictions& valid) {
  UncertaintyCalibration c;
  c.method = "isotonic";
  for (int64_t t = 0; t < valid.pred.dim(1); ++t) {
    const TargetRows r = labelledRows(valid, t);
    c.isotonic.push_back(isotonicRegression(r.pred, r.target));
  }
  return c;
}

nlohmann::json classificationUncertaintyScores(const MoleculePredictions& p,
                                               const std::vector<std::string>& targetNames) {
  nlohmann::json per = nlohmann::json::object();
  double sum = 0;
  int64_t counted = 0;
  for (int64_t t = 0; t < p.pred.dim(1); ++t) {
    const TargetRows r = labelledRows(p, t);
    const double nll = binaryNll(r.pred, r.target);
    per[targetName(targetNames, t)] = {{"nll", number(nll)}};
    if (std::isfinite(nll)) {
      sum += nll;
      ++counted;
    }
  }
  return {{"nll", number(counted > 0 ? sum / static_cast<double>(counted) : NAN)}, {"per_target", per}};
}

nlohmann::json uncertaintyScores(const MoleculePredictions& p, const std::vector<std::string>& targetNames) {
  nlohmann::json per = nlohmann::json::object();
  const int64_t tasks = p.pred.dim(1);
  double sums[3] = {0, 0, 0};
  int64_t counts[3] = {0, 0, 0};
  const char* names[3] = {"nll", "spearman", "miscalibration_area"};
  for (int64_t t = 0; t < tasks; ++t) {
    const TargetRows r = labelledRows(p, t);
    const double v[3] = {gaussianNll(r.pred, r.target, r.var),
                         errorUncertaintySpearman(r.pred, r.target, r.var),
                         miscalibrationArea(r.pred, r.target, r.var)};
    nlohmann::json j = nlohmann::json::object();
    for (int k = 0; k < 3; ++k) {
      j[names[k]] = number(v[k]);
      if (std::isfinite(v[k])) {
        sums[k] += v[k];
        ++counts[k];
      }
    }
    per[targetName(targetNames, t)] = j;
  }
  nlohmann::json out = nlohmann::json::object();
  for (int k = 0; k < 3; ++k)
    out[names[k]] = number(counts[k] > 0 ? sums[k] / static_cast<double>(counts[k]) : NAN);
  out["per_target"] = per;
  return out;
}

nlohmann::json EnsembleInfo::toJson() const {
  nlohmann::json members = nlohmann::json::array();
  for (int64_t k = 0; k < size; ++k) members.push_back(ensembleMemberPrefix(k));
  return {{"size", size},
          {"seeds", seeds},
          {"members", members},
          {"uncertainty", "variance"},
          {"calibration", calibration.toJson()}};
}

std::optional<EnsembleInfo> EnsembleInfo::fromCheckpoint(const Checkpoint& ck) {
  if (!ck.meta.contains("ensemble")) return std::nullopt;
  const nlohmann::json& j = ck.meta["ensemble"];
  auto bad = [&](const std::string& why) {
    return std::runtime_error(ck.source + ": its metadata's 'ensemble' " + why +
                              "; the checkpoint cannot be used");
  };
  if (!j.is_object() || !j.contains("size") || !j["size"].is_number_integer() || j["size"].get<int64_t>() < 1)
    throw bad("has no size of at least 1");
  EnsembleInfo info;
  info.size = j["size"].get<int64_t>();
  if (j.contains("seeds") && j["seeds"].is_array())
    for (const nlohmann::json& s : j["seeds"])
      if (s.is_number_unsigned()) info.seeds.push_back(s.get<uint64_t>());
  if (!j.contains("calibration")) throw bad("has no calibration");
  info.calibration = UncertaintyCalibration::fromJson(j["calibration"], ck.source);
  for (int64_t k = 0; k < info.size; ++k) {
    const std::string prefix = ensembleMemberPrefix(k) + ".";
    auto it = ck.tensors.lower_bound(prefix);
    if (it == ck.tensors.end() || it->first.compare(0, prefix.size(), prefix) != 0)
      throw bad("names " + std::to_string(info.size) + " members, but the file has no tensor of member " +
                std::to_string(k) + " (" + prefix + "*)");
  }
  return info;
}

std::vector<std::unique_ptr<BlockModel>> loadEnsembleMembers(const Checkpoint& ck, const EnsembleInfo& info,
                                                             const MoleculeModelSpec& spec) {
  std::vector<std::unique_ptr<BlockModel>> members;
  for (int64_t k = 0; k < info.size; ++k) {
    members.push_back(makeMoleculeModel(spec, 0));
    ck.loadModule(ensembleMemberPrefix(k), *members.back());
  }
  return members;
}

}  // namespace gnn::app
