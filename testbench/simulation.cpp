// One run of a scenario: the workload kind chooses the runner; the report header and the link rows they share.
#include "testbench/simulation.h"

#include "sc_models/core/sim_context.h"
#include "sc_models/mpi/mpi_world.h"
#include "sc_models/topology/fabric.h"
#include "testbench/cluster_run.h"
#include "testbench/collective.h"
#include "testbench/nvlink_run.h"
#include "testbench/scale_out.h"
#include "testbench/tenants.h"
#include "testbench/training_run.h"

namespace fabricsim::testbench {

using core::picoseconds;

void add_run_header(nlohmann::json& r, const scenario& s, const run_options& opts, const core::sim_context& ctx,
                    picoseconds sim_end, double wall_s) {
  r["scenario"] = s.name;
  r["description"] = s.description;
  r["scenario_file"] = opts.scenario_file;
  r["seed"] = s.seed;
  r["simulated_time_ns"] = sim_end.ns();
  r["wall_time_s"] = wall_s;
  r["events"] = ctx.events;
  r["packet_hops"] = ctx.packet_hops;
  r["packet_hops_per_s"] = wall_s > 0 ? double(ctx.packet_hops) / wall_s : 0.0;
  r["events_per_packet_hop"] = ctx.packet_hops ? double(ctx.events) / double(ctx.packet_hops) : 0.0;
}

nlohmann::json link_ports_report(const topology::fabric& fab, const core::sim_context& ctx, picoseconds sim_end) {
  // From the link's registered counters, which a scale-out run has merged over its processes (a process
  // need not have built the link).
  nlohmann::json ports = nlohmann::json::array();
  for (size_t k = 0; k < fab.layout().links(); ++k) {
    const std::string name = fab.layout().link_name(k);
    auto count = [&](const char* what) { return ctx.stats.counter_value(name, what); };
    ports.push_back({{"link", name},
                     {"packets", count("packets")},
                     {"wire_bytes", count("wire_bytes")},
                     {"dropped_injected", count("dropped_injected")},
                     {"fault_lost", count("fault_lost")},
                     {"fcs_errors", count("fcs_errors")},
                     {"utilization", sim_end.value ? double(count("busy_ps")) / double(sim_end.value) : 0.0}});
  }
  return ports;
}

std::ostream* phase_stream(const run_options& opts) {
  return opts.elaborate_only || mpi::launched_as_rank() ? nullptr : opts.progress;
}

nlohmann::json run_scenario(const scenario& s, const run_options& opts) {
  check_scale_out_supported(s, opts);  // under mpirun: what is not cut across processes yet fails here
  if (runs_in_nvlink_domains(s)) return run_nvlink_collective(s, opts);  // the NVLink domains (docs/systems.md)
  if (s.workload.kind == "collective" && s.collective.algo == "hierarchical")
    return run_hierarchical_allreduce(s, opts);  // NVLink domains and their rails (docs/systems.md)
  if (s.workload.kind == "collective") return run_collective(s, opts);  // its WRITEs are posted as the run goes
  if (s.workload.kind == "training") {
    if (!s.faults.empty())
      throw core::config_error(s.source + ": faults: not supported with workload.kind training (docs/faults.md)");
    return run_training(s, opts);  // one step's task graph, its collectives posted as the run goes
  }
  if (!s.jobs.empty() && opts.beside.empty() && !opts.workload) return run_tenants(s, opts);  // tenants.h
  return run_flows(s, opts);
}

}  // namespace fabricsim::testbench
