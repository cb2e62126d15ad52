// The human-readable form of a run's JSON report: a summary, the flows and the busiest links.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fabricsim::testbench {

std::string format_table(const nlohmann::json& report, size_t max_rows = 20);

}  // namespace fabricsim::testbench
