// Scale-across: two or three sites, each a leaf-spine, joined through deep-buffered site-edge switches by
// long links of topology.inter_site_km. Wiring, naming and keys: docs/topology.md ("multi_site").
#pragma once

#include <cstdint>

#include "sc_models/topology/fabric.h"

namespace fabricsim::topology {

// Throws core::config_error naming the key: a site count other than 2 or 3, a fabric past the size limits.
// The keys' own ranges (inter_site_km in [10, 100]) are checked by topology_params::validate().
void validate_multi_site(const topology_params& topo);

// The wiring (docs/topology.md, "multi_site"). Switches: every site's leaves (site-major: site s leaf j is
// switch s x leaves + j, named s<s>_leaf<j>), then every site's spines (s<s>_spine<k>), then every site's
// edges (s<s>_edge<e>). Host k is in site k / (leaves x hosts_per_leaf), under leaf k / hosts_per_leaf at
// port k % hosts_per_leaf. Leaf ports as leaf_spine; a spine's ports [0, leaves x links_per_spine) down, then
// one cable to each edge of its site; an edge's ports [0, spines) to the spines, then inter_site_links cables
// to edge e of every other site, site by site in index order. Cables: hosts, leaf-spine, spine-edge (tier
// spine_core), then inter-site (tier inter_site) pair of sites by pair.
fabric_layout plan_multi_site(const topology_params& topo, const cable_params& cable);

// Whether switch `name` is a site-edge switch of a multi_site fabric (its buffer is topology.edge_buffer_bytes).
bool is_site_edge(const std::string& name);

}  // namespace fabricsim::topology
