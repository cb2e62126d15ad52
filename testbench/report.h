// The human-readable form of a run's JSON report: a summary, the flows and the busiest links; and of a
// comparison's, one row per value.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fabricsim::testbench {

std::string format_table(const nlohmann::json& report, size_t max_rows = 20);

// A comparison ({"compare": key, "runs": [{"value", "report"}, ...]}): one row per value with the fabric
// figures, completions and speed.
std::string format_compare_table(const nlohmann::json& comparison);

}  // namespace fabricsim::testbench
