// Comparison runs: one scenario run once per value of one key, each in its own forked process (SystemC
// elaborates a design once per process), collected into one report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testbench/scenario.h"
#include "testbench/simulation.h"

namespace fabricsim::testbench {

// `--compare KEY=V1,V2,...` -> {KEY, [V1, V2, ...]}. Throws core::config_error quoting the option when it has
// no '=', an empty key, or an empty value.
compare_params parse_compare_option(const std::string& text);

// The comparison a run makes: `--compare` (`option`, when given) replaces the file's `compare:` section
// (`from_file`); without it, the file's section is dropped by `no_compare` and by a `--set` of its key (in
// `sets`, "KEY=V" each): that value then runs alone, as the --set asks. Throws core::config_error when
// --compare and --no-compare are both given.
compare_params effective_compare(const compare_params& from_file, const std::string& option,
                                 const std::vector<std::string>& sets, bool no_compare);

// Why a comparison cannot run under MPI and what to run instead (the message of the error), naming the key
// and its first value; `origin` is "--compare" or "FILE: compare".
std::string mpi_compare_advice(const compare_params& compare, const std::string& origin);

// What a forked child did: its exit code (0 done, 2 configuration error, 3 other error) or the signal that
// killed it, and what it sent back (the result, or the error message).
struct child_outcome {
  int exit_code = 0;
  int signal = 0;  // non-zero: the child was killed by this signal
  std::string output;
};

// Runs `fn` in a forked child and waits for it. A core::config_error thrown in the child gives exit code 2,
// any other exception 3, both with the message as output.
child_outcome run_forked(const std::function<std::string()>& fn);

// Runs `runs[i]` (the scenario with `compare.key` set to `compare.values[i]`) in a child each, after checking
// every value by elaborating it in a child first, so that a value a block rejects fails before any run.
// Returns {"compare": key, "runs": [{"value": v, "report": {...}}, ...]}. `origin` starts messages ("--compare"
// or "file: compare"). A child's configuration error is rethrown as core::config_error naming the key and
// value; a crash or another error as std::runtime_error naming them.
nlohmann::json run_comparison(const compare_params& compare, const std::vector<scenario>& runs,
                              const run_options& opts, const std::string& origin);

}  // namespace fabricsim::testbench
