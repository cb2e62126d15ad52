// A fabric's wiring from a file: GraphML or Graphviz DOT read with Boost.Graph into the same fabric_layout the
// built-in builders plan, and any layout written back as GraphML in that schema, so that a cluster's real
// cabling (a missing cable, an odd spine) can be simulated and a built-in fabric can be edited as a file.
// Schema: docs/topology.md ("Topologies from files").
#pragma once

#include <iosfwd>
#include <string>

#include "sc_models/topology/fabric.h"

namespace fabricsim::topology {

// Reads `path` (.graphml, or .dot / .gv for Graphviz) into a layout. Nodes have `type` switch|host; a switch
// has `ports`; hosts are named h0 .. h(N-1). Edges have optional `a_port` / `b_port` (else the lowest free
// port, in file order), `gbps` (else topo.link_gbps) and `length_m` (else topo.host_cable_m for a host cable,
// topo.leaf_spine_cable_m between switches); `cable` gives propagation per metre, FEC latency and loss.
// Throws core::config_error naming the file, the node or edge and what was expected: an unknown node type, a
// host not named h<i>, a host with no cable or on two switches, a host-to-host cable, a port used twice or
// beyond the switch's ports, a rate outside [1, 3200] Gb/s, a pair of hosts with no path between them.
fabric_layout read_graph_layout(const std::string& path, const topology_params& topo, const cable_params& cable);

// The same from text already in memory; `name` stands for the file in messages and `dot` picks the format.
fabric_layout parse_graph_layout(const std::string& text, const std::string& name, bool dot,
                                 const topology_params& topo, const cable_params& cable);

// Writes `layout` as GraphML in the schema above: hosts h0 .. first, then switches in layout order, then one
// edge per cable in layout order with both ports, its rate and its length (propagation / `ns_per_metre`).
// Read back with the same `cable`, it gives the same layout.
void write_graphml(const fabric_layout& layout, const cable_params& cable, std::ostream& out);

}  // namespace fabricsim::topology
