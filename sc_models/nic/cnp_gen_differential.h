// The differential bench of the DCQCN notification point: the Verilated RTL and the C++ reference model driven
// with identical seeded constrained-random inputs, every output port compared on every cycle, with named
// functional-coverage bins. Used by the test suite and by `fabricsim verify-rtl --block cnp_gen`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "sc_models/nic/cnp_gen.h"

namespace fabricsim::nic {

// Functional coverage: what the stimulus made the block do, counted from the results it gave.
enum class cnp_gen_bin : uint8_t {
  first_cnp_of_flow,              // per-flow: the context had sent no CNP since init, and one is emitted
  suppressed_within_interval,     // per-flow: an arrival less than the interval after the context's CNP
  suppressed_one_before_boundary, // elapsed == interval - 1: still suppressed
  emitted_at_boundary,            // elapsed == interval exactly (interval > 0): emitted
  emitted_after_interval,         // elapsed > interval: emitted
  time_wrap_crossed,              // decided across the wrap of the 32-bit time field (now < last CNP time)
  flow_aliasing,                  // per-flow: suppressed by the CNP of another QPN with the same context
  per_port_first_cnp,             // per-port: the port's first CNP since init
  per_port_suppression,           // per-port: suppressed by the CNP of another QPN
  zero_interval_back_to_back,     // interval 0: an arrival under 4 cycles after the context's CNP still emits
  storm_on_one_flow,              // 16 or more arrivals of one QPN accepted back to back
  back_pressure_stall,            // in_valid high while in_ready low (table clear)
  idle_gap,                       // a cycle with nothing presented between two arrivals
  init_mid_run,                   // an init after the first one
  reset_mid_run,                  // rst_ni pulsed after the first cycle
  count_
};
inline constexpr size_t cnp_gen_bin_count = static_cast<size_t>(cnp_gen_bin::count_);
const char* to_string(cnp_gen_bin bin);

struct cnp_gen_differential_result {
  bool matched = true;
  uint64_t seed = 0;
  uint64_t cycles = 0;        // cycles run, the mismatching one included
  uint64_t transactions = 0;  // accepted arrivals whose result both models gave and agreed on
  uint64_t emitted = 0;       // of those, CNPs emitted
  std::array<uint64_t, cnp_gen_bin_count> coverage{};  // hits per bin, indexed by cnp_gen_bin
  uint64_t mismatch_cycle = 0;  // set when !matched
  std::string mismatch;         // which signals disagreed (expected = ref, got = rtl), the inputs, both output sets

  uint64_t hits(cnp_gen_bin bin) const { return coverage[static_cast<size_t>(bin)]; }
  bool all_bins_hit() const;
};

// Runs `cycles` clock cycles (or up to the first mismatch) of one seed's stimulus on a generator with `flows`
// contexts (one of cnp_gen_rtl::compiled_flows()). Beyond step() outputs it checks peek() after every edge,
// RTL against reference. `wave`: an FST file of the RTL, ending at the mismatch, when not empty.
// `mutant`: run a mutated RTL (cnp_gen_rtl::compiled_mutants()) instead of the real one.
cnp_gen_differential_result run_cnp_gen_differential(uint32_t flows, uint64_t cycles, uint64_t seed,
                                                     const std::string& wave = "", uint32_t mutant = 0);

// The same bench on any cycle-level model with the RTL's ports and timing (a user's block,
// sc_models/nic/user_rtl_block.h), against a reference model of the model's flow count.
cnp_gen_differential_result run_cnp_gen_differential(cnp_gen_cycle_model& rtl, uint64_t cycles, uint64_t seed);

}  // namespace fabricsim::nic
