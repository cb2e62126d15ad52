// The hierarchical allreduce as NCCL runs it on a cluster of NVLink domains (docs/systems.md):
// `collective.algo: hierarchical` on a system preset (testbench/system_preset.h). Built on
// topology::gpu_cluster: every GPU's HBM is reached by its NVLink copy engine and, through its tray, by its
// SuperNIC. Per iteration, three phases, each starting when the previous one has ended on every GPU:
//   1. reduce-scatter inside every domain (collective.intra, testbench/nvlink_collective.h): NCCL's ring
//      over NVLink, after which GPU q holds chunk (q + 1) mod G of its domain's sum, or NVLS, after which it
//      holds share q (whole packets) reduced by the switch chips;
//   2. allreduce of that chunk across the domains on rail q (testbench/rail_allreduce.h): collective.inter
//      ring (testbench/rail_ring.h), a ring of RDMA WRITEs, GPUDirect through the trays, or sharp
//      (testbench/rail_sharp.h), the rail's Quantum-X800 switches reducing the shards (NCCL's CollNet);
//   3. allgather inside every domain: the second half of the NVLink ring, or NVLS multicast of each share.
// Every byte moves as packets; the result of every GPU is compared with a reference summed over all GPUs.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "sc_models/core/sim_context.h"
#include "sc_models/core/units.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"

namespace fabricsim::topology {
class gpu_cluster;
}

#include "sc_models/nic/supernic.h"

namespace fabricsim::testbench {

struct scenario;
struct run_options;
struct sweep_result;
class scale_out;

// `collective.op: alltoall` goes to run_hierarchical_alltoall (testbench/cluster_alltoall.h).
nlohmann::json run_hierarchical_allreduce(const scenario& s, const run_options& opts);

// What every collective on a cluster needs: a system preset, every GPU (collective.ranks 0), no faults, and
// collective.intra / collective.inter that the op and the scale-out can run; config_error naming the key.
void check_hierarchical(const scenario& s);
// The SuperNIC of every GPU (nic.link_layer infiniband on a Quantum-X800 scale-out, as fabric_setup sets it).
nic::supernic_params cluster_nic(const scenario& s);
// The scale-out WRITEs of the cluster's NICs: completed, and failed.
std::pair<uint64_t, uint64_t> cluster_writes(topology::gpu_cluster& cl);
// nvlink_report's report of a sweep on a cluster, completed: the placement, the rails' link rate, the failed
// WRITEs (any of them: not verified).
void complete_cluster_report(nlohmann::json& r, const scenario& s, std::pair<uint64_t, uint64_t> writes);
// The sizes of the sweep (collective_sizes, effective_bytes over `n` GPUs); config_error naming
// collective.min_bytes for a size of fewer than one element per GPU.
std::vector<uint64_t> cluster_sweep_sizes(const scenario& s, sw::sharp_dtype dtype, uint64_t n);
// What every sweep on a cluster starts with (the allreduce's and the alltoall's): check_hierarchical, the
// dtype, the GPUs, the sizes, whether real bytes move, the run's time limit, and the wall clock at the start.
struct cluster_sweep {
  explicit cluster_sweep(const scenario& s);
  double wall_s() const;
  sw::sharp_dtype dtype;
  uint64_t gpus;
  std::vector<uint64_t> sizes;
  bool data;
  core::picoseconds limit;
  std::chrono::steady_clock::time_point wall0;
};

// The end of a sweep on a cluster (the allreduce's and the alltoall's): statistics merged over the ranks, each
// size's wrong elements and the result bytes checked summed (the ranks check their own GPUs), nvlink_report,
// the rail WRITEs summed and complete_cluster_report. The report and the WRITEs (completed, failed).
std::pair<nlohmann::json, std::pair<uint64_t, uint64_t>> cluster_sweep_report(
    const scenario& s, const run_options& opts, const cluster_sweep& cs, scale_out& so, const core::sim_context& ctx,
    topology::gpu_cluster& cl, sweep_result& sw, uint64_t result_checked);

// The hand bounds (GB/s of busbw, N = G x D GPUs, bus factor 2(N-1)/N), from link rates and wire formats:
// NVLink: phases 1 and 3 send 2(G-1)/G of the buffer per GPU at B_nv (nvlink_ring_busbw_bound), so
// busbw <= 2(N-1)/N / (2(G-1)/G / B_nv); NVLS: (2G-1)/G in place of 2(G-1)/G (the whole buffer out as
// contributions, then the (G-1)/G others' shares in). Rail: phase 2 sends 2(D-1)/D of a 1/G shard per NIC at B_rail
// (the NIC's line rate x payload / wire bytes of a full-MTU WRITE packet), so busbw <= 2(N-1)/N / (2(D-1)/(D G) /
// B_rail). SHARP: 1/G of the buffer per NIC and direction (its shard up once, the result down once) at
// B_rail of SHARP packets (a 16-byte aggregation header more per chunk). The phases follow each other, so the
// times add: busbw <= serial = 1 / (1/nvlink + 1/rail).
struct hierarchical_bounds {
  double nvlink_busbw = 0.0, rail_busbw = 0.0, serial_busbw = 0.0;
  double rail_gbytes_per_s = 0.0;  // B_rail, payload per NIC per direction
};
hierarchical_bounds hierarchical_allreduce_bounds(const scenario& s);

// The SuperNIC of a cluster's GPUs: nic, on the InfiniBand link layer when the switches are (as fabric_setup
// does).
nic::supernic_params cluster_nic_params(const scenario& s);

}  // namespace fabricsim::testbench
