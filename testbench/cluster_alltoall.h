// Alltoall (expert parallelism) on a cluster of NVLink domains: `collective.op: alltoall, algo: hierarchical`
// on a system preset (docs/systems.md). Each of the N = G x D GPUs sends block j of its buffer (S / N bytes,
// S = the size swept) to GPU j, which places it at block i of its receive buffer (i: the sender).
//
// How the blocks move, as NCCL does on rail-optimized fabrics with PXN (NCCL_PXN_DISABLE=0, its default):
//   - inside the domain (G - 1 blocks per GPU): one NVLink copy each, straight into the peer's receive buffer;
//   - to GPU r' of another domain e, from GPU r of domain d: if r' = r, an RDMA WRITE from GPU r's own NIC
//     (GPUDirect: read from HBM and placed into the peer's HBM through the trays); otherwise an NVLink copy to
//     GPU r' of its own domain (the proxy on the destination's rail), into a staging area, and, as soon as it
//     has landed, an RDMA WRITE from the proxy's NIC: one rail hop, one leaf switch, no spine;
//   - its own block: a local copy, not timed (NCCL's is a copy inside HBM).
// PXN rather than each GPU writing through its own NIC across rails: every inter-domain byte then stays on a
// rail (one switch hop, nothing through the spines, where ECMP collisions would lower the rate), at the price
// of NVLink traffic that NVLink (847 GB/s per GPU against 50 to 100 GB/s per rail) carries with room to
// spare. The NIC of each GPU sends (N - G) / N of S either way.
//
// Every byte moves as packets; every GPU's receive buffer is compared, block by block, with what its senders
// filled their send buffers with (regenerated from the seed, not read back from the model).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "sc_models/switch/quantum/sharp_aggregator.h"

namespace fabricsim::testbench {

struct scenario;
struct run_options;

nlohmann::json run_hierarchical_alltoall(const scenario& s, const run_options& opts);

// The hand bound (docs/systems.md): per GPU and direction, NVLink carries (G - 1) / G of S (its G - 1 blocks
// inside the domain and, by PXN, its (G - 1)(D - 1) blocks for other domains' GPUs on other rails) at B_nv, and
// its NIC (N - G) / N of S at B_rail; both at once, so time >= max of the two and algbw = S / time <= the
// smaller of S / each.
struct alltoall_bounds {
  double nvlink_algbw = 0.0, rail_algbw = 0.0, algbw = 0.0;  // GB/s
};
alltoall_bounds hierarchical_alltoall_bounds(const scenario& s);

// The route of one block of the alltoall above, over n = L x D members numbered domain-major (member i is
// position i mod L of domain i / L; the members at one position of every domain are on one rail): how member
// `from`'s block for member `to` moves. The sweep runs it on every GPU (L = G); the training step's cluster
// backend on an expert-parallel group (testbench/training_cluster.h).
struct pxn_route {
  enum kind_t {
    nvlink,
    rdma,
    pxn
  } kind = nvlink;     // inside the domain; its own NIC (the destination's rail);
                       // NVLink to the proxy, then the proxy's NIC
  uint32_t proxy = 0;  // pxn: the member at the destination's position in the sender's domain
  uint32_t slot = 0;   // pxn: the block's slot in the proxy's staging area (one per sender position and
                       // destination domain: member index of (destination domain, sender position))
};
pxn_route pxn_route_of(uint32_t L, uint32_t from, uint32_t to);

// The data check: block i of member j's receive buffer (`recv[j]`, blocks of `block` bytes) against block j
// of what member i's send buffer was filled with (fill_allreduce_source with `seed` and `ids[i]`, of `bytes`,
// regenerated here, not read back from the model); the elements that differ, and the bytes compared added to
// `checked`. `recv_member` (empty: 0, 1, ...): the member j each receive buffer is, when only some are here
// (the GPUs this process simulates, docs/scale_out.md).
uint64_t alltoall_wrong_elements(const std::vector<const uint8_t*>& recv, const std::vector<uint32_t>& ids,
                                 uint64_t bytes, uint64_t block, sw::sharp_dtype dtype, uint64_t seed,
                                 uint64_t& checked, const std::vector<uint32_t>& recv_member = {});

}  // namespace fabricsim::testbench
