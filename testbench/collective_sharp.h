// The SHARP path of a collective (collective.algo sharp, allreduce on quantum_x800 switches): the
// aggregation tree over the ranks' switches, an aggregation unit on each of its switches, a SHARP end on
// each rank's NIC, one reduction per iteration, the results against a software reduction, and the `sharp`
// object of the report. Documentation: docs/collectives.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "sc_models/core/units.h"
#include "sc_models/nic/sharp_host.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"
#include "testbench/collective_params.h"
#include "testbench/collective_schedule.h"

namespace fabricsim::topology {
class fabric;
}

namespace fabricsim::testbench {

class scale_out;

class collective_sharp {
 public:
  collective_sharp(const collective_params& p, const sw::sharp_params& sharp, uint64_t mtu_bytes,
                   core::picoseconds start_latency, core::picoseconds rx_latency);
  collective_sharp(const collective_sharp&) = delete;
  collective_sharp& operator=(const collective_sharp&) = delete;

  // The tree over the switches of the ranks, an aggregation unit on each of its switches, a SHARP end on each
  // rank's NIC. Float sources are refilled with finite values in [-1, 1) (the random bytes of the other
  // algorithms would be NaNs and infinities as floats). Under mpirun (`so`; null in one process) only on the
  // switches and hosts this process builds; the partial results crossing to another process travel with
  // their bytes (docs/scale_out.md, SHARP).
  void elaborate(topology::fabric& fab, const std::vector<rank_memory>& ranks, uint64_t max_bytes, uint64_t seed,
                 bool fill, scale_out* so = nullptr);
  // The parts of elaborate, for a group of members that is not a collective's ranks (the hierarchical
  // allreduce's rails, testbench/rail_sharp.h): the tree over the switches of the fabric's `hosts` (root_choice:
  // sw::build_sharp_tree's), then an aggregation unit on each of its switches with `slots[i]` slots on node i
  // (empty: sharp.slots; added beside the switch's other units) and a SHARP end on each host, reading and
  // placing `memory[i]` (host i's memory: its GPU's HBM on a cluster). The tree comes from the fabric's layout,
  // so every process of a run cut across ranks has the same one; units and ends are made only for the switches
  // and hosts this process builds.
  static sw::sharp_tree tree_over(topology::fabric& fab, const std::vector<size_t>& hosts, size_t root_choice = 0);
  void build(sw::sharp_tree tree, topology::fabric& fab, const std::vector<size_t>& hosts,
             const std::vector<uint8_t*>& memory, const std::vector<uint64_t>& slots);
  // Operation ids: first, first + stride, ... (default 1, 2, ...): trees that share a switch need distinct ids.
  void set_op_ids(uint32_t first, uint32_t stride) {
    m_op = first - stride;
    m_op_stride = stride;
  }
  // Called as each rank has its result at t; `last` for the last rank of the reduction. Set once.
  std::function<void(core::picoseconds t, bool last)> on_rank_done;
  // One reduction of `bytes` from every rank's send buffer into its receive buffer, starting at `at`.
  void start(const std::vector<rank_memory>& ranks, uint64_t bytes, bool check, core::picoseconds at);
  // The same, every member reading at send_addr and placing at recv_addr of its memory (they may be equal:
  // a chunk's result comes down only after every member's piece of it has been reduced).
  void start(uint64_t send_addr, uint64_t recv_addr, uint64_t bytes, bool data, core::picoseconds at);

  // Under mpirun, after build(): the aggregation buffers of this process's units pinned at `max_bytes` (the
  // largest operation) and named to the link exchange as payload spaces first_space + the switch's index, and
  // mirrors for the units of other processes whose partial results come here (docs/scale_out.md, SHARP).
  // Trees that share a switch need distinct first_space (the hierarchical allreduce's rails).
  void share_buffers(scale_out& so, uint64_t max_bytes, uint32_t first_space = 0);

  // SHARP results against a plain software reduction (see check()): wrong elements and bytes compared.
  struct check_counts {
    uint64_t wrong = 0, checked_bytes = 0;
  };
  check_counts check(topology::fabric& fab, const std::vector<rank_memory>& ranks, uint64_t bytes);
  // The tree, its units' counters and the largest float error seen (relative to sum|x_i|). Under mpirun (`so`)
  // each unit's figures from the process that simulates it, the rest summed or maximized over the processes: a
  // collective call.
  nlohmann::json report(topology::fabric& fab, scale_out* so = nullptr) const;

 private:
  sw::sharp_dtype dtype() const;
  uint32_t next_op();
  // gamma_(n-1) for the element type: the float results' tolerance relative to sum|x_i| (see check()).
  double gamma() const;
  // Member r's send bytes [off, off + len): its memory where this process builds its host, else regenerated
  // from the seeded streams that filled it (elaborate; the engine's for int32) into `scratch`.
  const uint8_t* send_block(uint32_t r, uint64_t send_addr, uint64_t off, uint64_t len,
                            std::vector<uint8_t>& scratch) const;

  collective_params m_p;
  uint32_t m_n = 0;
  uint64_t m_elt = 4;
  sw::sharp_params m_params;
  uint64_t m_mtu;
  core::picoseconds m_start_latency, m_rx_latency;
  sw::sharp_tree m_tree;
  std::vector<std::unique_ptr<sw::sharp_aggregator>> m_aggs;
  std::vector<std::unique_ptr<sw::sharp_host>> m_hosts;
  std::vector<size_t> m_members;   // the fabric's host of each member
  std::vector<uint8_t*> m_memory;  // each member's memory, null where another process builds the host
  uint64_t m_seed = 0;
  std::vector<std::unique_ptr<uint8_t[]>> m_mirrors;  // under mpirun: other processes' units' buffers
  uint32_t m_op = 0, m_op_stride = 1, m_done = 0;
  double m_worst = 0.0;
};

}  // namespace fabricsim::testbench
