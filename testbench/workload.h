// Workload planning: the RDMA WRITEs a scenario posts, from its `writes` list or a generated pattern
// (permutation, all-to-all, incast, a CSV flow list). Pure C++, decided before the fabric is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sc_models/core/units.h"
#include "sc_models/nic/supernic.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

// One operation of the workload: requester, responder (host indices), size, post time and operation (a
// READ moves the responder's bytes to the requester; a SEND needs a receive posted at the responder).
struct planned_flow {
  size_t src = 0, dst = 0;
  uint64_t bytes = 0;
  core::picoseconds post_at{};
  nic::rdma_op op = nic::rdma_op::write;
  // Flows of one (src, dst) pair share a queue pair when their groups are equal (all 0 by default); with
  // workload.queue_pairs per_flow every flow has its own group, so none waits behind another on its QP, and a
  // replayed capture gives each captured queue pair its own group (testbench/replay.h).
  uint64_t qp_group = 0;
};

// "write", "write_imm", "read", "send", "send_imm" -> the operation; std::nullopt for anything else.
std::optional<nic::rdma_op> parse_rdma_op(const std::string& name);

// The WRITEs of `s` in id order (a flow's index is its work-request id). Throws core::config_error naming
// the scenario file and key for a workload that cannot be planned: an unknown host, src == dst, no valid
// permutation, too many incast senders, a bad flow file, or no operation at all.
std::vector<planned_flow> plan_workload(const scenario& s);

// The WRITEs of one job of `s.jobs` (testbench/jobs.h), its pattern planned on its own hosts (a permutation
// among them, an incast onto one of them, generated flows between them), in fabric host indices. Messages
// name the job as "FILE: jobs.N: workload.KEY".
std::vector<planned_flow> plan_job_workload(const scenario& s, const job_params& job);

// workload.kind permutation, pattern random: dst[i] is host i's destination. Every host sends to one
// other host and receives from one; when the fabric has more than one leaf, every destination is behind
// another leaf. Deterministic for a seed (stream "workload"/"permutation"). Throws core::config_error
// (prefixed by `where`) when no such permutation exists: fewer than two hosts, or a leaf holding more than
// half of them.
std::vector<size_t> random_permutation(const topology::topology_params& topo, uint64_t seed,
                                       const std::string& where);
// The same over hosts behind leaves `leaf` (host i behind leaf[i]): a job's hosts, say.
std::vector<size_t> random_permutation_of(const std::vector<size_t>& leaf, uint64_t seed, const std::string& where);

// `path` as given in the scenario `source`: absolute paths stay, relative ones resolve against the
// directory of the scenario file (the working directory for a scenario without a file).
std::string resolve_scenario_path(const std::string& source, const std::string& path);

}  // namespace fabricsim::testbench
