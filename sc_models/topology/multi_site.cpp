// Scale-across builder: sites of leaf-spine fabrics joined edge to edge by long links (docs/topology.md).
#include "sc_models/topology/multi_site.h"

#include <string>

namespace fabricsim::topology {

void validate_multi_site(const topology_params& topo) {
  if (topo.sites < 2 || topo.sites > 3)
    throw core::config_error("topology.sites: " + std::to_string(topo.sites) +
                             " sites; multi_site builds 2 or 3 sites (each a leaf-spine joined edge to edge)");
  const uint64_t edge_ports = topo.spines + (topo.sites - 1) * topo.inter_site_links;
  const uint64_t spine_ports = topo.leaves * topo.links_per_spine + topo.site_edges;
  const uint64_t leaf_ports = topo.hosts_per_leaf + topo.spines * topo.links_per_spine;
  if (leaf_ports > k_max_switch_ports || spine_ports > k_max_switch_ports || edge_ports > k_max_switch_ports)
    throw core::config_error("topology: a multi_site switch would have more than " +
                             std::to_string(k_max_switch_ports) + " ports (leaf " + std::to_string(leaf_ports) +
                             ", spine " + std::to_string(spine_ports) + ", edge " + std::to_string(edge_ports) +
                             "); lower topology.hosts_per_leaf, topology.spines, topology.leaves, "
                             "topology.site_edges or topology.inter_site_links");
  if (topo.host_count() > k_max_hosts || topo.switch_count() > k_max_switches)
    throw core::config_error("topology: multi_site has " + std::to_string(topo.host_count()) + " hosts and " +
                             std::to_string(topo.switch_count()) + " switches, above the limits of " +
                             std::to_string(k_max_hosts) + " and " + std::to_string(k_max_switches) +
                             "; lower topology.sites, topology.leaves or topology.hosts_per_leaf");
}

bool is_site_edge(const std::string& name) {
  const size_t at = name.find("_edge");
  return name.size() > 1 && name[0] == 's' && at != std::string::npos && at > 1;
}

fabric_layout plan_multi_site(const topology_params& topo, const cable_params& cable) {
  const uint64_t sites = topo.sites, leaves = topo.leaves, spines = topo.spines, edges = topo.site_edges;
  const uint64_t hpl = topo.hosts_per_leaf, lps = topo.links_per_spine, isl = topo.inter_site_links;
  const core::link_params host_lp = tier_link(topo, cable, tier::host);
  const core::link_params leaf_spine_lp = tier_link(topo, cable, tier::leaf_spine);
  const core::link_params edge_lp = tier_link(topo, cable, tier::spine_core);
  const core::link_params far_lp = tier_link(topo, cable, tier::inter_site);
  fabric_layout l;
  l.hosts = topo.host_count();
  const size_t first_spine = sites * leaves, first_edge = sites * (leaves + spines);
  const auto dev = [&](size_t sw) { return l.hosts + sw; };
  for (uint64_t s = 0; s < sites; ++s)
    for (uint64_t j = 0; j < leaves; ++j)
      l.switches.push_back({"s" + std::to_string(s) + "_leaf" + std::to_string(j), hpl + spines * lps});
  for (uint64_t s = 0; s < sites; ++s)
    for (uint64_t k = 0; k < spines; ++k)
      l.switches.push_back({"s" + std::to_string(s) + "_spine" + std::to_string(k), leaves * lps + edges});
  for (uint64_t s = 0; s < sites; ++s)
    for (uint64_t e = 0; e < edges; ++e)
      l.switches.push_back({"s" + std::to_string(s) + "_edge" + std::to_string(e), spines + (sites - 1) * isl});
  for (size_t h = 0; h < l.hosts; ++h) {
    l.host_leaf.push_back(h / hpl);
    l.host_port.push_back(unsigned(h % hpl));
    l.cables.push_back({h, dev(h / hpl), 0, unsigned(h % hpl), "", host_lp, host_lp});
  }
  const auto parallel = [&](size_t a, unsigned a_port, size_t b, unsigned b_port, uint64_t n,
                            const core::link_params& lp) {
    for (unsigned k = 0; k < n; ++k)
      l.cables.push_back({dev(a), dev(b), a_port + k, b_port + k, n > 1 ? "_" + std::to_string(k) : "", lp, lp});
  };
  for (uint64_t s = 0; s < sites; ++s)
    for (uint64_t j = 0; j < leaves; ++j)
      for (uint64_t k = 0; k < spines; ++k)
        parallel(s * leaves + j, unsigned(hpl + k * lps), first_spine + s * spines + k, unsigned(j * lps), lps,
                 leaf_spine_lp);
  for (uint64_t s = 0; s < sites; ++s)
    for (uint64_t k = 0; k < spines; ++k)
      for (uint64_t e = 0; e < edges; ++e)
        parallel(first_spine + s * spines + k, unsigned(leaves * lps + e), first_edge + s * edges + e, unsigned(k), 1,
                 edge_lp);
  // Edge e of site s reaches site t through its ports spines + (t' x isl + k), t' = t's rank among s's others.
  const auto other = [](uint64_t s, uint64_t t) { return t < s ? t : t - 1; };
  for (uint64_t s = 0; s < sites; ++s)
    for (uint64_t t = s + 1; t < sites; ++t)
      for (uint64_t e = 0; e < edges; ++e)
        parallel(first_edge + s * edges + e, unsigned(spines + other(s, t) * isl), first_edge + t * edges + e,
                 unsigned(spines + other(t, s) * isl), isl, far_lp);
  return l;
}

}  // namespace fabricsim::topology
