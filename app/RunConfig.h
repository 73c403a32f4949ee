// RunConfig: the flags that define a run (model, widths, task, featurisation, data, target scaling) as one
// JSON object that checkpoints carry. `--load` restores them: a flag the user did not give takes the
// checkpoint's value, a given flag that contradicts it is an error naming both values. Flags that may change
// on resume (learning rate, epochs, schedule, threads, output files) are simply not bound.
//
//   app::RunConfig config;
//   config.bind("model", &c.model);               // the flag --model, saved as "model"
//   config.bind("hidden", &c.hidden);
//   config.restore(ck.meta["config"], prog, "run.ckpt");   // before the model is built
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

  /// The bound values, plus `derived` (values computed from the data: target scaling, batch sizes, ...).
  nlohmann::json toJson() const;
  /// Adopts `saved` (a toJson() of an earlier run) for every bound flag the user did not give; a given flag
  /// whose value differs throws UsageError: "--hidden 128 contradicts run.ckpt (hidden 300) ...". Keys that
  /// the checkpoint lacks keep the command line's value. `derived` is taken over as saved.
  void restore(const nlohmann::json& saved, const Program& prog, const std::string& source);

  /// Values derived from the data at the first run (kept as they were on resume).
  nlohmann::json derived = nlohmann::json::object();

 private:
  using Target = std::variant<std::string*, int64_t*, int*, uint64_t*, double*, bool*>;
  template <class T>
  void add(const std::string& flag, T* v) {
    entries_.push_back({flag, Target(v)});
  }
  struct Entry {
    std::string flag;
    Target target;
  };
  std::vector<Entry> entries_;
};

}  // namespace gnn::app
