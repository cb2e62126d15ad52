// The dragonfly builder's wiring against hand formulas (Kim, Dally, Scott and Abts, ISCA 2008): counts of
// switches, hosts and cables per tier for two sizes, names and port counts, one global cable between every
// pair of groups in the canonical g = a x h + 1, the parallel cables of fewer groups, every port used once,
// rates and lengths per tier, and bad keys refused naming the key. Routes: tests/topology/fabric_test.cpp.
#include "sc_models/topology/dragonfly.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace fabricsim::test {
namespace dragonfly_test {

using topology::fabric_layout;
using topology::topology_params;

topology_params dragonfly(uint64_t p, uint64_t a, uint64_t h, uint64_t g = 0) {
  topology_params t;
  t.kind = "dragonfly";
  t.hosts_per_router = p;
  t.routers_per_group = a;
  t.global_links_per_router = h;
  t.dragonfly_groups = g;
  return t;
}

// Cables of each kind, from the names of their ends: a host cable has a host end; a local cable joins two
// routers g<i>r.. of one group; a global cable two groups. Also every (switch, port) used, to check each once.
struct census {
  size_t host = 0, local = 0, global = 0;
  std::map<std::pair<uint64_t, uint64_t>, size_t> per_group_pair;
  std::map<std::pair<size_t, unsigned>, size_t> port_uses;  // (device, port)
};

size_t uses(const census& c, size_t device, unsigned port) {
  const auto it = c.port_uses.find({device, port});
  return it == c.port_uses.end() ? 0 : it->second;
}

uint64_t group_of(const std::string& router) { return std::stoull(router.substr(1, router.find('r') - 1)); }

census count(const fabric_layout& l) {
  census c;
  for (const auto& cab : l.cables) {
    ++c.port_uses[{cab.b, cab.b_port}];
    if (cab.a < l.hosts) {
      ++c.host;
      continue;
    }
    ++c.port_uses[{cab.a, cab.a_port}];
    const uint64_t ga = group_of(l.device_name(cab.a)), gb = group_of(l.device_name(cab.b));
    if (ga == gb) {
      ++c.local;
    } else {
      ++c.global;
      ++c.per_group_pair[{std::min(ga, gb), std::max(ga, gb)}];
    }
  }
  return c;
}

// The counts, for p hosts per router, a routers per group, h global cables per router and g groups:
//   routers g x a; hosts g x a x p; ports per router p + (a - 1) + h;
//   host cables g x a x p; local cables g x a x (a - 1) / 2 (all-to-all in each group); global cables
//   g x a x h / 2 (every router end of one is one of the g x a x h global ports).
// p = h = 1, a = 2, g = 3:  6 routers, 6 hosts, 3 ports; cables 6 + 3 + 3 = 12.
// p = h = 2, a = 4, g = 9: 36 routers, 72 hosts, 7 ports; cables 72 + 54 + 36 = 162.
struct sizes {
  uint64_t p, a, h, g, routers, hosts, ports, host_cables, local_cables, global_cables;
};

TEST(dragonfly, counts_names_and_ports_follow_the_formulas_for_two_sizes) {
  for (const sizes& s : {sizes{1, 2, 1, 3, 6, 6, 3, 6, 3, 3}, sizes{2, 4, 2, 9, 36, 72, 7, 72, 54, 36}}) {
    SCOPED_TRACE("p=" + std::to_string(s.p) + " a=" + std::to_string(s.a) + " h=" + std::to_string(s.h));
    const topology_params t = dragonfly(s.p, s.a, s.h);  // groups 0: the canonical a x h + 1
    ASSERT_NO_THROW(t.validate());
    EXPECT_EQ(t.host_count(), s.hosts);
    EXPECT_EQ(t.switch_count(), s.routers);
    EXPECT_EQ(t.leaf_count(), s.routers);  // every router has hosts
    const fabric_layout l = topology::plan_fabric(t, {});
    ASSERT_EQ(l.hosts, s.hosts);
    ASSERT_EQ(l.switches.size(), s.routers);
    for (uint64_t i = 0; i < s.g; ++i)
      for (uint64_t r = 0; r < s.a; ++r) {
        EXPECT_EQ(l.switches[i * s.a + r].name, "g" + std::to_string(i) + "r" + std::to_string(r));
        EXPECT_EQ(l.switches[i * s.a + r].ports, s.ports);
      }
    for (size_t k = 0; k < s.hosts; ++k) {
      EXPECT_EQ(topology::leaf_of(t, k), k / s.p);
      EXPECT_EQ(l.host_leaf[k], k / s.p);
      EXPECT_EQ(l.host_port[k], k % s.p);
    }
    const census c = count(l);
    EXPECT_EQ(c.host, s.host_cables);
    EXPECT_EQ(c.local, s.local_cables);
    EXPECT_EQ(c.global, s.global_cables);
    EXPECT_EQ(l.cables.size(), s.host_cables + s.local_cables + s.global_cables);
    // Canonical: exactly one global cable between every pair of groups, g x (g - 1) / 2 pairs.
    EXPECT_EQ(c.per_group_pair.size(), s.g * (s.g - 1) / 2);
    for (const auto& [pair, n] : c.per_group_pair) EXPECT_EQ(n, 1u) << pair.first << "-" << pair.second;
    // Every port of every router carries exactly one cable.
    for (size_t sw = 0; sw < s.routers; ++sw)
      for (unsigned port = 0; port < s.ports; ++port)
        EXPECT_EQ(uses(c, l.hosts + sw, port), 1u) << l.switches[sw].name << " port " << port;
    EXPECT_EQ(c.port_uses.size(), s.routers * s.ports);
  }
}

TEST(dragonfly, every_router_has_one_local_cable_to_each_router_of_its_group_and_h_global_cables) {
  const topology_params t = dragonfly(2, 4, 2);
  const fabric_layout l = topology::plan_fabric(t, {});
  std::map<size_t, std::set<size_t>> local;
  std::map<size_t, size_t> global;
  for (const auto& cab : l.cables) {
    if (cab.a < l.hosts) continue;
    const size_t a = cab.a - l.hosts, b = cab.b - l.hosts;
    if (a / 4 == b / 4) {
      EXPECT_TRUE(local[a].insert(b).second) << "two local cables " << l.switches[a].name << "-" << l.switches[b].name;
      EXPECT_TRUE(local[b].insert(a).second);
    } else {
      ++global[a];
      ++global[b];
    }
  }
  for (size_t sw = 0; sw < 36; ++sw) {
    EXPECT_EQ(local[sw].size(), 3u) << l.switches[sw].name;
    EXPECT_EQ(global[sw], 2u) << l.switches[sw].name;
  }
  // The first global port of group 0 (g0r0's port p + a - 1 = 5) leads to group 1's first (g1r0 port 5).
  const auto it = std::find_if(l.cables.begin(), l.cables.end(),
                               [&](const auto& c) { return c.a == l.hosts + 0 && c.a_port == 5; });
  ASSERT_NE(it, l.cables.end());
  EXPECT_EQ(l.device_name(it->b), "g1r0");
  EXPECT_EQ(it->b_port, 5u);
  // Group 0's last global port (q = 7: g0r3's port 6) leads to group 8, whose port q = 0 is g8r0's port 5.
  const auto last = std::find_if(l.cables.begin(), l.cables.end(),
                                 [&](const auto& c) { return c.a == l.hosts + 3 && c.a_port == 6; });
  ASSERT_NE(last, l.cables.end());
  EXPECT_EQ(l.device_name(last->b), "g8r0");
  EXPECT_EQ(last->b_port, 5u);
}

TEST(dragonfly, fewer_groups_share_the_global_cables_as_parallel_cables) {
  // a = 4, h = 2: 8 global ports per group; 3 groups: 8 / 2 = 4 cables per pair of groups. Group i's global
  // ports 0..3 go to its first other group, 4..7 to its second; port q is router q / 2. By hand:
  //   0-1: g0r0, g0r0, g0r1, g0r1 (ports 0..3) to g1r0, g1r0, g1r1, g1r1 (group 1's ports 0..3)
  //   0-2: g0r2, g0r2, g0r3, g0r3 (ports 4..7) to g2r0, g2r0, g2r1, g2r1 (group 2's ports 0..3)
  //   1-2: g1r2, g1r2, g1r3, g1r3 (ports 4..7) to g2r2, g2r2, g2r3, g2r3 (group 2's ports 4..7)
  const topology_params t = dragonfly(2, 4, 2, 3);
  ASSERT_NO_THROW(t.validate());
  const fabric_layout l = topology::plan_fabric(t, {});
  const census c = count(l);
  EXPECT_EQ(c.global, 3u * 4 / 2 * 2);  // g x a x h / 2 = 12
  ASSERT_EQ(c.per_group_pair.size(), 3u);
  for (const auto& [pair, n] : c.per_group_pair) EXPECT_EQ(n, 4u);
  std::set<std::string> names;
  for (size_t k = 0; k < l.links(); k += 2) names.insert(l.link_name(k));
  for (const char* pair :
       {"g0r0_to_g1r0", "g0r1_to_g1r1", "g0r2_to_g2r0", "g0r3_to_g2r1", "g1r2_to_g2r2", "g1r3_to_g2r3"})
    for (const char* k : {"_0", "_1"}) EXPECT_EQ(names.count(pair + std::string(k)), 1u) << pair << k;
  EXPECT_EQ(names.count("g0r0_to_g1r0"), 0u);  // parallel cables always carry their suffix
  EXPECT_EQ(names.count("g0r0_to_g0r1"), 1u);  // a local cable is alone
}

TEST(dragonfly, rates_and_lengths_per_tier) {
  topology_params t = dragonfly(1, 2, 1);
  t.link_gbps = 200;
  t.uplink_gbps = 800;
  t.host_cable_m = 3;
  t.local_cable_m = 7;
  t.global_cable_m = 40;
  topology::cable_params cable;
  cable.ns_per_metre = 5;
  const fabric_layout l = topology::plan_fabric(t, cable);
  size_t seen[3] = {0, 0, 0};
  for (const auto& cab : l.cables) {
    const bool host = cab.a < l.hosts;
    const bool local = !host && group_of(l.device_name(cab.a)) == group_of(l.device_name(cab.b));
    // Hand values: 3 m, 7 m and 40 m at 5 ns/m.
    EXPECT_EQ(cab.ab.rate_gbps, host ? 200.0 : 800.0);
    EXPECT_EQ(cab.ab.propagation_ns, host ? 15.0 : local ? 35.0 : 200.0);
    ++seen[host ? 0 : local ? 1 : 2];
  }
  EXPECT_EQ(seen[0], 6u);
  EXPECT_EQ(seen[1], 3u);
  EXPECT_EQ(seen[2], 3u);
  // A router's 1 x 200 Gb/s of hosts over (a - 1 + h) = 2 cables at 800 Gb/s.
  EXPECT_DOUBLE_EQ(t.leaf_oversubscription(), 200.0 / 1600.0);
  EXPECT_DOUBLE_EQ(dragonfly(2, 4, 2).leaf_oversubscription(), 2.0 / 5.0);  // 2 hosts over 3 local + 2 global
}

std::string validation_error(const topology_params& t) {
  try {
    t.validate();
  } catch (const core::config_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(dragonfly, bad_keys_are_refused_naming_the_key) {
  EXPECT_EQ(validation_error(dragonfly(2, 0, 2)), "topology.routers_per_group: 0 is out of range [1, 1024] switches");
  EXPECT_EQ(validation_error(dragonfly(0, 4, 2)), "topology.hosts_per_router: 0 is out of range [1, 1024] hosts");
  EXPECT_EQ(validation_error(dragonfly(2, 4, 0)),
            "topology.global_links_per_router: 0 is out of range [1, 1024] links");
  EXPECT_EQ(validation_error(dragonfly(2, 4, 2, 5000)),
            "topology.dragonfly_groups: 5000 is out of range [0, 4096] groups");
  EXPECT_EQ(validation_error(dragonfly(2, 4, 2, 1)),
            "topology.dragonfly_groups: 1 group; a dragonfly needs at least 2 (0: routers_per_group x "
            "global_links_per_router = 8 + 1 = 9, one global cable between every pair of groups)");
  EXPECT_EQ(validation_error(dragonfly(2, 4, 2, 10)),
            "topology.dragonfly_groups: 10 groups, more than routers_per_group x global_links_per_router = 8 + 1 "
            "= 9: a group has 8 global cables, at least one to every other group; raise topology.routers_per_group "
            "or topology.global_links_per_router");
  // 8 global ports over 3 other groups: 8 / 3 is no whole number; 1, 2, 4, 8 other groups are.
  EXPECT_EQ(validation_error(dragonfly(2, 4, 2, 4)),
            "topology.dragonfly_groups: 4 groups cannot share a group's routers_per_group x global_links_per_router "
            "= 8 global cables evenly over the 3 other groups; use a count whose other groups divide 8 (2, 3, 5, 9; "
            "0 for 9)");
  // a = 1024, h = 2: 2049 groups of 1024 routers.
  EXPECT_NE(validation_error(dragonfly(1, 1024, 2)).find("= 2049 x 1024 = 2098176 switches, above the limit of 4096"),
            std::string::npos);
  // a = 16, p = 1024, h = 1: 17 groups, 272 routers, 278528 hosts.
  EXPECT_NE(validation_error(dragonfly(1024, 16, 1)).find("= 17 x 16 x 1024 = 278528 hosts, above the limit of 16384"),
            std::string::npos);
  topology_params t = dragonfly(2, 4, 2);
  t.uplink_gbps = 0.5;
  EXPECT_NE(validation_error(t).find("topology.uplink_gbps"), std::string::npos);
  EXPECT_THROW(topology::plan_fabric(dragonfly(2, 4, 2, 4), {}), core::config_error);
}

}  // namespace dragonfly_test
}  // namespace fabricsim::test
