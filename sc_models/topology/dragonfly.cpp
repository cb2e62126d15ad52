// Dragonfly builder: groups of all-to-all routers, one or more global cables between every pair of groups.
// Wiring and naming: docs/topology.md ("dragonfly").
#include "sc_models/topology/dragonfly.h"

#include <map>
#include <string>
#include <utility>

namespace fabricsim::topology {

dragonfly_shape dragonfly_of(const topology_params& topo) {
  dragonfly_shape d;
  d.a = topo.routers_per_group;
  d.p = topo.hosts_per_router;
  d.h = topo.global_links_per_router;
  d.g = topo.dragonfly_groups ? topo.dragonfly_groups : d.a * d.h + 1;
  return d;
}

void validate_dragonfly(const topology_params& topo) {
  const dragonfly_shape d = dragonfly_of(topo);
  const uint64_t global_ports = d.a * d.h;  // a group's global cables
  const std::string per_group = "routers_per_group x global_links_per_router = " + std::to_string(global_ports);
  if (d.g < 2)
    throw core::config_error(
        "topology.dragonfly_groups: " + std::to_string(d.g) + " group; a dragonfly needs at least 2 (0: " + per_group +
        " + 1 = " + std::to_string(global_ports + 1) + ", one global cable between every pair of groups)");
  if (d.g > global_ports + 1)
    throw core::config_error("topology.dragonfly_groups: " + std::to_string(d.g) + " groups, more than " + per_group +
                             " + 1 = " + std::to_string(global_ports + 1) + ": a group has " +
                             std::to_string(global_ports) +
                             " global cables, at least one to every other group; raise " +
                             "topology.routers_per_group or topology.global_links_per_router");
  if (global_ports % (d.g - 1) != 0) {
    std::string fits;  // group counts whose other groups share the global cables evenly
    size_t listed = 0;
    for (uint64_t others = 1; others <= global_ports && listed < 16; ++others)
      if (global_ports % others == 0) fits += (listed++ ? ", " : "") + std::to_string(others + 1);
    throw core::config_error("topology.dragonfly_groups: " + std::to_string(d.g) + " groups cannot share a group's " +
                             per_group + " global cables evenly over the " + std::to_string(d.g - 1) +
                             " other groups; use a count whose other groups divide " + std::to_string(global_ports) +
                             " (" + fits + (listed == 16 ? ", ..." : "") + "; 0 for " +
                             std::to_string(global_ports + 1) + ")");
  }
  // A router has at most 1024 + 1023 + 1024 ports at the keys' ranges: under the radix limit.
  static_assert(1024 + 1023 + 1024 <= k_max_switch_ports);
  if (d.routers() > k_max_switches)
    throw core::config_error(
        "topology: dragonfly has groups x routers_per_group = " + std::to_string(d.g) + " x " + std::to_string(d.a) +
        " = " + std::to_string(d.routers()) + " switches, above the limit of " + std::to_string(k_max_switches) +
        "; lower topology.dragonfly_groups (0: " + per_group + " + 1) or topology.routers_per_group");
  if (d.hosts() > k_max_hosts)
    throw core::config_error(
        "topology: dragonfly has groups x routers_per_group x hosts_per_router = " + std::to_string(d.g) + " x " +
        std::to_string(d.a) + " x " + std::to_string(d.p) + " = " + std::to_string(d.hosts()) +
        " hosts, above the limit of " + std::to_string(k_max_hosts) + "; lower one of them");
}

fabric_layout plan_dragonfly(const topology_params& topo, const cable_params& cable) {
  const dragonfly_shape d = dragonfly_of(topo);
  const core::link_params host_lp = tier_link(topo, cable, tier::host);
  const core::link_params local_lp = tier_link(topo, cable, tier::local);
  const core::link_params global_lp = tier_link(topo, cable, tier::global);
  fabric_layout l;
  l.hosts = d.hosts();
  const auto router = [&](uint64_t group, uint64_t r) { return l.hosts + group * d.a + r; };  // a device index
  for (uint64_t i = 0; i < d.g; ++i)
    for (uint64_t r = 0; r < d.a; ++r)
      l.switches.push_back({"g" + std::to_string(i) + "r" + std::to_string(r), d.router_ports()});
  for (size_t k = 0; k < l.hosts; ++k) {
    l.host_leaf.push_back(k / d.p);
    l.host_port.push_back(unsigned(k % d.p));
    l.cables.push_back({k, l.hosts + k / d.p, 0, unsigned(k % d.p), "", host_lp, host_lp});
  }
  // Local: routers r < s of a group; r's local port s - 1 (s skips r itself), s's local port r.
  for (uint64_t i = 0; i < d.g; ++i)
    for (uint64_t r = 0; r < d.a; ++r)
      for (uint64_t s = r + 1; s < d.a; ++s)
        l.cables.push_back(
            {router(i, r), router(i, s), unsigned(d.p + s - 1), unsigned(d.p + r), "", local_lp, local_lp});
  // Global: cable c of groups i < j leaves i through its global port (j - 1) x m + c (j is i's (j - 1)-th
  // other group) and enters j through its global port i x m + c. Group port q is router q / h's port
  // p + a - 1 + q % h.
  const uint64_t m = d.cables_per_group_pair();
  struct end {
    size_t device;
    unsigned port;
  };
  const auto global_end = [&](uint64_t group, uint64_t q) {
    return end{router(group, q / d.h), unsigned(d.p + d.a - 1 + q % d.h)};
  };
  std::vector<std::pair<end, end>> global;
  std::map<std::pair<size_t, size_t>, size_t> parallel;  // cables per pair of routers, for the _k suffixes
  for (uint64_t i = 0; i < d.g; ++i)
    for (uint64_t j = i + 1; j < d.g; ++j)
      for (uint64_t c = 0; c < m; ++c) {
        global.push_back({global_end(i, (j - 1) * m + c), global_end(j, i * m + c)});
        ++parallel[{global.back().first.device, global.back().second.device}];
      }
  std::map<std::pair<size_t, size_t>, size_t> nth;
  for (const auto& [a, b] : global) {
    const auto pair = std::make_pair(a.device, b.device);
    const std::string suffix = parallel[pair] > 1 ? "_" + std::to_string(nth[pair]++) : "";
    l.cables.push_back({a.device, b.device, a.port, b.port, suffix, global_lp, global_lp});
  }
  return l;
}

}  // namespace fabricsim::topology
