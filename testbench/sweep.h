// `fabricsim sweep`: one scenario over the cross product of several keys' values, each point in its own
// forked process (SystemC elaborates once per process), several at a time, with one headline row per point
// in a CSV and a JSON file. A point's row is written when it finishes, so an interrupted sweep resumes where
// it stopped: points whose row file is complete are not run again.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testbench/scenario.h"

namespace CLI {
class App;
}

namespace fabricsim::testbench {

// One --grid KEY=V1,V2,...
struct grid_axis {
  std::string key;
  std::vector<std::string> values;
};

struct sweep_options {
  std::string scenario;            // file or shipped name
  std::vector<std::string> sets;   // --set, applied before every point's grid values
  std::vector<std::string> grids;  // --grid KEY=V1,V2,... (repeatable)
  unsigned jobs = 1;               // points run at once
  std::string out_dir = "sweep";   // DIR/points/*.json, DIR/sweep.csv, DIR/sweep.json
  bool quiet = false;
};

// Adds the `sweep` subcommand, filling `opts`.
CLI::App* add_sweep_command(CLI::App& app, sweep_options& opts);

// "--grid KEY=V1,V2": throws core::config_error quoting the option without '=', with an empty key or value.
grid_axis parse_grid_option(const std::string& text);

// Every point of the grid, first axis slowest: each a list of "KEY=VALUE" assignments.
std::vector<std::vector<std::string>> grid_points(const std::vector<grid_axis>& axes);

// The headline figures of one report (a run's or a collective's), the columns of sweep.csv after the keys;
// headline_columns() ends with the fabric's leaf_oversubscription and bisection_gbps (testbench/run_summary.h),
// which a point's row adds from its scenario.
nlohmann::json headline_of(const nlohmann::json& report);
const std::vector<std::string>& headline_columns();

// Loads and checks every point (an unknown key or a bad value is refused before anything runs, naming the
// key), builds every point not already complete in DIR in a child (what a block refuses stops the sweep
// before any run), then runs them, `jobs` at a time, and writes DIR/sweep.csv and DIR/sweep.json. Returns the exit
// status: 0 when every point ran and its run status is 0, 1 otherwise.
int run_sweep(const sweep_options& opts);

}  // namespace fabricsim::testbench
