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

class fabric_setup;

// A workload run beside the flows on hosts of its own (a job of testbench/tenants.h): the flow run sizes
// its memory, lets it wire itself once the fabric exists, leaves its hosts' completions and landings alone,
// and lets it read its results before the fabric goes.
class co_workload {
 public:
  virtual ~co_workload() = default;
  virtual const std::vector<size_t>& hosts() const = 0;
  virtual void add_memory(std::vector<uint64_t>& mem_bytes) = 0;        // before the fabric is built
  virtual void elaborate(fabric_setup& setup, bool placing) = 0;        // after it is built
  virtual void finish(fabric_setup& setup, core::picoseconds end) = 0;  // after the run
};

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
  // Workloads run beside those WRITEs, each on hosts none of them uses (testbench/tenants.h).
  std::vector<co_workload*> beside;
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
// The same for a workload of WRITEs (every kind but collective and training, and the jobs of tenants.h).
nlohmann::json run_flows(const scenario& s, const run_options& opts);

}  // namespace fabricsim::testbench
