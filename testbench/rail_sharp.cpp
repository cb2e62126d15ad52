// The hierarchical allreduce's inter-domain phase reduced by SHARP in each rail's Quantum-X800 switches.
#include "testbench/rail_sharp.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "sc_models/topology/gpu_cluster.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

using core::config_error;
using core::picoseconds;

namespace {

std::vector<size_t> rail_hosts(topology::gpu_cluster& cl, unsigned rail) {
  std::vector<size_t> hosts;
  for (unsigned d = 0; d < cl.domains().domains(); ++d) hosts.push_back(cl.host_of(d, rail));
  return hosts;
}

}  // namespace

rail_sharp::rail_sharp(topology::gpu_cluster& cl, unsigned rail, const scenario& s, sw::sharp_tree tree,
                       const std::vector<uint64_t>& slots, scale_out* so, uint64_t max_shard_bytes)
    : m_cl(cl),
      m_so(so),
      m_sharp(s.collective, s.sharp, s.nic.mtu_bytes, picoseconds::from_ns(s.nic.wqe_latency_ns),
              picoseconds::from_ns(s.nic.rx_latency_ns)) {
  const std::vector<size_t> hosts = rail_hosts(cl, rail);
  for (size_t h : hosts) m_members_here += cl.scale_out().hosts()[h].built() ? 1 : 0;
  if (tree.nodes.empty()) return;  // a single domain: nothing crosses the rail
  std::vector<uint8_t*> hbm;       // null where another process builds the domain
  for (unsigned d = 0; d < cl.domains().domains(); ++d)
    hbm.push_back(cl.domain_built(d) ? cl.gpu(d, rail).hbm.data() : nullptr);
  m_sharp.build(std::move(tree), cl.scale_out(), hosts, hbm, slots);
  m_min_slots = slots.empty() ? s.sharp.slots : *std::min_element(slots.begin(), slots.end());
  // Rails whose trees share a switch run at once: their operations need distinct ids (rail + 1 + k rails), and
  // under mpirun their units' buffers distinct payload spaces (rail x switches + the switch's index).
  m_sharp.set_op_ids(rail + 1, cl.gpus_per_domain());
  if (so != nullptr && so->distributed() && s.nic.place_data)
    m_sharp.share_buffers(*so, max_shard_bytes, uint32_t(rail * cl.scale_out().layout().switches.size()));
  m_sharp.on_rank_done = [this](picoseconds t, bool last) {
    // The time the host's SHARP end reports it (its last chunk in, now), as the one-process phase end takes it
    // (hierarchical_run::unit_done reads now, not `t`, which adds nic.rx_latency_ns).
    ++m_finished;
    m_finished_at = std::max(m_finished_at, core::now());
    if (last && m_done) m_done(t);
  };
}

void rail_sharp::start(const rail_shard& s, std::function<void(picoseconds)> done) {
  m_done = std::move(done);
  m_finished = 0;
  m_finished_at = core::now();
  if (s.bytes == 0 || m_cl.domains().domains() < 2) {
    m_finished = m_members_here;
    if (m_done) m_done(core::now());
    return;
  }
  m_sharp.start(s.addr, s.addr, s.bytes, s.data, core::now());
}

nlohmann::json rail_sharp::report() const {
  return m_cl.domains().domains() < 2 ? nlohmann::json() : m_sharp.report(m_cl.scale_out(), m_so);
}

std::vector<std::unique_ptr<rail_sharp>> make_rail_sharps(topology::gpu_cluster& cl, const scenario& s, scale_out* so,
                                                          uint64_t max_shard_bytes) {
  std::vector<std::unique_ptr<rail_sharp>> out;
  const unsigned G = cl.gpus_per_domain();
  if (cl.domains().domains() < 2) {  // a single domain: no tree, phase 2 ends as it starts
    for (unsigned q = 0; q < G; ++q)
      out.push_back(std::make_unique<rail_sharp>(cl, q, s, sw::sharp_tree{}, std::vector<uint64_t>{}, so));
    return out;
  }
  // The trees on each switch, by its index in the layout: every process counts the same, whichever switches
  // it builds (a node another process builds has no switch object here).
  std::vector<sw::sharp_tree> trees;
  std::map<size_t, uint64_t> trees_on;
  for (unsigned q = 0; q < G; ++q) {
    trees.push_back(collective_sharp::tree_over(cl.scale_out(), rail_hosts(cl, q), q));
    for (const sw::sharp_tree_node& n : trees.back().nodes) ++trees_on[n.switch_index];
  }
  for (const auto& [sw, k] : trees_on)
    if (s.sharp.slots / k == 0)
      throw config_error(fmt::format(
          "{}: sharp.slots {}: switch {} is on the SHARP trees of {} rails (topology.rails {}, topology.groups {}, "
          "topology.spines {}), and each tree needs at least one of its aggregation slots: set sharp.slots to at "
          "least {}, or use collective.inter ring",
          s.source, s.sharp.slots, cl.scale_out().switch_name(sw), k, s.topology.rails, s.topology.groups,
          s.topology.spines, k));
  for (unsigned q = 0; q < G; ++q) {
    std::vector<uint64_t> slots;
    for (const sw::sharp_tree_node& n : trees[q].nodes) slots.push_back(s.sharp.slots / trees_on[n.switch_index]);
    out.push_back(std::make_unique<rail_sharp>(cl, q, s, std::move(trees[q]), slots, so, max_shard_bytes));
  }
  return out;
}

nlohmann::json rail_sharp_summary(const std::vector<std::unique_ptr<rail_sharp>>& rails) {
  nlohmann::json roots = nlohmann::json::array();
  uint64_t switches = 0, unexpected = 0, host_unexpected = 0, violations = 0, overruns = 0, pieces = 0, slot_waits = 0;
  uint64_t min_slots = UINT64_MAX;
  for (const auto& r : rails) {
    const nlohmann::json j = r->report();
    if (j.is_null()) continue;
    roots.push_back(j["root"]);
    min_slots = std::min(min_slots, r->min_slots());
    host_unexpected += j["host_unexpected"].get<uint64_t>();
    violations += j["credit_violations"].get<uint64_t>();
    overruns += j["credit_overruns"].get<uint64_t>();
    for (const auto& sw : j["switches"]) {
      ++switches;
      unexpected += sw["unexpected"].get<uint64_t>();
      pieces += sw["pieces"].get<uint64_t>();
      slot_waits += sw["slot_waits"].get<uint64_t>();
    }
  }
  return {{"trees", roots.size()},
          {"roots", roots},
          {"min_slots_per_tree", roots.empty() ? 0 : min_slots},
          {"tree_switches", switches},
          {"pieces", pieces},
          {"slot_waits", slot_waits},
          {"unexpected", unexpected},
          {"host_unexpected", host_unexpected},
          {"credit_violations", violations},
          {"credit_overruns", overruns}};
}

}  // namespace fabricsim::testbench
