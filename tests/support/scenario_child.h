// Runs a scenario given as YAML text in a forked child (SystemC elaborates once per process) and returns
// its JSON report, or an empty object after recording a test failure with what the child said.
#pragma once

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {

inline nlohmann::json run_scenario_yaml(const std::string& yaml) {
  const child_result r = run_in_child(
      [&] { return testbench::run_scenario(testbench::load_scenario_text(yaml, "t.yaml")).dump(); });
  if (!r.ok) {
    ADD_FAILURE() << r.output;
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(r.output);
}

// A permutation run in which `host`'s cable died for good: the one WRITE from it and the one to it end in
// retry_exceeded, every other flow completes byte-exact.
inline void expect_only_flows_of_dead_host_fail(const nlohmann::json& r, const std::string& host) {
  ASSERT_TRUE(r.contains("flows"));
  uint64_t touching = 0;
  for (const nlohmann::json& f : r["flows"]) {
    if (f["src"] == host || f["dst"] == host) {
      ++touching;
      EXPECT_EQ(f["status"], "retry_exceeded") << f.dump();
    } else {
      EXPECT_EQ(f["status"], "success") << f.dump();
      EXPECT_TRUE(f["verified"].get<bool>()) << f.dump();
      EXPECT_EQ(f["mismatched_bytes"].get<uint64_t>(), 0u);
    }
  }
  EXPECT_EQ(touching, 2u);  // a permutation: the host sends once and receives once
}

}  // namespace fabricsim::test
