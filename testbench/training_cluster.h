// The `cluster` comm_backend (training.comm_backend cluster, the default on a system preset): a training
// step's collectives on the GPUs of a cluster of NVLink domains (topology/gpu_cluster.h), as NCCL runs them.
// GPU rank r is GPU r of the cluster: GPU r mod G of domain r / G (G = nvlink.gpus_per_domain).
//   - a transfer between two GPUs of one domain goes over NVLink (the source GPU's copy engine, striped over
//     its links); between domains it is an RDMA WRITE from the source GPU's SuperNIC, read from its HBM and
//     placed into the peer's HBM through the trays (GPUDirect RDMA), on the rail-optimized scale-out fabric;
//   - an allreduce whose group sits in one domain (a tensor-parallel group; a data-parallel one on one rack)
//     is NCCL's ring over NVLink: reduce-scatter then allgather, 2(n-1) steps pipelined by slices of
//     collective.chunk_bytes, each reduce-scatter slice landing in a staging area and added into the buffer
//     (nvlink.reduce_gbytes_per_s, one slice at a time per GPU) before it is forwarded (as
//     testbench/nvlink_collective.h's nvlink_ring does on a whole domain);
//   - an allreduce whose group spans domains with the same number L of members in each runs the hierarchical
//     allreduce of testbench/cluster_run.h: ring reduce-scatter over NVLink inside every domain, ring
//     allreduce across the domains of each member's shard (member i of every domain, RDMA WRITEs), ring
//     allgather over NVLink, each phase starting when the previous one has ended on every member; a group
//     with unequal members per domain runs one ring over its members in order, each hop on NVLink or RDMA;
//   - a tensor-parallel allreduce with training.tp_algo nvls runs NVLink SHARP instead of the ring: every
//     member sends its whole buffer as contributions, the domain's switch chips reduce them and multicast each
//     packet's result into every member's buffer (sc_models/nvlink/nvls_unit.h; each TP group of a rack is a
//     multicast group of its own, so they reduce at once);
//   - an expert-parallel alltoall inside one domain is NVLink copies; across domains (the same number of
//     members in each) the hierarchical alltoall with PXN of testbench/cluster_alltoall.h (pxn_route_of):
//     NVLink copies to the proxy on the destination's rail, then one RDMA WRITE on that rail;
//   - a pipeline send is one transfer from the first rank to the second.
// Under mpirun (docs/scale_out.md) the cluster is cut with the NVLink domain as the unit (cluster_part): every
// process runs the whole task graph and starts every collective, posts only the transfers whose source GPU it
// simulates and counts the transfers that land on its GPUs (NVLS: its members' results); at each window's end
// the counts are summed and the latest landing maximized, and a phase whose transfers have all landed ends
// there: the next phase, or the release of the tasks that waited for the collective, starts
// collective.barrier_ns after that landing on every process (barrier_ns at least the lookahead, checked before
// the run). One process does the same with a positive barrier_ns; with 0 (the default) it goes on at once.
// Each communicator runs one collective at a time, in the order they were asked for. Elements are fp32 (the
// bytes moved are the step's): with nic.place_data true every GPU's source is filled from the payload
// pattern at the start of each collective and its result compared with a reference summed separately
// (testbench/nvlink_collective.h), so the step is data-checked; false: timing only, in which the SuperNICs
// place no bytes, so a WRITE ends when the receiving NIC has it (the tray's PCIe hop into HBM is not timed).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/sim_context.h"
#include "testbench/training_comm.h"

namespace fabricsim::topology {
class gpu_cluster;
}

namespace fabricsim::testbench {

struct run_options;
class scale_out;

class cluster_backend final : public comm_backend {
 public:
  explicit cluster_backend(const scenario& s);
  ~cluster_backend() override;
  // Lays out every communicator's buffer and staging area in its GPUs' HBM (`mem_bytes` is not used: the
  // GPUs' HBM is the cluster's, sized by the layout).
  void plan(const std::vector<comm_group>& groups, const std::vector<size_t>& rank_host,
            std::vector<uint64_t>& mem_bytes) override;
  // Not used: the cluster is built by build(); throws std::logic_error.
  void elaborate(fabric_setup& setup, timer_service& timers) override;
  // Builds the cluster (after plan), its queue pairs between the GPUs that exchange RDMA WRITEs, and the
  // arrival callbacks.
  void build(timer_service& timers);
  void run(const std::string& op, uint32_t group, uint64_t bytes, uint32_t task,
           std::function<void()> on_done) override;
  uint64_t writes_posted() const override;

  topology::gpu_cluster& cluster();
  core::sim_context& ctx();
  // The partition (after build): under mpirun this process's NVLink domains and rail switches
  // (testbench/cluster_part.h); one process: the whole cluster.
  scale_out& so();
  uint64_t nvlink_transfers() const;
  // Data-checked mode: collectives checked, result bytes compared, elements that differ from the reference.
  struct check_result {
    uint64_t collectives = 0, bytes = 0, wrong = 0;
  };
  check_result checked() const;
  // How each communicator runs (by index): "nvlink_ring", "nvls", "hierarchical", "ring" (across domains),
  // "nvlink_alltoall", "hierarchical_alltoall", "send".
  std::vector<std::string> algorithms() const;

 private:
  struct impl;
  std::unique_ptr<impl> m;
};

// training.comm_backend "cluster" is for a system preset only: a config_error otherwise; and the preset's
// check of a training step: training.domain_size other than nvlink.gpus_per_domain. Returns the training keys
// with domain_size set to the domain. (An expert group spread unevenly over domains is refused by plan().)
struct training_params;
training_params cluster_training_params(const scenario& s);

}  // namespace fabricsim::testbench
