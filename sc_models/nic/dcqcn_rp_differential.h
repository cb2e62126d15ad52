// The differential bench of the DCQCN reaction point: the Verilated RTL and the C++ reference model driven
// with identical seeded constrained-random transactions (CNP storms, long idle gaps, byte-counter and
// timer races, rate at floor and at line rate, both presets and random parameter sets), every output
// compared after every transaction, with functional coverage. Used by the tests and `fabricsim verify-rtl`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim::nic {

class dcqcn_rp_rtl;
struct dcqcn_params;

struct dcqcn_rp_differential_options {
  uint64_t cycles = 100000;       // stop once the RTL has run this many clock cycles
  uint64_t transactions = 0;      // or this many transactions (0: no limit)
  uint64_t seed = 1;
  std::string preset = "mixed";   // parameter sets: "paper", "nvidia", "random" or "mixed" (all three)
  std::string wave;               // FST waveform of the RTL, ending at the mismatch, when not empty
  uint32_t mutant = 0;            // a mutated RTL (dcqcn_rp_rtl::compiled_mutants()) instead of the real one
};

struct dcqcn_rp_differential_result {
  bool matched = true;
  uint64_t transactions = 0;    // transactions compared, the mismatching one included
  uint64_t rtl_cycles = 0;      // clock cycles the RTL ran
  uint64_t parameter_sets = 0;  // resets with a new parameter set
  uint64_t simulated_cycles = 0;  // span of the time input
  std::vector<std::pair<std::string, uint64_t>> coverage;  // named bins and their hit counts, fixed order
  // Set when !matched: the time (cycle count) of the transaction, the first output that differs, the
  // reference value (expected) and the RTL value (got), and a description of the transaction and state.
  uint64_t mismatch_cycle = 0;
  std::string mismatch_signal;
  std::string expected;
  std::string got;
  std::string mismatch;
};

// Throws core::config_error for an unknown preset.
dcqcn_rp_differential_result run_dcqcn_rp_differential(const dcqcn_rp_differential_options& options);

// The block under test, built from the first transaction (a reset: its parameters and time) and tracing to
// `wave` when that is not empty: the shipped RTL, a mutant, or a user's block (make_dcqcn_rp_user).
using dcqcn_rp_dut_factory = std::function<std::unique_ptr<dcqcn_rp_rtl>(const dcqcn_params& params,
                                                                         uint64_t now_cycles, const std::string& wave)>;
// The same bench on the block `make` builds (options.mutant is not used).
dcqcn_rp_differential_result run_dcqcn_rp_differential(const dcqcn_rp_differential_options& options,
                                                       const dcqcn_rp_dut_factory& make);

// The names of the coverage bins, in the order the result lists them.
const std::vector<std::string>& dcqcn_rp_coverage_bins();

}  // namespace fabricsim::nic
