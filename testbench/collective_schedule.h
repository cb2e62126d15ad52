// The schedule of a collective: the queue pairs its algorithm uses and, for each size, one iteration as a
// dependency graph of RDMA WRITEs between the ranks (ring, NCCL's double binary tree, a binary heap tree, a
// chain for ring broadcast, all pairs for alltoall), cut into slices of collective.chunk_bytes so that it
// pipelines. The engine that runs it is testbench/collective_engine.h.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "sc_models/core/units.h"
#include "testbench/collective_params.h"

namespace fabricsim::testbench {

// One RDMA WRITE of the schedule.
struct transfer {
  uint32_t src = 0, dst = 0;  // ranks
  uint32_t conn = 0;          // index of the (src, dst) connection
  uint64_t src_addr = 0;      // in the source rank's memory
  uint64_t bytes = 0;
  uint64_t dst_addr = 0;       // direct transfers: in the destination's receive buffer
  bool staged = false;         // lands in a staging slot and is reduced into reduce_addr on arrival
  uint64_t reduce_addr = 0;    // staged: receive-buffer address of the slice at the destination
  uint64_t base_addr = 0;      // staged: send-buffer address of the slice (the first contribution's partner)
  uint32_t group = 0;          // staged: contributions to one (rank, slice) are counted together
  uint32_t deps = 0;           // transfers whose arrival it waits for
  std::vector<uint32_t> next;  // transfers waiting for it
};

// One queue pair of the schedule, requester at src, responder at dst.
struct connection {
  uint32_t src = 0, dst = 0;
  uint32_t sq = 0, rq = 0;  // QPNs at the source and destination NICs
  uint64_t staging = 0;     // staging slots' base address at dst (connections with staged transfers)
  bool has_staging = false;
  std::deque<std::pair<uint32_t, core::picoseconds>> free_slots;  // slot, free from
  std::deque<uint32_t> ready;                                     // transfers ready to post, in order
  struct in_flight {
    uint32_t xfer;
    uint64_t dst_addr;
    uint32_t slot;
  };
  std::deque<in_flight> flight;  // posted, in PSN order: placement retires them in this order
  core::picoseconds last_post{};
};

struct rank_memory {
  size_t host = 0;
  uint64_t send = 0, recv = 0, staging = 0;  // addresses in the host's memory
  uint32_t rkey = 0;                         // region: receive buffer and staging slots
  uint32_t staging_used = 0;                 // connections with slots here so far
  core::picoseconds reduce_free{};           // the rank's reduction unit is busy until then
};

class collective_schedule {
 public:
  collective_schedule(const collective_params& p, uint32_t ranks);

  // The queue pairs the algorithm uses (the same for every size). Once, before connections() is used.
  void plan_connections();
  // The dependency graph of one iteration of `bytes`, over the ranks' buffers in `ranks` (replaces the last).
  void build(uint64_t bytes, const std::vector<rank_memory>& ranks);

  std::vector<connection>& connections() { return m_conns; }
  const std::vector<connection>& connections() const { return m_conns; }
  const std::vector<transfer>& transfers() const { return m_x; }
  // Connections into rank r whose data is reduced on arrival (each has staging slots at r).
  uint32_t staged_in(uint32_t r) const;
  // Bytes a pipelining slice moves at most: collective.chunk_bytes in whole elements (at least one).
  uint64_t slice_bytes() const { return m_slice; }
  // The broadcast root (0 for the other ops).
  uint32_t root() const { return m_root; }
  // Part c of n of the buffer (whole elements; the per-rank ops divide evenly).
  uint64_t part_off(uint32_t c, uint64_t bytes) const { return (bytes / m_elt) * c / m_n * m_elt; }
  uint64_t part_len(uint32_t c, uint64_t bytes) const { return part_off(c + 1, bytes) - part_off(c, bytes); }

 private:
  struct slice {
    uint64_t off, len;
    uint32_t id;  // global index, for reduction groups
  };
  struct tree {
    uint32_t root = 0;
    std::vector<uint32_t> parent;                 // by rank; the root's is UINT32_MAX
    std::vector<std::vector<uint32_t>> children;  // by rank
    std::vector<uint32_t> order;                  // ranks, every parent before its children
  };

  uint32_t conn(uint32_t src, uint32_t dst, bool staged);
  uint32_t ring_next(uint32_t r) const { return (r + 1) % m_n; }
  uint32_t chunk_of(int64_t c) const { return uint32_t(((c % m_n) + m_n) % m_n); }
  uint32_t tree_rank(uint32_t pos) const { return (pos + m_root) % m_n; }
  std::vector<slice> slices(uint64_t off, uint64_t len);
  uint32_t add(transfer t);
  void depend(uint32_t before, uint32_t after);
  transfer direct(uint32_t src, uint64_t src_addr, uint32_t dst, uint64_t dst_addr, uint64_t bytes) const;
  transfer reduced(uint32_t src, uint64_t src_addr, uint32_t dst, uint64_t off, uint64_t bytes,
                   uint32_t slice_id) const;
  tree make_tree(uint32_t root, const std::vector<uint32_t>& parent) const;
  std::vector<uint32_t> nccl_btree_parents(uint32_t n) const;
  std::vector<tree> trees() const;
  void build_tree(const tree& t, const slice& sl);
  void build_ring(uint64_t bytes);

  collective_params m_p;
  uint32_t m_n;
  bool m_sharp;
  uint64_t m_elt = 4, m_slice = 0;
  uint32_t m_root = 0;
  const std::vector<rank_memory>* m_ranks = nullptr;  // during build()
  std::vector<connection> m_conns;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> m_conn_index;  // (src rank, dst rank) -> connection
  std::vector<transfer> m_x;                                       // the current size's graph
  uint32_t m_slice_ids = 0, m_slices_per_rank = 1;
};

}  // namespace fabricsim::testbench
