// `fabricsim verify-rtl`: a Verilated RTL block against its C++ reference model, cycle by cycle, under
// seeded constrained-random stimulus.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace fabricsim::testbench {

struct verify_rtl_options {
  std::string block = "reorder_tracker";  // RTL block to verify (verify_rtl_blocks())
  uint32_t window = 256;                   // reorder_tracker Window parameter, in PSNs
  uint64_t cycles = 100000;                // clock cycles to run
  uint64_t seed = 1;                       // seed of the stimulus generator
  std::string wave;                        // FST waveform of the RTL, if not empty
};

struct verify_rtl_result {
  bool matched = true;
  uint64_t cycles = 0;                 // cycles run, including the mismatching one
  std::array<uint64_t, 4> verdicts{};  // results seen, indexed by nic::psn_verdict
  uint64_t stalled_presentations = 0;  // cycles with in_valid high and in_ready low
  uint64_t head_wraps = 0;             // the head retired PSN 2^24 - 1
  uint64_t inits = 0;
  uint32_t longest_busy_cycles = 0;
  // Set on a mismatch.
  uint64_t mismatch_cycle = 0;
  std::string mismatch;  // what disagreed, inputs and both output sets
};

// "reorder_tracker", comma-separated.
std::string verify_rtl_blocks();

// Runs until `cycles` or the first mismatch. Throws core::config_error for an unknown block, a window the RTL
// was not compiled for (naming the compiled ones) or a wave file that cannot be written.
verify_rtl_result verify_rtl(const verify_rtl_options& options);

// The success summary or the mismatch report, for the terminal.
std::string format_verify_rtl(const verify_rtl_options& options, const verify_rtl_result& result);

}  // namespace fabricsim::testbench
