#include "app/RunConfig.h"

namespace gnn::app {

namespace {
std::string keyOf(std::string flag) {
  for (char& ch : flag)
    if (ch == '-') ch = '_';
  return flag;
}
std::string shownValue(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_float()) return formatNumber(j.get<double>());
  return j.dump();
}
}  // namespace

nlohmann::json RunConfig::toJson() const {
  nlohmann::json j = nlohmann::json::object();
  for (const Entry& e : entries_) std::visit([&](auto* p) { j[keyOf(e.flag)] = *p; }, e.target);
  if (!derived.empty()) j["derived"] = derived;
  return j;
}

void RunConfig::restore(const nlohmann::json& saved, const Program& prog, const std::string& source,
                        bool evaluationOnly) {
  changed_.clear();
  // Every run's checkpoint holds its configuration: without it the command line's values would be taken for
  // the ones the weights were trained with.
  if (!saved.is_object())
    throw std::runtime_error(source + ": its metadata's 'config' is " + (saved.is_null() ? "missing" : "not an object") +
                             ", so the run's configuration is unknown; the checkpoint cannot be used");
  for (const Entry& e : entries_) {
    const std::string key = keyOf(e.flag);
    if (!saved.contains(key)) continue;
    const nlohmann::json& s = saved[key];
    std::visit(
        [&](auto* p) {
          using T = std::remove_pointer_t<decltype(p)>;
          T v;
          try {
            v = s.get<T>();
          } catch (const nlohmann::json::exception&) {
            throw std::runtime_error(source + ": configuration value '" + key + "' = " + s.dump() +
                                     " has the wrong type");
          }
          if (prog.given(e.flag)) {
            if (nlohmann::json(*p) == nlohmann::json(v)) return;
            if (evaluationOnly && e.outsideModel) {
              changed_.push_back(e.flag);
              return;
            }
            throw UsageError("--" + e.flag + " " + shownValue(nlohmann::json(*p)) + " contradicts " + source + " (" +
                             e.flag + " " + shownValue(s) + "); drop the flag to continue that run, or start a new " +
                             "one without --load" +
                             (e.outsideModel ? " (an evaluation-only run, --epochs 0, may change it)" : ""));
          } else {
            *p = v;
          }
        },
        e.target);
  }
  source_ = source;
  if (saved.contains("derived")) derived = saved["derived"];
  if (!derived.is_object())
    throw std::runtime_error(source + ": configuration 'derived' is not a JSON object; the checkpoint cannot be used");
}

void RunConfig::malformedDerived(const std::string& key) const {
  std::string shown = derived.at(key).dump();
  if (shown.size() > 120) shown = shown.substr(0, 117) + "...";
  throw std::runtime_error(source_ + ": configuration 'derived." + key + "' = " + shown +
                           " is malformed; the checkpoint cannot be used");
}

}  // namespace gnn::app
