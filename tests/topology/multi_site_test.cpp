// The multi_site builder (sc_models/topology/multi_site.h) against hand counts: switches, hosts, cables per
// tier, port counts, names, the inter-site cables' rate and latency (inter_site_km x 1000 m x 5 ns/m + FEC),
// every port used once; and bad keys refused naming the key. Routes: tests/topology/fabric_test.cpp.
#include "sc_models/topology/multi_site.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

namespace fabricsim::test {
namespace multi_site_test {

using topology::fabric_layout;
using topology::topology_params;

topology_params sites(uint64_t n, uint64_t edges = 1, uint64_t links = 1, double km = 10.0) {
  topology_params t;
  t.kind = "multi_site";
  t.sites = n;
  t.leaves = 2;
  t.hosts_per_leaf = 2;
  t.spines = 2;
  t.site_edges = edges;
  t.inter_site_links = links;
  t.inter_site_km = km;
  return t;
}

std::string site_of(const std::string& sw) { return sw.substr(0, sw.find('_')); }

TEST(multi_site, two_sites_counts_ports_and_names_by_hand) {
  const topology_params t = sites(2, 1, 2);
  const fabric_layout l = topology::plan_fabric(t, {});
  // 2 sites x (2 leaves + 2 spines + 1 edge) = 10 switches; 2 x 2 x 2 = 8 hosts.
  ASSERT_EQ(l.switches.size(), 10u);
  EXPECT_EQ(t.switch_count(), 10u);
  EXPECT_EQ(l.hosts, 8u);
  const std::vector<std::pair<std::string, uint64_t>> expect = {
      {"s0_leaf0", 4},  {"s0_leaf1", 4},  {"s1_leaf0", 4},  {"s1_leaf1", 4},   // 2 hosts + 2 spines
      {"s0_spine0", 3}, {"s0_spine1", 3}, {"s1_spine0", 3}, {"s1_spine1", 3},  // 2 leaves + 1 edge
      {"s0_edge0", 4},  {"s1_edge0", 4}};                                      // 2 spines + 1 site x 2 cables
  for (size_t i = 0; i < expect.size(); ++i) {
    EXPECT_EQ(l.switches[i].name, expect[i].first);
    EXPECT_EQ(l.switches[i].ports, expect[i].second) << expect[i].first;
  }
  // Cables: 8 host + 2 sites x 2 leaves x 2 spines + 2 sites x 2 spines x 1 edge + 1 pair x 1 edge x 2 = 22.
  ASSERT_EQ(l.cables.size(), 22u);
  std::map<std::string, size_t> tiers;
  std::map<std::pair<size_t, unsigned>, size_t> port_uses;
  for (size_t k = 0; k < l.cables.size(); ++k) {
    const auto& c = l.cables[k];
    ++port_uses[{c.b, c.b_port}];
    if (c.a < l.hosts) {
      ++tiers["host"];
      continue;
    }
    ++port_uses[{c.a, c.a_port}];
    const std::string a = l.device_name(c.a), b = l.device_name(c.b);
    if (site_of(a) != site_of(b)) {
      ++tiers["inter_site"];
      EXPECT_TRUE(topology::is_site_edge(a) && topology::is_site_edge(b)) << a << " " << b;
      EXPECT_EQ(c.ab.propagation_ns, 10.0 * 1000.0 * 5.0);  // 10 km at 5 ns/m = 50 us
      EXPECT_EQ(c.ab.rate_gbps, 400.0);
      EXPECT_EQ(l.link_name(2 * k), "s0_edge0_to_s1_edge0_" + std::to_string(tiers["inter_site"] - 1));
    } else if (topology::is_site_edge(b)) {
      ++tiers["spine_edge"];
      EXPECT_EQ(c.ab.propagation_ns, 30.0 * 5.0);  // spine_core_cable_m
    } else {
      ++tiers["leaf_spine"];
    }
  }
  EXPECT_EQ(tiers["host"], 8u);
  EXPECT_EQ(tiers["leaf_spine"], 8u);
  EXPECT_EQ(tiers["spine_edge"], 4u);
  EXPECT_EQ(tiers["inter_site"], 2u);
  size_t switch_ports = 0;
  for (const auto& sw : l.switches) switch_ports += sw.ports;
  EXPECT_EQ(port_uses.size(), switch_ports);  // every switch port cabled (host ends are not counted)
  for (const auto& [end, n] : port_uses) EXPECT_EQ(n, 1u) << l.device_name(end.first) << " port " << end.second;
  // Hosts: site-major; host 5 is in site 1 under s1_leaf0 (switch 2) at port 1.
  EXPECT_EQ(l.host_leaf[5], 2u);
  EXPECT_EQ(l.host_port[5], 1u);
  EXPECT_EQ(topology::leaf_of(t, 5), 2u);
}

TEST(multi_site, three_sites_join_every_pair_of_edges) {
  const topology_params t = sites(3, 2, 1, 100.0);
  const fabric_layout l = topology::plan_fabric(t, {});
  // 3 x (2 + 2 + 2) = 18 switches; an edge has 2 spines + 2 other sites x 1 cable = 4 ports; a spine 2 + 2.
  ASSERT_EQ(l.switches.size(), 18u);
  EXPECT_EQ(l.switches[12].name, "s0_edge0");
  EXPECT_EQ(l.switches[12].ports, 4u);
  EXPECT_EQ(l.switches[6].ports, 4u);
  std::map<std::pair<std::string, std::string>, size_t> pairs;
  for (const auto& c : l.cables)
    if (c.a >= l.hosts && site_of(l.device_name(c.a)) != site_of(l.device_name(c.b))) {
      ++pairs[{l.device_name(c.a), l.device_name(c.b)}];
      EXPECT_EQ(c.ab.propagation_ns, 100.0 * 1000.0 * 5.0);  // 0.5 ms
    }
  // Edge e of every site to edge e of every other: 3 pairs of sites x 2 edges.
  const std::map<std::pair<std::string, std::string>, size_t> expect = {
      {{"s0_edge0", "s1_edge0"}, 1}, {{"s0_edge1", "s1_edge1"}, 1}, {{"s0_edge0", "s2_edge0"}, 1},
      {{"s0_edge1", "s2_edge1"}, 1}, {{"s1_edge0", "s2_edge0"}, 1}, {{"s1_edge1", "s2_edge1"}, 1}};
  EXPECT_EQ(pairs, expect);
}

std::string validation_error(const topology_params& t) {
  try {
    t.validate();
  } catch (const core::config_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(multi_site, bad_distance_and_site_counts_are_refused_naming_the_key) {
  EXPECT_EQ(validation_error(sites(2, 1, 1, 5.0)), "topology.inter_site_km: 5 is out of range [10, 100] km");
  EXPECT_EQ(validation_error(sites(2, 1, 1, -10.0)), "topology.inter_site_km: -10 is out of range [10, 100] km");
  EXPECT_EQ(validation_error(sites(2, 1, 1, 150.0)), "topology.inter_site_km: 150 is out of range [10, 100] km");
  EXPECT_NE(validation_error(sites(1)).find("topology.sites: 1 sites; multi_site builds 2 or 3"), std::string::npos);
  EXPECT_NE(validation_error(sites(4)).find("topology.sites: 4 sites"), std::string::npos);
  topology_params t = sites(2);
  t.inter_site_gbps = 0.5;
  EXPECT_NE(validation_error(t).find("topology.inter_site_gbps"), std::string::npos);
  EXPECT_EQ(validation_error(sites(3, 1, 1, 100.0)), "no error");
}

}  // namespace multi_site_test
}  // namespace fabricsim::test
