// The collective engine: an nccl-tests style sweep (allreduce, allgather, reducescatter, alltoall, broadcast
// over ring or tree) run as a dependency graph of RDMA WRITEs between the ranks' SuperNICs. A rank posts
// the WRITE that depends on a slice the moment the slice has been placed in its memory (and reduced, at
// collective.reduce_gbps), learnt through the NIC's placed-message callback; nothing is computed from a
// bandwidth formula. Documentation: docs/collectives.md. This header also gives the op arithmetic, the rank
// placement and the report's layout (collective_ops.h, collective_placement.h, collective_report.h); the
// schedule, the engine and the SHARP path are collective_schedule.h, collective_engine.h, collective_sharp.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testbench/collective_ops.h"
#include "testbench/collective_params.h"
#include "testbench/collective_placement.h"
#include "testbench/collective_report.h"

namespace fabricsim::topology {
class fabric;
}

namespace fabricsim::testbench {

struct scenario;
struct run_options;
class collective_engine;

// One run of a `workload.kind: collective` scenario: builds the fabric, runs the sweep, verifies every
// WRITE at placement and every result against a reference computed here, and returns the JSON report
// (docs/report.md, with its `collective` object).
nlohmann::json run_collective(const scenario& s, const run_options& opts);

// The `collective` object of an engine that ran on `fab` in this process beside other work (a job of
// testbench/tenants.h), with its checked and mismatched bytes, failed WRITEs and `verified`.
nlohmann::json collective_job_report(const scenario& s, collective_engine& eng, topology::fabric& fab,
                                     const std::vector<size_t>& rank_host, bool checked);

}  // namespace fabricsim::testbench
