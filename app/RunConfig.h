// RunConfig: the flags that define a run (model, widths, task, featurisation, data, target scaling) as one
// JSON object that checkpoints carry. `--load` restores them: a flag the user did not give takes the
// checkpoint's value, a given flag that contradicts it is an error naming both values. Flags that may change
// on resume (learning rate, epochs, schedule, threads, output files) are simply not bound. Flags bound with
// bindOutsideModel (how molecules are batched, which metrics are reported) are restored alike when a run
// continues training, but an evaluation-only run (it trains nothing more) may change them: they do not change
// the model it evaluates.
//
//   app::RunConfig config;
//   config.bind("model", &c.model);               // the flag --model, saved as "model"
//   config.bind("hidden", &c.hidden);
//   config.restore(ck.meta["config"], prog, "run.ckpt");   // before the model is built
//   TargetScaling s = config.deriveOnce("target_scaling", [&] { return TargetScaling::fit(...); },
//                                       TargetScaling::fromJson, [](const TargetScaling& t) { return t.toJson(); });
//   ck.meta["config"] = config.toJson();
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "app/Program.h"

namespace gnn::app {

class RunConfig {
 public:
  /// `flag` is the option's long name (without dashes); the JSON key is the same with '-' as '_'.
  void bind(const std::string& flag, std::string* v) { add(flag, v); }
  void bind(const std::string& flag, int64_t* v) { add(flag, v); }
  void bind(const std::string& flag, int* v) { add(flag, v); }
  void bind(const std::string& flag, uint64_t* v) { add(flag, v); }
  void bind(const std::string& flag, double* v) { add(flag, v); }
  void bind(const std::string& flag, bool* v) { add(flag, v); }
  /// A flag that leaves the model as it is (batching, metrics): restore() with `evaluationOnly` keeps the value
  /// the command line gave instead of refusing it.
  template <class T>
  void bindOutsideModel(const std::string& flag, T* v) {
    add(flag, v);
    entries_.back().outsideModel = true;
  }

  /// The bound values, plus `derived` (values computed from the data: target scaling, batch sizes, ...).
  nlohmann::json toJson() const;
  /// Adopts `saved` (a toJson() of an earlier run) for every bound flag the user did not give; a given flag
  /// whose value differs throws UsageError: "--hidden 128 contradicts run.ckpt (hidden 300) ...". Keys that
  /// the checkpoint lacks keep the command line's value. `derived` is taken over as saved (it must be an object).
  /// With `evaluationOnly`, a given flag bound by bindOutsideModel keeps its value (see changedOutsideModel()).
  void restore(const nlohmann::json& saved, const Program& prog, const std::string& source,
               bool evaluationOnly = false);
  /// The bindOutsideModel flags an evaluation-only restore() kept at a value other than the checkpoint's.
  const std::vector<std::string>& changedOutsideModel() const { return changed_; }

  /// A value derived from the data when a run first starts and kept as it was for the rest of the run. When the
  /// restored configuration holds derived[key], the value is `read(derived[key])` and `derive` is not called
  /// (a malformed value is named with the checkpoint); otherwise it is `derive()`. Either way `write(value)`
  /// becomes derived[key], for the run's checkpoints.
  template <class Derive, class Read, class Write>
  auto deriveOnce(const std::string& key, Derive derive, Read read, Write write) -> decltype(derive());

  /// Values derived from the data at the first run (kept as they were on resume).
  nlohmann::json derived = nlohmann::json::object();

 private:
  [[noreturn]] void malformedDerived(const std::string& key) const;
  std::string source_;  // the checkpoint restore() read, for messages
  using Target = std::variant<std::string*, int64_t*, int*, uint64_t*, double*, bool*>;
  template <class T>
  void add(const std::string& flag, T* v) {
    entries_.push_back({flag, Target(v)});
  }
  struct Entry {
    std::string flag;
    Target target;
    bool outsideModel = false;
  };
  std::vector<Entry> entries_;
  std::vector<std::string> changed_;
};

template <class Derive, class Read, class Write>
auto RunConfig::deriveOnce(const std::string& key, Derive derive, Read read, Write write) -> decltype(derive()) {
  if (derived.contains(key)) {
    try {
      auto v = read(derived[key]);
      derived[key] = write(v);
      return v;
    } catch (const nlohmann::json::exception&) {
      malformedDerived(key);
    }
  }
  auto v = derive();
  derived[key] = write(v);
  return v;
}

}  // namespace gnn::app
