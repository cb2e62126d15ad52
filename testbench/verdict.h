// What a run's report says about its data, read the same way by every path that ends a run: the exit status
// (`fabricsim run`, a comparison, `sweep`, the Python module, every MPI rank) and the summary line of the
// tables (docs/report.md, "How `verified` is decided" and "Exit status").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace fabricsim::testbench {

// The exit statuses of `fabricsim run` (and `replay`, `sweep`).
enum run_exit : int {
  exit_verified = 0,         // every checked byte equal to its source, and some checked; or timing only, done
  exit_not_verified = 1,     // a byte differed, an operation failed, or a run to completion did not complete
  exit_bad_input = 2,        // the scenario, a --set or an option was refused before anything ran
  exit_internal_error = 3,   // a fault of the model, not of the input
  exit_nothing_checked = 4,  // the run was to check bytes and compared none: no operation completed in time
  exit_rtl_divergence = 5,   // a lockstep block's RTL and reference model disagreed; the run stopped there
};

// The status a run's report earns (0, 1 or 4), from its top-level fields alone: `data_checked`, `verified`,
// `checked_bytes`, `mismatched_bytes`, `failed`, `completed`, `operations`, `time_limited`.
int report_status(const nlohmann::json& report);

// The worse of two statuses, for a run of several reports (a comparison, a sweep): a mismatch or failure (1)
// outranks a run that checked nothing (4), which outranks success (0); 2, 3 and 5 outrank both.
int worse_status(int a, int b);

// Why a report's status is not 0, in one line without a newline ("" when it is 0).
std::string status_reason(const nlohmann::json& report);

// The data verdict of the summary, after "data: ": "VERIFIED: 12,582,912 of 13,107,200 placed bytes checked
// byte for byte", "NOTHING CHECKED: no operation completed within run.duration_us=120; 5,242,880 bytes placed,
// 0 checked", "NOT VERIFIED: ...", or "not checked (nic.place_data is false): ... placed".
std::string data_verdict(const nlohmann::json& report);

// 12582912 -> "12,582,912".
std::string group_digits(uint64_t v);

}  // namespace fabricsim::testbench
