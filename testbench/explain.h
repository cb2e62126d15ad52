// What users see before running: the shipped scenarios with a line each (`fabricsim list-scenarios`), and a
// scenario's resolved parameters with units and where each value came from (`fabricsim explain`).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "testbench/config_yaml.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

// One scenario of testbench/scenarios, embedded in the binary at build time.
struct shipped_scenario {
  std::string file;         // "incast_dcqcn.yaml"
  std::string name;         // its `name:` (the file's stem when it has none)
  std::string description;  // its `description:`, else the first line of its header comment
  std::string text;         // the YAML
};

// Every shipped scenario, in file-name order.
std::vector<shipped_scenario> shipped_scenarios();

// One line per scenario: "  file  description", with the directory they live in.
std::string format_scenario_list(const std::vector<shipped_scenario>& list);

// Loads `path_or_name`: a file when one exists at that path, else the shipped scenario of that file name or
// name ("incast_dcqcn", "incast_dcqcn.yaml"). Throws core::config_error naming the shipped ones when neither.
scenario load_scenario_by_name(const std::string& path_or_name, const std::vector<std::string>& overrides = {});

// Every resolved key of `s` (sections, per-host NIC overrides, writes), one line each: key, value, unit and
// where it came from: "file:line", "--set key=value" or "default" (scenario::key_sources).
std::string explain_scenario(const scenario& s);

// `fabricsim export-topology`: writes the fabric `s` would build (a built-in topology.kind or a graph file)
// as GraphML in the schema topology.kind graph reads (docs/topology.md), to `out_path` ("-": stdout). A run
// with topology.kind graph and topology.file naming the written file builds the same fabric. Returns a line
// saying what was written (switches, hosts, cables). Throws core::config_error naming the file when it
// cannot be written.
std::string export_topology(const scenario& s, const std::string& out_path);

// The top-level keys ("" section) and every plain section of `s` with a visitor of its fields; defined in
// scenario.cpp, which owns the section list.
std::vector<std::pair<std::string, visit_fn>> scenario_sections(scenario& s);

}  // namespace fabricsim::testbench
