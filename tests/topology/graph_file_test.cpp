// Topologies from files: every built-in kind written as GraphML and read back gives the builder's layout
// field for field (the builders are the second implementation); ports left out are assigned by hand-worked
// rule; DOT reads like GraphML; and each malformed file fails with a message naming the file, the node or
// edge, and what was expected.
#include "sc_models/topology/graph_file.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace fabricsim::test {
namespace graph_file_test {

using topology::cable_params;
using topology::fabric_layout;
using topology::topology_params;

void expect_same_layout(const fabric_layout& want, const fabric_layout& got) {
  ASSERT_EQ(want.hosts, got.hosts);
  EXPECT_EQ(want.host_leaf, got.host_leaf);
  EXPECT_EQ(want.host_port, got.host_port);
  ASSERT_EQ(want.switches.size(), got.switches.size());
  for (size_t s = 0; s < want.switches.size(); ++s) {
    EXPECT_EQ(want.switches[s].name, got.switches[s].name);
    EXPECT_EQ(want.switches[s].ports, got.switches[s].ports);
  }
  ASSERT_EQ(want.cables.size(), got.cables.size());
  for (size_t k = 0; k < want.cables.size(); ++k) {
    const auto &w = want.cables[k], &g = got.cables[k];
    SCOPED_TRACE("cable " + std::to_string(k) + " " + want.link_name(2 * k));
    EXPECT_EQ(w.a, g.a);
    EXPECT_EQ(w.b, g.b);
    EXPECT_EQ(w.a_port, g.a_port);
    EXPECT_EQ(w.b_port, g.b_port);
    EXPECT_EQ(w.suffix, g.suffix);
    for (auto [wp, gp] : {std::pair{&w.ab, &g.ab}, std::pair{&w.ba, &g.ba}}) {
      EXPECT_EQ(wp->rate_gbps, gp->rate_gbps);
      EXPECT_EQ(wp->propagation_ns, gp->propagation_ns);
      EXPECT_EQ(wp->fec_latency_ns, gp->fec_latency_ns);
      EXPECT_EQ(wp->drop_probability, gp->drop_probability);
    }
  }
}

void round_trip(const topology_params& topo, const cable_params& cable) {
  const fabric_layout built = topology::plan_fabric(topo, cable);
  std::ostringstream out;
  topology::write_graphml(built, cable, out);
  // Defaults the file must not fall back on: every rate and length comes from the file.
  topology_params other;
  other.link_gbps = 1.0;
  other.host_cable_m = other.leaf_spine_cable_m = 12345.0;
  expect_same_layout(built, topology::parse_graph_layout(out.str(), "export.graphml", false, other, cable));
}

TEST(GraphFile, EveryBuiltInKindRoundTripsThroughGraphml) {
  cable_params cable;
  cable.ns_per_metre = 4.0;
  cable.fec_latency_ns = 80.0;
  topology_params t;
  t.kind = "single_switch";
  t.hosts = 5;
  round_trip(t, cable);
  t = {};
  t.kind = "leaf_spine";
  t.leaves = 3;
  t.hosts_per_leaf = 4;
  t.spines = 2;
  t.links_per_spine = 2;  // parallel cables: the _0 / _1 suffixes come back from the file
  t.uplink_gbps = 800.0;
  t.leaf_spine_cable_m = 7.5;
  round_trip(t, cable);
  t = {};
  t.kind = "rail_optimized";
  t.rails = 4;
  t.groups = 2;
  t.hosts_per_leaf = 2;
  t.spines = 2;
  round_trip(t, cable);
  t = {};
  t.kind = "three_tier";
  t.pods = 2;
  t.leaves = 2;
  t.hosts_per_leaf = 2;
  t.spines = 2;
  t.cores = 4;
  round_trip(t, cable);
  t = {};
  t.kind = "dragonfly";  // canonical: 9 groups of 4 routers, one global cable per pair of groups
  t.local_cable_m = 4.0;
  t.global_cable_m = 25.0;
  t.uplink_gbps = 800.0;
  round_trip(t, cable);
  t.dragonfly_groups = 3;  // 4 parallel global cables per pair of groups, on pairs of routers: _0 / _1
  round_trip(t, cable);
}

const char* k_head =
    "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
    "<key id=\"type\" for=\"node\" attr.name=\"type\" attr.type=\"string\"/>\n"
    "<key id=\"ports\" for=\"node\" attr.name=\"ports\" attr.type=\"string\"/>\n"
    "<key id=\"a_port\" for=\"edge\" attr.name=\"a_port\" attr.type=\"string\"/>\n"
    "<key id=\"b_port\" for=\"edge\" attr.name=\"b_port\" attr.type=\"string\"/>\n"
    "<key id=\"gbps\" for=\"edge\" attr.name=\"gbps\" attr.type=\"string\"/>\n"
    "<key id=\"length_m\" for=\"edge\" attr.name=\"length_m\" attr.type=\"string\"/>\n"
    "<graph id=\"g\" edgedefault=\"undirected\">\n";

std::string node(const std::string& id, const std::string& type, const std::string& ports = "") {
  std::string s = "<node id=\"" + id + "\"><data key=\"type\">" + type + "</data>";
  if (!ports.empty()) s += "<data key=\"ports\">" + ports + "</data>";
  return s + "</node>\n";
}
std::string edge(const std::string& a, const std::string& b, const std::string& data = "") {
  return "<edge source=\"" + a + "\" target=\"" + b + "\">" + data + "</edge>\n";
}
std::string doc(const std::string& body) { return k_head + body + "</graph>\n</graphml>\n"; }

fabric_layout parse(const std::string& text) {
  return topology::parse_graph_layout(text, "my.graphml", false, topology_params{}, cable_params{});
}

// Two switches s0, s1 with one cable between them and one host on each: the base the error cases edit.
std::string two_switches(const std::string& extra_nodes = "", const std::string& extra_edges = "") {
  return doc(node("s0", "switch", "4") + node("s1", "switch", "4") + node("h0", "host") + node("h1", "host") +
             extra_nodes + edge("h0", "s0") + edge("s1", "h1") + edge("s0", "s1") + extra_edges);
}

TEST(GraphFile, PortsLeftOutAreTheLowestFreeInFileOrderAndDefaultsApply) {
  // s0: h0 takes port 0; the s0-s1 cable names s0 port 3, so the second s0-s1 cable gets port 1.
  // s1: h1 is the b end written first as source: it still becomes end a, on s1 port 0; the cables get 1, 2.
  const fabric_layout l = parse(doc(node("s0", "switch", "4") + node("s1", "switch", "4") + node("h0", "host") +
                                    node("h1", "host") + edge("h0", "s0") + edge("s1", "h1") +
                                    edge("s0", "s1", "<data key=\"a_port\">3</data><data key=\"gbps\">800</data>") +
                                    edge("s0", "s1", "<data key=\"length_m\">7</data>")));
  ASSERT_EQ(l.hosts, 2u);
  ASSERT_EQ(l.cables.size(), 4u);
  EXPECT_EQ(l.host_leaf, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(l.host_port, (std::vector<unsigned>{0, 0}));
  EXPECT_EQ(l.cables[1].a, 1u);  // h1
  EXPECT_EQ(l.cables[1].b, 3u);  // s1: devices are hosts first, then switches in file order
  EXPECT_EQ(l.cables[2].a_port, 3u);
  EXPECT_EQ(l.cables[2].b_port, 1u);
  EXPECT_EQ(l.cables[3].a_port, 1u);
  EXPECT_EQ(l.cables[3].b_port, 2u);
  EXPECT_EQ(l.cables[2].suffix, "_0");
  EXPECT_EQ(l.cables[3].suffix, "_1");
  const topology_params d;
  const cable_params c;
  EXPECT_EQ(l.cables[0].ab.rate_gbps, d.link_gbps);
  EXPECT_EQ(l.cables[0].ab.propagation_ns, d.host_cable_m * c.ns_per_metre);
  EXPECT_EQ(l.cables[2].ab.rate_gbps, 800.0);
  EXPECT_EQ(l.cables[2].ab.propagation_ns, d.leaf_spine_cable_m * c.ns_per_metre);
  EXPECT_EQ(l.cables[3].ab.propagation_ns, 7.0 * c.ns_per_metre);
  EXPECT_EQ(l.link_name(4), "s0_to_s1_0");
}

TEST(GraphFile, DotReadsLikeGraphml) {
  const std::string dot =
      "graph fabric {\n  sw0 [type=switch, ports=2];\n  h0 [type=host];\n  h1 [type=host];\n"
      "  h0 -- sw0 [b_port=1];\n  h1 -- sw0 [gbps=200];\n}\n";
  const fabric_layout l = topology::parse_graph_layout(dot, "f.dot", true, topology_params{}, cable_params{});
  EXPECT_EQ(l.hosts, 2u);
  ASSERT_EQ(l.switches.size(), 1u);
  EXPECT_EQ(l.switches[0].name, "sw0");
  EXPECT_EQ(l.host_port, (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(l.cables[1].ab.rate_gbps, 200.0);
}

void expect_error(const std::string& text, const std::vector<std::string>& parts) {
  try {
    parse(text);
    ADD_FAILURE() << "no error; expected one containing '" << parts.front() << "'";
  } catch (const core::config_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("my.graphml: ", 0), 0u) << what;
    for (const auto& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  }
}

TEST(GraphFile, EachMalformedFileNamesTheCulprit) {
  expect_error(two_switches(node("x", "router")), {"node 'x'", "type 'router'", "expected switch or host"});
  expect_error(two_switches(node("host7", "host")), {"node 'host7'", "named h0 .. h2"});
  expect_error(two_switches("", edge("h0", "s1")), {"edge h0 -- s1", "h0 is already cabled to s0"});
  expect_error(two_switches(node("h2", "host"), edge("h2", "h1")), {"edge h2 -- h1", "joins two hosts"});
  expect_error(two_switches(node("h2", "host"), edge("h2", "s0", "<data key=\"b_port\">4</data>")),
               {"edge h2 -- s0", "port 4 is beyond switch s0's 4 ports (0 .. 3)"});
  expect_error(two_switches("", edge("s0", "s1", "<data key=\"a_port\">1</data><data key=\"b_port\">1</data>") +
                                    edge("s1", "s0", "<data key=\"a_port\">1</data>")),
               {"edge s1 -- s0", "port 1 of switch s1 is already used by edge s0 -- s1"});
  expect_error(two_switches("", edge("s0", "s1", "<data key=\"gbps\">6400</data>")),
               {"edge s0 -- s1 gbps", "'6400'", "[1, 3200]"});
  expect_error(two_switches(node("s2", "switch", "2") + node("h2", "host"), edge("h2", "s2")),
               {"no path between hosts h0 and h2"});
  expect_error(two_switches(node("h2", "host")), {"node 'h2'", "no cable"});
  expect_error(two_switches(node("s2", "switch")), {"node 's2'", "needs a ports attribute"});
  expect_error(
      doc(node("s0", "switch", "1") + node("h0", "host") + node("h1", "host") + edge("h0", "s0") + edge("h1", "s0")),
      {"edge h1 -- s0", "switch s0 has no free port left"});
  expect_error("<graphml><graph", {"not a readable GraphML file"});
}

// Spectrum-4's ports under switch.port_config 128x400, as testbench/scenario.cpp passes them.
topology::port_speed_limit spectrum_400g() {
  topology::port_speed_limit limit;
  limit.gbps = 400.0;
  limit.setting = "switch.port_config 128x400";
  limit.remedy = [](double gbps) { return "use " + std::to_string(int(gbps)); };
  return limit;
}

std::string speed_error(const std::string& text, const topology_params& topo = {}) {
  try {
    topology::parse_graph_layout(text, "my.graphml", false, topo, cable_params{}, spectrum_400g());
  } catch (const core::config_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(GraphFile, ACableFasterThanTheSwitchPortsIsRefusedNamingEdgeSwitchAndPortConfig) {
  EXPECT_EQ(speed_error(two_switches("", edge("s1", "s0", "<data key=\"gbps\">800</data>"))),
            "my.graphml: edge s1 -- s0: 800 Gb/s at switch s1, faster than the 400 Gb/s ports of switch.port_config "
            "128x400; use 800");
  // A host cable: the switch end is named, whichever end the file puts first.
  EXPECT_EQ(speed_error(two_switches(node("h2", "host"), edge("s0", "h2", "<data key=\"gbps\">401</data>"))),
            "my.graphml: edge s0 -- h2: 401 Gb/s at switch s0, faster than the 400 Gb/s ports of switch.port_config "
            "128x400; use 401");
  // No gbps on the edge: the default rate, said to be topology.link_gbps. The first edge in file order fails.
  topology_params fast;
  fast.link_gbps = 800.0;
  EXPECT_EQ(speed_error(two_switches(), fast),
            "my.graphml: edge h0 -- s0: 800 Gb/s (topology.link_gbps; the edge has no gbps) at switch s0, faster "
            "than the 400 Gb/s ports of switch.port_config 128x400; use 800");
  // At the port rate or below, and with no limit, the same files are read.
  EXPECT_EQ(speed_error(two_switches("", edge("s1", "s0", "<data key=\"gbps\">400</data>"))), "no error");
  EXPECT_NO_THROW(topology::parse_graph_layout(two_switches(), "my.graphml", false, fast, cable_params{}));
}

TEST(GraphFile, AMissingFileOrUnknownExtensionIsAClearError) {
  EXPECT_THROW(topology::read_graph_layout("/nonexistent/x.graphml", {}, {}), core::config_error);
  try {
    topology::read_graph_layout("/nonexistent/x.graphml", {}, {});
  } catch (const core::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.graphml: cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace graph_file_test
}  // namespace fabricsim::test
