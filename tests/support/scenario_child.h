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

}  // namespace fabricsim::test
