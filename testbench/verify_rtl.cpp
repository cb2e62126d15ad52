// `fabricsim verify-rtl`: the Verilated reorder tracker against its reference model, every port every cycle.
#include "testbench/verify_rtl.h"

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "sc_models/core/params.h"
#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/reorder_tracker_differential.h"
#include "sc_models/nic/reorder_tracker_rtl.h"

namespace fabricsim::testbench {
namespace {

using namespace fabricsim::nic;

std::string window_list() {
  std::string list;
  for (uint32_t w : reorder_tracker_rtl::compiled_windows()) list += (list.empty() ? "" : ", ") + std::to_string(w);
  return list;
}

}  // namespace

std::string verify_rtl_blocks() { return "reorder_tracker"; }

verify_rtl_result verify_rtl(const verify_rtl_options& options) {
  if (options.block != "reorder_tracker")
    throw core::config_error("verify-rtl --block " + options.block + ": unknown block; known blocks: " +
                             verify_rtl_blocks());
  const auto& windows = reorder_tracker_rtl::compiled_windows();
  if (std::find(windows.begin(), windows.end(), options.window) == windows.end())
    throw core::config_error("verify-rtl --window " + std::to_string(options.window) +
                             " is not a window the RTL was compiled for; compiled windows: " + window_list());
  if (!options.wave.empty() && !std::ofstream(options.wave))
    throw core::config_error("verify-rtl --wave " + options.wave + ": cannot open for writing");

  return run_reorder_tracker_differential(options.window, options.cycles, options.seed, options.wave);
}

std::string format_verify_rtl(const verify_rtl_options& options, const verify_rtl_result& r) {
  std::ostringstream s;
  s << "verify-rtl " << options.block << " window " << options.window << " seed " << options.seed << '\n';
  if (!r.matched) {
    s << "MISMATCH at cycle " << r.mismatch_cycle << ": " << r.mismatch << '\n';
    if (!options.wave.empty()) s << "waveform up to the mismatch: " << options.wave << '\n';
    return s.str();
  }
  s << "  cycles                 " << r.cycles << '\n';
  for (uint8_t v = 0; v < 4; ++v)
    s << "  " << std::left << std::setw(23) << to_string(static_cast<psn_verdict>(v)) << r.verdicts[v] << '\n';
  s << "  stalled presentations  " << r.stalled_presentations << '\n'
    << "  head wraps             " << r.head_wraps << '\n'
    << "  inits                  " << r.inits << '\n'
    << "  longest busy run       " << r.longest_busy_cycles << " cycles\n";
  if (!options.wave.empty()) s << "  waveform               " << options.wave << '\n';
  s << "RTL matches the reference model on every cycle\n";
  return s.str();
}

}  // namespace fabricsim::testbench
