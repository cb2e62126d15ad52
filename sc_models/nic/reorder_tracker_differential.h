// The differential bench of the receiver PSN reorder tracker: the Verilated RTL and the C++ reference model
// driven with identical seeded constrained-random inputs, every output port compared on every cycle. Used by
// the test suite (many seeds per compiled window) and by `fabricsim verify-rtl`.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace fabricsim::nic {

struct reorder_tracker_differential_result {
  bool matched = true;
  uint64_t cycles = 0;                 // cycles run, the mismatching one included
  std::array<uint64_t, 4> verdicts{};  // results seen, indexed by psn_verdict
  uint64_t stalled_presentations = 0;  // cycles with in_valid high and in_ready low
  uint64_t head_wraps = 0;             // the head retired PSN 2^24 - 1
  uint64_t inits = 0;
  uint32_t longest_busy_cycles = 0;
  uint64_t mismatch_cycle = 0;         // set when !matched
  std::string mismatch;                // what disagreed: the inputs and both output sets
};

// Runs `cycles` clock cycles (or up to the first mismatch) of one seed's stimulus on a tracker with the given
// Window (one of reorder_tracker_rtl::compiled_windows()). Beyond step() outputs it checks peek() after every
// edge, RTL against reference, and that peek() shows what the next idle cycle shows. `wave`: an FST file of
// the RTL, ending at the mismatch, when not empty. `mutant`: run a mutated RTL (reorder_tracker_rtl::
// compiled_mutants()) instead of the real one, to show the bench catches its bug.
reorder_tracker_differential_result run_reorder_tracker_differential(uint32_t window, uint64_t cycles, uint64_t seed,
                                                                     const std::string& wave = "",
                                                                     uint32_t mutant = 0);

}  // namespace fabricsim::nic
