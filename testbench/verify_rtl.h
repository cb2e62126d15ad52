// `fabricsim verify-rtl`: a Verilated RTL block against its C++ reference model under seeded
// constrained-random stimulus (cycle by cycle for the reorder tracker, transaction by transaction for the
// DCQCN reaction point).
#pragma once

#include <cstdint>
#include <string>

#include "sc_models/nic/cnp_gen_differential.h"
#include "sc_models/nic/dcqcn_rp_differential.h"
#include "sc_models/nic/reorder_tracker_differential.h"

namespace fabricsim::testbench {

struct verify_rtl_options {
  std::string block = "reorder_tracker";  // RTL block to verify (verify_rtl_blocks())
  uint32_t window = 256;                   // reorder_tracker Window parameter, in PSNs
  uint32_t flows = 64;                     // cnp_gen Flows parameter, flow contexts
  uint64_t cycles = 100000;                // clock cycles to run (RTL clock cycles)
  uint64_t seed = 1;                       // seed of the stimulus generator
  std::string wave;                        // FST waveform of the RTL, if not empty
  std::string preset;                      // dcqcn_rp parameter sets: paper, nvidia (empty: both and random)
  uint32_t mutant = 0;                     // run mutant N of the RTL (rtl/mutants/<block>/<N>.patch) instead; 0: real
};

struct verify_rtl_result {
  bool matched = true;
  nic::reorder_tracker_differential_result reorder_tracker;  // block reorder_tracker
  nic::dcqcn_rp_differential_result dcqcn_rp;                // block dcqcn_rp
  double wall_seconds = 0;
};

// "reorder_tracker, cnp_gen, dcqcn_rp".
std::string verify_rtl_blocks();

// Runs until `cycles` or the first mismatch. Throws core::config_error for an unknown block, a window the RTL
// was not compiled for (naming the compiled ones), an unknown preset, a wave file that cannot be written or a
// mutant that is not built (mutants exist for window 64 and flows 64 only).
verify_rtl_result verify_rtl(const verify_rtl_options& options);

// The success summary or the mismatch report, for the terminal.
std::string format_verify_rtl(const verify_rtl_options& options, const verify_rtl_result& result);

// cnp_gen (DCQCN notification point): the differential bench with its coverage bins, and the wall time.
struct verify_rtl_cnp_gen_result {
  nic::cnp_gen_differential_result bench;
  double wall_seconds = 0;
};

// As verify_rtl() for block "cnp_gen": throws core::config_error for a flows value the RTL was not compiled
// for (naming the compiled ones) or a wave file that cannot be written.
verify_rtl_cnp_gen_result verify_rtl_cnp_gen(const verify_rtl_options& options);

// Transactions checked, transactions per second, every coverage bin with its hits; or the mismatch report.
std::string format_verify_rtl_cnp_gen(const verify_rtl_options& options, const verify_rtl_cnp_gen_result& result);

}  // namespace fabricsim::testbench
