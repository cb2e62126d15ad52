// collective.inter sharp: the middle phase of the hierarchical allreduce (testbench/cluster_run.h) reduced in
// the rail's Quantum-X800 switches, as NCCL's CollNet path runs it (intra-node reduce-scatter, SHARP allreduce
// across the nodes on each rail, intra-node allgather). For rail q, GPU q of every domain is a member: its
// SuperNIC sends its shard up the rail's SHARP tree (the rail's leaf, and a spine when the rail spans several
// leaves) once, the switches reduce it (sc_models/switch/quantum/sharp_aggregator.h), and the result comes
// down once to every member, in place in its HBM. The tree, the units and the hosts' SHARP ends are
// collective_sharp's (testbench/collective_sharp.h), built over the rail's NICs.
//
// Simplifications, stated: the SHARP end reads and places the GPU's HBM directly (its PCIe hop through the
// tray is not timed, as in rail_ring's timing-only mode); a switch on several rails' trees (a spine) splits its
// aggregation slots evenly between them. Documentation: docs/systems.md.
//
// Under mpirun (testbench/cluster_part.h) every process has every rail's tree (from the layout) and builds the
// units of its switches and the SHARP ends of its GPUs' NICs; a partial result whose tree edge crosses
// processes travels with its bytes (collective_sharp::share_buffers, one payload space per rail and switch),
// and the phase's end is counted (finished(), summed at window ends by the caller). docs/scale_out.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "testbench/collective_sharp.h"
#include "testbench/rail_allreduce.h"

namespace fabricsim::topology {
class gpu_cluster;
}

namespace fabricsim::testbench {

struct scenario;

class rail_sharp : public rail_allreduce {
 public:
  // The tree of `rail` (collective_sharp::tree_over), its node i with slots[i] aggregation slots. Under mpirun
  // (`so` distributed, data placed) the units' buffers hold `max_shard_bytes` and are shared with the other
  // processes (collective_sharp::share_buffers).
  rail_sharp(topology::gpu_cluster& cl, unsigned rail, const scenario& s, sw::sharp_tree tree,
             const std::vector<uint64_t>& slots, scale_out* so = nullptr, uint64_t max_shard_bytes = 0);
  void start(const rail_shard& s, std::function<void(core::picoseconds)> done) override;
  uint32_t finished() const override { return m_finished; }
  core::picoseconds finished_at() const override { return m_finished_at; }
  // collective_sharp::report of the rail's tree (null without one); under mpirun a collective call.
  nlohmann::json report() const;
  uint64_t min_slots() const { return m_min_slots; }  // the fewest aggregation slots of a switch of the tree

 private:
  topology::gpu_cluster& m_cl;
  scale_out* m_so;
  collective_sharp m_sharp;
  std::function<void(core::picoseconds)> m_done;
  uint64_t m_min_slots = 0;
  uint32_t m_members_here = 0;  // the rail's GPUs whose NIC this process builds
  uint32_t m_finished = 0;
  core::picoseconds m_finished_at{};
};

// One rail_sharp per rail of `cl` (without a tree when there is a single domain: phase 2 has nothing to do). Rail q's
// tree takes the q-th of the spines tied for its root (round robin), and every tree switch's sharp.slots are
// split evenly between the trees on it (counted from the layout, the same in every process): core::config_error
// naming sharp.slots and the topology keys when a switch carries more trees than it has slots. `so`, and the
// largest shard of the sweep: as for rail_sharp.
std::vector<std::unique_ptr<rail_sharp>> make_rail_sharps(topology::gpu_cluster& cl, const scenario& s,
                                                          scale_out* so = nullptr, uint64_t max_shard_bytes = 0);

// The rails' trees together for the report: per-rail roots, the slots per tree, and the counters summed.
nlohmann::json rail_sharp_summary(const std::vector<std::unique_ptr<rail_sharp>>& rails);

}  // namespace fabricsim::testbench
