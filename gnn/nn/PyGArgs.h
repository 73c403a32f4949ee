// PyGArgs: a layer's or model's constructor arguments under PyTorch Geometric's keyword names, as JSON
// ({"in_channels": 4, "out_channels": 3, "heads": 2}); what the layer table's references, a `{"class": ...,
// "args": {...}}` model spec and the programs build layers from.
//
//   PyGArgs a(args, "GATConv", {{"in_channels", 0}, {"out_channels", 0}, {"heads", 1}, {"concat", true}});
//   int64_t heads = a.get<int64_t>("heads");     // the given value or PyG's default
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace gnn {

class PyGArgs {
 public:
  /// `defaults`: every keyword the class takes with PyG's default (null for a required one). Throws
  /// std::invalid_argument naming the class and the keyword for a keyword the class does not take, so a
  /// reference or a spec made with an option this library lacks fails loudly instead of running with defaults.
  PyGArgs(const nlohmann::json& args, std::string className, const nlohmann::json& defaults);

  /// The value (given or default) converted to T; invalid_argument naming the class and keyword when it is
  /// missing (a required argument), null or of another type.
  template <class T>
  T get(const std::string& key) const {
    const nlohmann::json& v = at(key);
    if (v.is_null()) throw invalidValue(key, v, "required (no default)");
    try {
      return v.get<T>();
    } catch (const nlohmann::json::exception&) {
      throw invalidValue(key, v);
    }
  }
  /// Whether the keyword holds a value (not null).
  bool has(const std::string& key) const { return !at(key).is_null(); }
  /// The raw JSON of a keyword (given or default).
  const nlohmann::json& at(const std::string& key) const;
  const nlohmann::json& all() const { return values_; }
  const std::string& className() const { return class_; }
  /// std::invalid_argument "<class>: <key>=<value>: <why>".
  std::invalid_argument invalidValue(const std::string& key, const nlohmann::json& value,
                                     const std::string& why = "wrong type") const;

 private:
  nlohmann::json values_;
  std::string class_;
};

}  // namespace gnn
