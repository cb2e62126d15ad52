// Parameter declaration: every block's tunables are a plain `<block>_params` struct whose `visit()` lists
// each field once, with its unit, a one-line description and its legal range. The scenario loader, the
// `--set` overrides and the documentation all walk the same list, so nothing else reads configuration.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim::core {

// What a field is, independent of its type.
struct field_info {
  const char* name;         // key in the scenario file, e.g. "rate_gbps"
  const char* unit;         // "Gb/s", "ns", "bytes", "" for none
  const char* description;  // one line
  double min = -std::numeric_limits<double>::infinity();  // numeric fields: inclusive range
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices = {};  // string fields: the allowed values (empty: any string)
};

// Walks the fields of a params struct. One overload per supported field type.
class param_visitor {
 public:
  virtual ~param_visitor() = default;
  virtual void field(const field_info& info, uint64_t& value) = 0;
  virtual void field(const field_info& info, double& value) = 0;
  virtual void field(const field_info& info, bool& value) = 0;
  virtual void field(const field_info& info, std::string& value) = 0;
};

// Thrown for any configuration problem; the message names the file, line, key and what was expected.
class config_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// require()'s error on its own, for a check whose message is worth building only when it fails.
[[noreturn]] inline void fail(const std::string& instance, const std::string& message) {
  throw config_error(instance + ": " + message);
}

// Checks a cross-field rule in a block's constructor: "instance: message".
inline void require(bool ok, const std::string& instance, const std::string& message) {
  if (!ok) fail(instance, message);
}

// Checks every field of a params struct filled in code (not loaded from a scenario, whose loader checks
// ranges with file and line) against its declared range or choices: "instance.field: value is out of
// range [lo, hi] unit".
class range_checker : public param_visitor {
 public:
  explicit range_checker(std::string instance) : m_instance(std::move(instance)) {}
  void field(const field_info& f, uint64_t& value) override { check(f, double(value), std::to_string(value)); }
  void field(const field_info& f, double& value) override { check(f, value, number(value)); }
  void field(const field_info&, bool&) override {}
  void field(const field_info& f, std::string& value) override {
    if (f.choices.empty() || std::find(f.choices.begin(), f.choices.end(), value) != f.choices.end()) return;
    std::string list;
    for (const std::string& c : f.choices) list += (list.empty() ? "" : ", ") + c;
    throw config_error(m_instance + "." + f.name + ": \"" + value + "\" is not one of: " + list);
  }

 private:
  static std::string number(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
  }
  void check(const field_info& f, double value, const std::string& text) const {
    if (value >= f.min && value <= f.max) return;  // NaN fails both
    std::string unit = (f.unit && *f.unit) ? std::string(" ") + f.unit : std::string();
    throw config_error(m_instance + "." + f.name + ": " + text + " is out of range [" + number(f.min) + ", " +
                       number(f.max) + "]" + unit);
  }
  std::string m_instance;
};

template <class Params>
void check_ranges(const Params& params, const std::string& instance) {
  Params copy = params;  // visit() is not const: it also serves the loaders that write fields
  range_checker checker(instance);
  copy.visit(checker);
}

}  // namespace fabricsim::core
