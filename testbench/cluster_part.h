// A cluster of NVLink domains (topology/gpu_cluster.h) cut over the MPI ranks of this run (docs/scale_out.md).
// The NVLink domain is the unit of partition: a domain's GPUs, NVLink switch chips, trays and NICs are on one
// rank (domain d on rank d x ranks / domains, in contiguous blocks), so NVLink never crosses a rank; the rails'
// leaf and spine switches are dealt as a flat fabric's are (mpi::partition: leaves in contiguous blocks,
// spines by their cables), and the rail cables that join two ranks cross with the link exchange as any link.
// Every rank computes the same partition from the scenario. In one process: the whole cluster, as before.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sc_models/core/sim_context.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/topology/gpu_cluster.h"
#include "testbench/scale_out.h"

namespace fabricsim::testbench {

struct scenario;

// Per rank, the hosts (GPUs' NICs, by name) of its NVLink domains, after the switches the scenario's
// `partition` names for it. config_error naming partition when that names a host (a GPU's NIC goes with its
// domain). One rank: nothing.
std::vector<std::vector<std::string>> cluster_placement(const scenario& s, int ranks);

class cluster_part {
 public:
  // Builds this rank's part of the cluster (`hbm_bytes` of HBM per GPU, `nic` for every GPU's SuperNIC) and
  // attaches the crossing rail links; `ship_payload`: payload bytes travel with frames between ranks.
  cluster_part(const scenario& s, core::sim_context& ctx, uint64_t hbm_bytes, const nic::supernic_params& nic,
               bool ship_payload);
  cluster_part(const cluster_part&) = delete;
  cluster_part& operator=(const cluster_part&) = delete;

  scale_out so;
  topology::gpu_cluster cl;

 private:
  scale_out::attachment m_attached;  // after the cluster: released before its links go
};

}  // namespace fabricsim::testbench
