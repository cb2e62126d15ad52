// The hierarchical allreduce's inter-domain phase reduced by SHARP in each rail's Quantum-X800 switches.
#include "testbench/rail_sharp.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "sc_models/switch/quantum/quantum_switch.h"
#include "sc_models/topology/gpu_cluster.h"
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
                       const std::vector<uint64_t>& slots)
    : m_cl(cl),
      m_sharp(s.collective, s.sharp, s.nic.mtu_bytes, picoseconds::from_ns(s.nic.wqe_latency_ns),
              picoseconds::from_ns(s.nic.rx_latency_ns)) {
  if (tree.nodes.empty()) return;  // a single domain: nothing crosses the rail
  const std::vector<size_t> hosts = rail_hosts(cl, rail);
  std::vector<uint8_t*> hbm;
  for (unsigned d = 0; d < cl.domains().domains(); ++d) hbm.push_back(cl.gpu(d, rail).hbm.data());
  m_sharp.build(std::move(tree), cl.scale_out(), hosts, hbm, slots);
  m_min_slots = slots.empty() ? s.sharp.slots : *std::min_element(slots.begin(), slots.end());
  // Rails whose trees share a switch run at once: their operations need distinct ids (rail + 1 + k rails).
  m_sharp.set_op_ids(rail + 1, cl.gpus_per_domain());
  m_sharp.on_rank_done = [this](picoseconds t, bool last) {
    if (last && m_done) m_done(t);
  };
}

void rail_sharp::start(const rail_shard& s, std::function<void(picoseconds)> done) {
  m_done = std::move(done);
  if (s.bytes == 0 || m_cl.domains().domains() < 2) {
    if (m_done) m_done(core::now());
    return;
  }
  m_sharp.start(s.addr, s.addr, s.bytes, s.data, core::now());
}

nlohmann::json rail_sharp::report() const {
  return m_cl.domains().domains() < 2 ? nlohmann::json() : m_sharp.report(m_cl.scale_out());
}

std::vector<std::unique_ptr<rail_sharp>> make_rail_sharps(topology::gpu_cluster& cl, const scenario& s) {
  std::vector<std::unique_ptr<rail_sharp>> out;
  const unsigned G = cl.gpus_per_domain();
  if (cl.domains().domains() < 2) {  // a single domain: no tree, phase 2 ends as it starts
    for (unsigned q = 0; q < G; ++q)
      out.push_back(std::make_unique<rail_sharp>(cl, q, s, sw::sharp_tree{}, std::vector<uint64_t>{}));
    return out;
  }
  std::vector<sw::sharp_tree> trees;
  std::map<const sw::quantum_switch*, uint64_t> trees_on;
  for (unsigned q = 0; q < G; ++q) {
    trees.push_back(collective_sharp::tree_over(cl.scale_out(), rail_hosts(cl, q), q));
    for (const sw::sharp_tree_node& n : trees.back().nodes) ++trees_on[n.sw];
  }
  for (const auto& [sw, k] : trees_on)
    if (s.sharp.slots / k == 0)
      throw config_error(fmt::format(
          "{}: sharp.slots {}: switch {} is on the SHARP trees of {} rails (topology.rails {}, topology.groups {}, "
          "topology.spines {}), and each tree needs at least one of its aggregation slots: set sharp.slots to at "
          "least {}, or use collective.inter ring",
          s.source, s.sharp.slots, sw->device_name(), k, s.topology.rails, s.topology.groups, s.topology.spines, k));
  for (unsigned q = 0; q < G; ++q) {
    std::vector<uint64_t> slots;
    for (const sw::sharp_tree_node& n : trees[q].nodes) slots.push_back(s.sharp.slots / trees_on[n.sw]);
    out.push_back(std::make_unique<rail_sharp>(cl, q, s, std::move(trees[q]), slots));
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
