// A fabric's wiring from a file: GraphML or Graphviz DOT read with Boost.Graph into the same fabric_layout the
// built-in builders plan, and any layout written back as GraphML in that schema, so that a cluster's real
// cabling (a missing cable, an odd spine) can be simulated and a built-in fabric can be edited as a file.
// Schema: docs/topology.md ("Topologies from files").
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

#include "sc_models/topology/fabric.h"

namespace fabricsim::topology {

// The fastest port the run's switch model can run, to check a file's cables against before any switch is
// built (the switch would refuse a faster link only when it is wired, naming neither the file nor the edge).
struct port_speed_limit {
  double gbps = 0.0;                               // a switch port's rate; 0: no limit
  std::string setting;                             // what sets it, for messages: "switch.port_config 128x400"
  std::function<std::string(double gbps)> remedy;  // what would let a port run `gbps`: "use --set ..."
};

// Reads `path` (.graphml, or .dot / .gv for Graphviz) into a layout. Nodes have `type` switch|host; a switch
// has `ports`; hosts are named h0 .. h(N-1). Edges have optional `a_port` / `b_port` (else the lowest free
// port, in file order), `gbps` (else topo.link_gbps) and `length_m` (else topo.host_cable_m for a host cable,
// topo.leaf_spine_cable_m between switches); `cable` gives propagation per metre, FEC latency and loss.
// Throws core::config_error naming the file, the node or edge and what was expected: an unknown node type, a
// host not named h<i>, a host with no cable or on two switches, a host-to-host cable, a port used twice or
// beyond the switch's ports, a rate outside [1, 3200] Gb/s, a cable at a switch faster than `limit.gbps` (the
// message names the edge, the switch, the rate and where it came from, `limit.setting` and its remedy), a pair
// of hosts with no path between them.
fabric_layout read_graph_layout(const std::string& path, const topology_params& topo, const cable_params& cable,
                                const port_speed_limit& limit = {});

// The same from text already in memory; `name` stands for the file in messages and `dot` picks the format.
fabric_layout parse_graph_layout(const std::string& text, const std::string& name, bool dot,
                                 const topology_params& topo, const cable_params& cable,
                                 const port_speed_limit& limit = {});

// Writes `layout` as GraphML in the schema above: hosts h0 .. first, then switches in layout order, then one
// edge per cable in layout order with both ports, its rate and its length (propagation / `ns_per_metre`).
// Read back with the same `cable`, it gives the same layout.
void write_graphml(const fabric_layout& layout, const cable_params& cable, std::ostream& out);

}  // namespace fabricsim::topology
