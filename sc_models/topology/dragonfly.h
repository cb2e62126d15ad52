// The dragonfly of Kim, Dally, Scott and Abts (ISCA 2008): groups of routers joined all-to-all by local
// cables inside a group, and by global cables between groups. Wiring, naming and keys: docs/topology.md.
#pragma once

#include <cstdint>

#include "sc_models/topology/fabric.h"

namespace fabricsim::topology {

// The sizes of a dragonfly, from topology_params (topology.kind dragonfly). With the canonical g = a x h + 1
// groups every pair of groups has one global cable; with fewer, g - 1 must divide a x h, and every pair of
// groups has a x h / (g - 1) parallel global cables.
struct dragonfly_shape {
  uint64_t a = 0;  // routers per group (routers_per_group)
  uint64_t p = 0;  // hosts per router (hosts_per_router)
  uint64_t h = 0;  // global cables per router (global_links_per_router)
  uint64_t g = 0;  // groups (dragonfly_groups, or a x h + 1 when that is 0)

  uint64_t routers() const { return g * a; }
  uint64_t hosts() const { return g * a * p; }
  uint64_t router_ports() const { return p + (a - 1) + h; }  // hosts, local cables, global cables
  uint64_t cables_per_group_pair() const { return g > 1 ? a * h / (g - 1) : 0; }
  uint64_t local_cables() const { return g * a * (a - 1) / 2; }
  uint64_t global_cables() const { return g * a * h / 2; }
};

// The shape `topo` asks for; nothing is checked (validate_dragonfly does).
dragonfly_shape dragonfly_of(const topology_params& topo);

// Throws core::config_error naming the key: fewer than 2 groups, more than a x h + 1, a group count whose
// g - 1 does not divide a x h (the message lists the counts that do), more hosts or routers than the fabric
// limits. The keys' own ranges are checked by topology_params::validate().
void validate_dragonfly(const topology_params& topo);

// The wiring (docs/topology.md, "dragonfly"): router r of group i is switch i x a + r, named g<i>r<r>; host
// k hangs off router k / p at port k % p. A router's ports: [0, p) hosts; p + j the local cable to the j-th
// other router of its group, in index order; p + a - 1 + t its global cable t. Global cable t of router r
// is its group's global port q = r x h + t, which leads to the (q / m)-th other group, m = a x h / (g - 1)
// being the cables per pair of groups. Cables: hosts, then local group by group, then global pair by pair.
fabric_layout plan_dragonfly(const topology_params& topo, const cable_params& cable);

}  // namespace fabricsim::topology
