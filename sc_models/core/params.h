// Parameter declaration: every block's tunables are a plain `<block>_params` struct whose `visit()` lists
// each field once, with its unit, a one-line description and its legal range. The scenario loader, the
// `--set` overrides and the documentation all walk the same list, so nothing else reads configuration.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
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

// Checks a cross-field rule in a block's constructor: "instance: message".
inline void require(bool ok, const std::string& instance, const std::string& message) {
  if (!ok) throw config_error(instance + ": " + message);
}

}  // namespace fabricsim::core
