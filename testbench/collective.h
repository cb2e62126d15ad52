// The collective engine: an nccl-tests style sweep (allreduce, allgather, reducescatter, alltoall, broadcast
// over ring or tree) run as a dependency graph of RDMA WRITEs between the ranks' SuperNICs. A rank posts
// the WRITE that depends on a slice the moment the slice has been placed in its memory (and reduced, at
// collective.reduce_gbps), learnt through the NIC's placed-message callback; nothing is computed from a
// bandwidth formula. Documentation: docs/collectives.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testbench/collective_params.h"

namespace fabricsim::testbench {

struct scenario;
struct run_options;

// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): allreduce 2(n-1)/n; allgather, reducescatter and
// alltoall (n-1)/n; broadcast 1.
double bus_factor(const std::string& op, uint64_t ranks);
// Bytes per element of collective.dtype: float and int32 4, half and bfloat16 2.
uint64_t dtype_bytes(const std::string& dtype);
// The sizes of the sweep: min_bytes, min_bytes * step_factor, ... while at most max_bytes.
std::vector<uint64_t> collective_sizes(const collective_params& p);
// Rank i -> host index, from collective.ranks and collective.placement. Throws core::config_error naming
// the key for a configuration that cannot run (too many ranks, sizes out of order, an algorithm the op does
// not have, SHARP without a SHARP switch, run keys a collective does not use).
std::vector<size_t> place_ranks(const scenario& s);

// One run of a `workload.kind: collective` scenario: builds the fabric, runs the sweep, verifies every
// WRITE at placement and every result against a reference computed here, and returns the JSON report
// (docs/report.md, with its `collective` object).
nlohmann::json run_collective(const scenario& s, const run_options& opts);

// The nccl-tests table of a report that has a `collective` object.
std::string format_collective_table(const nlohmann::json& report);
// The rows of a comparison ({"compare": key, "runs": [{"value", "report"}, ...]}) of collective runs: busbw per
// size, one column per value.
std::string format_collective_compare(const nlohmann::json& comparison);

}  // namespace fabricsim::testbench
