// `fabricsim verify-rtl`: a Verilated RTL block against its C++ reference model under seeded
// constrained-random stimulus (cycle by cycle for the reorder tracker, transaction by transaction for the
// DCQCN reaction point).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sc_models/nic/cnp_gen_differential.h"
#include "sc_models/nic/dcqcn_rp_differential.h"
#include "sc_models/nic/reorder_tracker_differential.h"
#include "testbench/user_rtl.h"

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
  // A user's block instead of the shipped RTL (docs/rtl_contract.md), compiled at run time.
  std::string rtl;                  // its SystemVerilog file; empty: the shipped block
  std::string top;                  // its top module; empty: the block's name
  std::vector<std::string> params;  // NAME=VALUE parameter overrides; Window defaults to --window
  std::string rtl_cache;            // compile cache folder; empty: default_user_rtl_cache()
};

struct verify_rtl_result {
  bool matched = true;
  nic::reorder_tracker_differential_result reorder_tracker;  // block reorder_tracker
  nic::dcqcn_rp_differential_result dcqcn_rp;                // block dcqcn_rp
  double wall_seconds = 0;
};

// "reorder_tracker, cnp_gen, dcqcn_rp".
std::string verify_rtl_blocks();

// core::config_error for a --preset given with another block than dcqcn_rp, or not one of paper, nvidia,
// fabric_400g (empty: every set, the bench's default).
void check_verify_rtl_preset(const verify_rtl_options& options);

// A user-RTL build's --param list completed with the block's size from the options (reorder_tracker: Window
// from --window; cnp_gen: Flows from --flows and TimeWidth 32), each only when the user did not give it:
// what verify_user_rtl and the mutation run (rtl_mutate.cpp) elaborate the block with.
void add_default_size_params(const verify_rtl_options& options, std::vector<std::string>& params);

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

// A user's block (options.rtl) against the reference model: compiled (or found in the cache), then the same
// bench as the shipped block's. On a mismatch without --wave the failing seed is run again up to the
// mismatch with tracing on, into `wave` (<top>_mismatch_seed<S>.fst in the current folder).
struct verify_user_rtl_result {
  user_rtl_build build;
  bool matched = true;
  verify_rtl_result run;              // blocks reorder_tracker and dcqcn_rp
  verify_rtl_cnp_gen_result cnp_gen;  // block cnp_gen
  uint32_t size = 0;  // the Window (reorder_tracker) or Flows (cnp_gen) it was elaborated with; dcqcn_rp: 0
  std::string wave;   // the waveform written, if any
};

// Throws core::config_error for a block without a contract, --mutant with --rtl, a --preset that is not
// one of dcqcn_rp's, and everything
// build_user_rtl() refuses (a contract violation names the port, expected and found).
verify_user_rtl_result verify_user_rtl(const verify_rtl_options& options);

std::string format_verify_user_rtl(const verify_rtl_options& options, const verify_user_rtl_result& result);

}  // namespace fabricsim::testbench
