// Flow completion time (FCT) slowdown: every completed flow's FCT over its ideal FCT (the same WRITE alone
// on the idle fabric), summarised per flow-size bucket in the report's `fct` object (docs/report.md).
// Pure C++ over the scenario's parameters and the report's `flows` array: the simulation is not touched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testbench/scenario.h"

namespace fabricsim::testbench {

// The links a packet crosses from host `src` to host `dst` (never equal), in order: the host link, then the
// leaf-spine (and spine-core) links, then the destination's host link. Same leaf: two links. For the tiered
// kinds only: a graph or dragonfly fabric's path comes from its wiring (the fewest hops).
std::vector<topology::tier> path_tiers(const topology::topology_params& topo, size_t src, size_t dst);

// The ideal FCT in ns of a `bytes` RDMA WRITE from `src` to `dst` alone on the idle fabric of `s`: the
// requester's work-request latency, every packet (headers included) through every link and switch by the
// switch's rules (pipeline, cut-through when the egress is idle, store-and-forward behind a busy one), the
// responder's ACK coalescing and receive latency, and the ACK's way back. The formula: docs/report.md; the
// model matches it to the picosecond for a flow alone (tests/testbench/fct_report_test.cpp). On an
// InfiniBand fabric (switch.model quantum_x800) packets are framed as the HCAs frame them (LRH, BTH, ICRC,
// VCRC, no preamble or gap) and every switch takes quantum.pipeline_ns and cuts through after the LRH and
// BTH; credits are taken to be no limit for a flow alone (true while quantum.vl_buffer_bytes covers a
// link's credit round trip, as at the defaults).
// `posted_ns`: when the WRITE was posted; the responder's reorder block runs on a clock whose edges are
// fixed in absolute time (nic.clock_mhz), so the ideal depends on it by less than a cycle.
double ideal_fct_ns(const scenario& s, size_t src, size_t dst, uint64_t bytes, double posted_ns = 0.0);

// The size buckets of the `fct` object: upper bounds in bytes (inclusive), the last open-ended.
const std::vector<uint64_t>& fct_bucket_bounds();

// Adds `ideal_fct_ns` and `slowdown` to every completed flow of report["flows"] and sets report["fct"]:
// per size bucket and overall, the flows, completed flows, slowdown p50/p95/p99/mean/max and mean FCT.
void add_fct_report(const scenario& s, nlohmann::json& report);

// The `fct` object as a plain-text table (one row per bucket, then overall); empty when the report has no
// `fct` or fewer than `min_completed` completed flows (a handful of flows says little per bucket).
std::string format_fct_table(const nlohmann::json& report, uint64_t min_completed = 20);

}  // namespace fabricsim::testbench
