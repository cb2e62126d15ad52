// Tenants: several jobs (testbench/jobs.h) run at once on one fabric, in one simulation, each on its own
// hosts: a collective's WRITEs (the collective engine, run beside the flows) and the flows' WRITEs share the
// switches' queues, routing, PFC and congestion control. Each job is then run alone on the same fabric with
// the same seed (the others removed), each run in a forked process (SystemC elaborates once per process),
// and the report gives each job's figures, alone and shared, and its slowdown (docs/workloads.md,
// "Tenants"; the `jobs` object of docs/report.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "testbench/scenario.h"
#include "testbench/simulation.h"

namespace fabricsim::testbench {

// The shared run's report (every job's flows, the fabric's counters) with `jobs`: per job its kind, hosts,
// headline figure (job_time_us: from its first post to its last completion) alone and shared and the slowdown, and its
// figures from each run. `verified` holds when every job's bytes were checked and right in the shared run (a
// training job's WRITEs carry no checked data: it holds for one when its step completed). An
// elaboration check (opts.elaborate_only) builds the shared run in this process and returns an empty object. Throws
// core::config_error naming the job for a workload that cannot be planned, and for a run under mpirun.
nlohmann::json run_tenants(const scenario& s, const run_options& opts);

// One simulation of `s`'s jobs, all at once, in this process: the report of run_flows with `jobs` holding
// each job's figures (job_figures). run_tenants runs it once with every job and once per job alone.
nlohmann::json run_jobs_once(const scenario& s, const run_options& opts);

// The terminal table of a tenants report: job, kind, hosts, figure alone, shared, slowdown.
std::string format_jobs_table(const nlohmann::json& report);

// Slowdown of a job from its headline figure alone and shared: for a figure where more is better (a
// collective's bus bandwidth) alone / shared, else shared / alone (a mean flow completion time).
double job_slowdown(const std::string& figure, double alone, double shared);

}  // namespace fabricsim::testbench
