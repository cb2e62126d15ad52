// The differential bench of the receiver PSN reorder tracker: the Verilated RTL and the C++ reference model
// driven with identical seeded constrained-random inputs, every output port compared on every cycle. Used by
// the test suite (many seeds per compiled window) and by `fabricsim verify-rtl`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "sc_models/nic/reorder_tracker.h"

namespace fabricsim::nic {

// Functional coverage: what the stimulus made the block do, counted from its outputs. d is the offset
// (psn - head) mod 2^24 of an accepted PSN.
enum class reorder_tracker_bin : uint8_t {
  in_order,                  // d == 0: the head moves
  out_of_order,              // 0 < d < Window, not yet marked: marked
  duplicate_of_marked,       // 0 < d < Window, already marked
  duplicate_behind_head,     // d >= 2^23: behind the head, already delivered
  out_of_window,             // Window <= d < 2^23: dropped
  last_slot_of_window,       // d == Window - 1 (the farthest PSN the bitmap holds)
  first_psn_beyond_window,   // d == Window: out of window by one
  half_space_boundary,       // d == 2^23 - 1 (out of window) or d == 2^23 (duplicate)
  verdict_across_wrap,       // accepted in window with psn < head: the window straddles PSN 2^24 - 1
  head_wrap_crossed,         // the head retired PSN 2^24 - 1
  head_jump_over_one,        // an in-order arrival released stored PSNs: the head moved more than one
  window_full,               // a release of Window - 1 stored PSNs: every slot of the bitmap was marked
  back_pressure_stall,       // in_valid high while in_ready low (retiring stored PSNs)
  idle_gap,                  // a cycle with nothing presented, between arrivals
  init_with_marks_pending,   // an init while the bitmap held marks (context switch mid-stream)
  reset_mid_stream,          // cycles with rst_ni low after the first cycle (a reset pulse mid-stream)
  count_
};
inline constexpr size_t reorder_tracker_bin_count = static_cast<size_t>(reorder_tracker_bin::count_);
const char* to_string(reorder_tracker_bin bin);

struct reorder_tracker_differential_result {
  bool matched = true;
  uint64_t cycles = 0;                 // cycles run, the mismatching one included
  std::array<uint64_t, 4> verdicts{};  // results seen, indexed by psn_verdict
  uint64_t stalled_presentations = 0;  // cycles with in_valid high and in_ready low
  uint64_t head_wraps = 0;             // the head retired PSN 2^24 - 1
  uint64_t inits = 0;
  uint32_t longest_busy_cycles = 0;
  std::array<uint64_t, reorder_tracker_bin_count> coverage{};  // hits per bin, indexed by reorder_tracker_bin
  uint64_t mismatch_cycle = 0;         // set when !matched
  std::string mismatch;                // what disagreed: the inputs and both output sets

  uint64_t hits(reorder_tracker_bin bin) const { return coverage[static_cast<size_t>(bin)]; }
  bool all_bins_hit() const;
};

// Runs `cycles` clock cycles (or up to the first mismatch) of one seed's stimulus on a tracker with the given
// Window (one of reorder_tracker_rtl::compiled_windows()). Beyond step() outputs it checks peek() after every
// edge, RTL against reference, and that peek() shows what the next idle cycle shows. `wave`: an FST file of
// the RTL, ending at the mismatch, when not empty. `mutant`: run a mutated RTL (reorder_tracker_rtl::
// compiled_mutants()) instead of the real one, to show the bench catches its bug.
reorder_tracker_differential_result run_reorder_tracker_differential(uint32_t window, uint64_t cycles, uint64_t seed,
                                                                     const std::string& wave = "",
                                                                     uint32_t mutant = 0);

// The same bench on any cycle-level model with the RTL's ports and timing (a user's block,
// sc_models/nic/user_rtl_block.h), against a reference model of the model's window.
reorder_tracker_differential_result run_reorder_tracker_differential(reorder_tracker_cycle_model& rtl, uint64_t cycles,
                                                                     uint64_t seed);

}  // namespace fabricsim::nic
