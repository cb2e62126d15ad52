// The congestion figures of a flow run's report (docs/report.md, `fabric`): per-sender goodput and
// fairness, convergence, the bottleneck port, PFC pauses and their timeline, InfiniBand credit stalls, and
// the per-QP time series. Read from the statistics registry (counters and probes), never from a device.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "sc_models/core/sim_context.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/topology/fabric.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

// One sending queue pair: the (src, dst) pair of hosts its WRITEs go between.
struct sender_qp {
  size_t src = 0, dst = 0;
  uint32_t sq = 0, rq = 0;                   // requester QPN at src, responder QPN at dst
  core::picoseconds first_post{UINT64_MAX};  // its first work request becomes visible
  uint64_t placed_at_window_start = 0;
  uint64_t placed_at_end = 0;  // responder's placed bytes after the run (from the responder's rank under mpirun)
};

// One sample of one sending QP (a row of the time-series CSV, docs/report.md).
struct qp_sample {
  core::picoseconds t;
  size_t sender;  // index into the sender_qp list
  bool active;    // posted and not yet complete
  nic::qp_status st;
  uint64_t dst_port_queue_bytes, max_queue_bytes;
  double goodput_mbps;  // payload placed since the previous sample, over the sample period
};

// The name of the port of `host`'s leaf towards it, from the leaf's `egress_ports` probe: null where this
// process did not build the leaf or the leaf registers no such probe (a switch without a PFC pipeline).
// `records`, when given, keeps each leaf's probe record (a JSON of every port) for the next call: one per
// leaf, not one per host (at 4,096 NICs, one per sender was 7 % of the set-up's CPU).
nlohmann::json leaf_port_towards(const core::sim_context& ctx, topology::fabric& fab, size_t host,
                                 std::map<size_t, nlohmann::json>* records = nullptr);

// Adds the congestion figures to the report's `fabric` object `j`: goodput per sender and Jain's index over
// the window, the bottleneck (whose queue integral over the window is the difference of the two readings),
// PFC pauses by port, switch and hop with their timeline, credit stalls, CNPs and the convergence times
// over `samples` (`convergence_samples` periods for the fair share). The CNP counts are the registry's counter totals.
void congestion_figures(nlohmann::json& j, core::sim_context& ctx, topology::fabric& fab, scale_out& so,
                        const std::vector<sender_qp>& senders, const std::vector<qp_sample>& samples,
                        core::picoseconds window_start, core::picoseconds window_end,
                        double queue_byte_ps_at_window_start, double queue_byte_ps_at_window_end,
                        size_t convergence_samples);

// Under mpirun: the rows samples[first ..] as every rank took them, merged so that every rank holds the
// one-process rows.
void merge_samples(scale_out& so, std::vector<qp_sample>& samples, size_t first);

// run.timeseries_csv (docs/report.md): one row per sample and sending QP, written by rank 0.
void write_timeseries_csv(const scenario& s, scale_out& so, topology::fabric& fab,
                          const std::vector<sender_qp>& senders, const std::vector<qp_sample>& samples);

// A run-wide latency histogram (core::fine_histogram, in ps) as the report's object in ns: count, mean, p50,
// p90, p99, p999 (each an upper bound within 3.1 % of the true quantile: docs/report.md) and max; null
// fields when nothing was counted.
nlohmann::json latency_summary_ns(const core::fine_histogram& h);

}  // namespace fabricsim::testbench
