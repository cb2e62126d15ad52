// A `workload.kind: collective` run on `topology.kind: nvl72`: an nccl-tests style allreduce sweep inside the
// NVLink domains (testbench/nvlink_collective.h), with the report of every collective run (docs/report.md)
// plus an `nvlink` object: the domain, the link bound and what the credits saw (docs/systems.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sc_models/nvlink/nvlink_params.h"

namespace fabricsim::testbench {

struct scenario;
struct run_options;

nlohmann::json run_nvlink_collective(const scenario& s, const run_options& opts);

// The hand bounds of an allreduce inside a domain of n GPUs (docs/systems.md): per GPU, B = links x link
// rate x flit efficiency of a full packet (GB/s). Ring: every GPU sends 2(n-1)/n of the buffer over its
// links, so busbw <= B. NVLS: every GPU sends the buffer once and receives it once, so algbw <= B and busbw
// <= 2(n-1)/n x B.
double nvlink_ring_busbw_bound(const nvlink::nvlink_params& p);
double nvls_busbw_bound(const nvlink::nvlink_params& p);

// One line on the NVLink domain, for the header of a collective run.
std::string nvlink_fabric_line(const nvlink::nvlink_params& p);

}  // namespace fabricsim::testbench
