// The terminal layout of a collective run's report: nccl-tests' table with the SHARP tree and the data
// verdict, and the busbw rows of a comparison of collective runs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace fabricsim::testbench {

// The nccl-tests table of a report that has a `collective` object.
std::string format_collective_table(const nlohmann::json& report);
// The rows of a comparison ({"compare": key, "runs": [{"value", "report"}, ...]}) of collective runs: busbw per
// size, one column per value.
std::string format_collective_compare(const nlohmann::json& comparison);

}  // namespace fabricsim::testbench
