// The Verilator-free face of a Verilated RTL block (sc_models/nic/verilated_block.h): its cycle-level ports,
// and the rules for naming and checking the variants (parameter values, mutants) a build compiled.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sc_models/core/params.h"

namespace fabricsim::nic {

// A model with a block's ports, advanced one clock per call: drive `in` for the cycle, return the outputs seen
// during that cycle (before the rising edge), then take the rising edge.
template <class In, class Out>
class verilated_port {
 public:
  virtual ~verilated_port() = default;
  virtual Out step(const In& in) = 0;
  // The outputs of the cycle the last rising edge began, with the request and init pins at rest.
  virtual Out peek() const = 0;
  // From now on, every half cycle goes to this FST file; only for a block built traceable (std::logic_error
  // otherwise).
  virtual void start_trace(const std::string& fst_path) = 0;
};

// The item of a generated variant list (FABRICSIM_<BLOCK>_WINDOWS(X), ..._MUTANTS(X), rtl/CMakeLists.txt) in
// a std::vector<uint32_t> initializer: {FABRICSIM_CNP_GEN_MUTANTS(FABRICSIM_RTL_LIST_ITEM)}.
#define FABRICSIM_RTL_LIST_ITEM(n) n##u,

// "a, b, c" for error messages.
inline std::string rtl_list(const std::vector<uint32_t>& values) {
  std::string list;
  for (uint32_t v : values) list += (list.empty() ? "" : ", ") + std::to_string(v);
  return list;
}

// The factory kind of mutant N is "rtl_mutant_<N>": returns N, or 0 when `kind` is not of that form.
inline uint32_t rtl_mutant_of_kind(const std::string& kind) {
  const std::string prefix = "rtl_mutant_";
  if (kind.compare(0, prefix.size(), prefix) != 0 || kind.size() <= prefix.size() || kind.size() >= 20 ||
      kind.find_first_not_of("0123456789", prefix.size()) != std::string::npos)
    return 0;
  return static_cast<uint32_t>(std::stoul(kind.substr(prefix.size())));
}

inline std::string rtl_kind_of_mutant(uint32_t mutant) {
  return mutant == 0 ? "rtl" : "rtl_mutant_" + std::to_string(mutant);
}

// Throws core::config_error unless mutant N of `block` (rtl/mutants/<block>/<N>.patch) is in `built` and its
// parameter `param` (e.g. "window"; empty for a block with one configuration) has the one value mutants are
// built for.
inline void check_rtl_mutant(const std::string& block, uint32_t mutant, const std::vector<uint32_t>& built,
                             const std::string& param = "", uint32_t value = 0, uint32_t built_value = 0) {
  const std::string which = block + " mutant " + std::to_string(mutant);
  if (std::find(built.begin(), built.end(), mutant) == built.end())
    throw core::config_error(which + " is not built; built: " +
                             (built.empty() ? "none (configure with -DFABRICSIM_RTL_MUTANTS=ON)" : rtl_list(built)));
  if (!param.empty() && value != built_value)
    throw core::config_error(which + ": " + param + " " + std::to_string(value) + " is not built; mutants have " +
                             param + " " + std::to_string(built_value) + " only");
}

}  // namespace fabricsim::nic
