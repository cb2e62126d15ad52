// One run of a scenario: elaborate the fabric, post the workload, simulate, verify memory, build the report.
// SystemC elaborates once per process, so run_scenario() is called at most once per process.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "testbench/scenario.h"
#include "testbench/taps.h"
#include "testbench/workload.h"

namespace fabricsim::core {
struct sim_context;
}
namespace fabricsim::topology {
class fabric;
}

namespace fabricsim::testbench {

struct run_options {
  std::string scenario_file;  // for the report
  // Build the fabric and post the workload, then return an empty object without simulating: every block's
  // parameter checks run, nothing else (a comparison checks all its values this way before running any).
  bool elaborate_only = false;
  // Packet captures: --tap values (testbench/taps.h), and an optional record of every captured frame.
  std::vector<std::string> taps;
  tap_log tap_frames;
  // When set, these WRITEs replace the scenario's workload (a replayed capture, testbench/replay.h).
  const std::vector<planned_flow>* workload = nullptr;
  // Progress on a terminal (testbench/progress.h): when set, the run is cut into slices of about
  // `progress_interval_s` of wall time, and a line is drawn here once the run has taken `progress_delay_s`.
  // Slicing adds no kernel event: the report is the same with and without it.
  std::ostream* progress = nullptr;
  double progress_interval_s = 0.25;
  double progress_delay_s = 2.0;
  std::string progress_label;  // a comparison's "KEY=VALUE": names the run in each collective size's line
};

// Where the phases around a run's loop (set-up, verification, report: testbench/progress.h phase_progress)
// are shown: opts.progress, except for an elaboration check and under mpirun (every rank would draw).
std::ostream* phase_stream(const run_options& opts);

// Report pieces every kind of run shares (docs/report.md): the run's identity and speed fields, and the
// `ports` array (one entry per link). Called once, after the simulation.
void add_run_header(nlohmann::json& r, const scenario& s, const run_options& opts, const core::sim_context& ctx,
                    core::picoseconds sim_end, double wall_s);
nlohmann::json link_ports_report(const topology::fabric& fab, const core::sim_context& ctx, core::picoseconds sim_end);

// Returns the JSON report (fields documented in docs/report.md). Throws core::config_error for a scenario
// that cannot be built.
nlohmann::json run_scenario(const scenario& s, const run_options& opts = {});

}  // namespace fabricsim::testbench
