// The fabric builders against hand formulas: switch, port and link counts per kind, names, symmetric
// wiring, leaf_of, routes (every host reaches every other, every path is a shortest one, ECMP set sizes per
// tier), oversubscription, per-tier link rates and latencies, size validation; and one packet timed end to
// end through each kind with the output-queued switch.
#include "sc_models/topology/fabric.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "sc_models/switch/oq_switch.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace fabric_test {

using nlohmann::json;
using topology::topology_params;

// A switch that only records what the builder told it: its egress links and routes.
class recording_switch : public sw::switch_device {
 public:
  recording_switch(std::string name, unsigned ports) : out(ports, nullptr), m_name(std::move(name)) {}
  void connect_port(unsigned port, core::link& l) override { out.at(port) = &l; }
  void add_route(const core::ip_address& dst, std::vector<unsigned> ports) override {
    routes[dst.octets] = std::move(ports);
  }
  unsigned ports() const override { return unsigned(out.size()); }
  const char* device_name() const override { return m_name.c_str(); }
  void receive(core::packet*, unsigned) override {}

  std::vector<core::link*> out;
  std::map<std::array<uint8_t, 16>, std::vector<unsigned>> routes;

 private:
  std::string m_name;
};

// Builds the fabric with recording switches in a child and reports what it is: switches, links, hosts,
// wiring errors, and for every (source, destination) pair the hop counts (switches traversed) of every
// path the routes allow.
json describe(const topology_params& topo, const topology::cable_params& cable = {}) {
  const child_result c = run_in_child([&] {
    core::sim_context ctx;
    const sw::switch_factory make = [](const std::string& name, unsigned ports) {
      return std::make_unique<recording_switch>(name, ports);
    };
    topology::fabric fab(topo, cable, make, {}, {}, std::vector<uint64_t>(topo.host_count(), 0), ctx);
    std::map<const core::packet_sink*, size_t> switch_index;
    std::vector<recording_switch*> sws;
    for (auto& s : fab.switches()) {
      sws.push_back(dynamic_cast<recording_switch*>(s.get()));
      switch_index[s.get()] = sws.size() - 1;
    }
    json out;
    out["errors"] = json::array();
    auto error = [&](const std::string& e) { out["errors"].push_back(e); };
    for (auto* s : sws) out["switches"].push_back({{"name", s->device_name()}, {"ports", s->ports()}});
    for (auto& l : fab.links())
      out["links"].push_back({{"name", l->name()}, {"gbps", l->rate().gbps()}, {"latency_ps", l->latency().value}});
    for (auto& h : fab.hosts()) {
      const auto* up = h.nic->out_link();
      const auto it = switch_index.find(up->sink());
      out["hosts"].push_back({{"leaf", h.leaf},
                              {"server", h.server},
                              {"rail", h.rail},
                              {"attached", it == switch_index.end() ? -1 : int64_t(it->second)}});
    }
    // Every cable is symmetric: switch u's port p reaches (v, q), and v's port q comes back to (u, p).
    for (size_t u = 0; u < sws.size(); ++u) {
      for (unsigned p = 0; p < sws[u]->ports(); ++p) {
        const core::link* l = sws[u]->out[p];
        if (l == nullptr || l->sink() == nullptr) {
          error(std::string(sws[u]->device_name()) + " port " + std::to_string(p) + " unwired");
          continue;
        }
        const core::link* back = nullptr;
        if (auto it = switch_index.find(l->sink()); it != switch_index.end())
          back = sws[it->second]->out.at(l->sink_port());
        else
          for (auto& h : fab.hosts())
            if (h.nic.get() == l->sink()) back = h.nic->out_link();
        if (back == nullptr || back->sink() != sws[u] || back->sink_port() != p)
          error(std::string(l->name()) + " has no matching link back");
      }
    }
    // Every path the routes allow, from each source to each destination.
    const size_t n = fab.hosts().size();
    out["ecmp"] = json::array();
    for (auto* s : sws) {
      json row = json::array();
      for (auto& h : fab.hosts()) {
        auto it = s->routes.find(h.ip.octets);
        row.push_back(it == s->routes.end() ? 0 : it->second.size());
      }
      out["ecmp"].push_back(row);
    }
    for (size_t src = 0; src < n; ++src) {
      json row = json::array();
      for (size_t dst = 0; dst < n; ++dst) {
        if (src == dst) {
          row.push_back(json::array({0, 0, 0}));
          continue;
        }
        const topology::host& d = fab.hosts()[dst];
        uint64_t lo = UINT64_MAX, hi = 0, paths = 0;
        std::function<void(size_t, uint64_t)> walk = [&](size_t u, uint64_t hops) {
          if (hops > 8) return error("loop towards " + d.name);
          auto it = sws[u]->routes.find(d.ip.octets);
          if (it == sws[u]->routes.end() || it->second.empty())
            return error(std::string(sws[u]->device_name()) + " has no route to " + d.name);
          for (unsigned p : it->second) {
            const core::packet_sink* next = sws[u]->out.at(p)->sink();
            if (next == d.nic.get()) {
              lo = std::min(lo, hops), hi = std::max(hi, hops), ++paths;
            } else if (auto sit = switch_index.find(next); sit != switch_index.end()) {
              walk(sit->second, hops + 1);
            } else {
              error(std::string(sws[u]->device_name()) + " sends " + d.name + "'s packets to another host");
            }
          }
        };
        walk(switch_index.at(fab.hosts()[src].nic->out_link()->sink()), 1);
        row.push_back(json::array({paths ? lo : 0, hi, paths}));
      }
      out["hops"].push_back(row);
    }
    return out.dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  return c.ok ? json::parse(c.output) : json::object();
}

// The expectations of one fabric, from hand formulas.
struct expected {
  std::vector<std::pair<std::string, unsigned>> switches;  // name, ports, in creation order
  size_t links;
  std::function<uint64_t(size_t, size_t)> hops;            // switches on every path from src to dst
  std::function<uint64_t(size_t, size_t)> paths;           // distinct equal-cost paths
  std::function<uint64_t(size_t, size_t)> ecmp;            // ECMP set size at switch s towards host h
};

void check(const topology_params& topo, const json& r, const expected& e) {
  ASSERT_TRUE(r.contains("switches"));
  EXPECT_TRUE(r["errors"].empty()) << r["errors"].dump(1);
  ASSERT_EQ(r["switches"].size(), e.switches.size());
  EXPECT_EQ(topo.switch_count(), e.switches.size());
  for (size_t s = 0; s < e.switches.size(); ++s) {
    EXPECT_EQ(r["switches"][s]["name"], e.switches[s].first) << s;
    EXPECT_EQ(r["switches"][s]["ports"], e.switches[s].second) << e.switches[s].first;
  }
  EXPECT_EQ(r["links"].size(), e.links);
  const size_t n = r["hosts"].size();
  ASSERT_EQ(n, topo.host_count());
  for (size_t h = 0; h < n; ++h) {
    EXPECT_EQ(r["hosts"][h]["leaf"], topology::leaf_of(topo, h)) << "h" << h;
    EXPECT_EQ(r["hosts"][h]["attached"], topology::leaf_of(topo, h)) << "h" << h;
  }
  size_t bad_hops = 0, bad_ecmp = 0;
  for (size_t src = 0; src < n; ++src) {
    for (size_t dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      const json& h = r["hops"][src][dst];
      // Shortest paths only: the shortest and the longest allowed path both have the hand-derived length.
      if (h[0] != e.hops(src, dst) || h[1] != e.hops(src, dst) || h[2] != e.paths(src, dst)) {
        if (++bad_hops <= 5)
          ADD_FAILURE() << "h" << src << " -> h" << dst << ": [min, max, paths] " << h.dump() << ", expected "
                        << e.hops(src, dst) << " hops over " << e.paths(src, dst) << " paths";
      }
    }
  }
  for (size_t s = 0; s < e.switches.size(); ++s)
    for (size_t h = 0; h < n; ++h)
      if (r["ecmp"][s][h] != e.ecmp(s, h) && ++bad_ecmp <= 5)
        ADD_FAILURE() << e.switches[s].first << " -> h" << h << ": ECMP set of " << r["ecmp"][s][h] << ", expected "
                      << e.ecmp(s, h);
  EXPECT_EQ(bad_hops, 0u);
  EXPECT_EQ(bad_ecmp, 0u);
}

std::string num(size_t i) { return std::to_string(i); }

TEST(fabric, single_switch) {
  topology_params t;
  t.hosts = 5;
  expected e;
  e.switches = {{"sw0", 5}};
  e.links = 2 * 5;
  e.hops = [](size_t, size_t) { return 1; };
  e.paths = [](size_t, size_t) { return 1; };
  e.ecmp = [](size_t, size_t) { return 1; };
  check(t, describe(t), e);
}

// leaves L, hosts per leaf H, spines S, parallel links K.
expected leaf_spine_expectation(size_t L, size_t H, size_t S, size_t K) {
  expected e;
  for (size_t l = 0; l < L; ++l) e.switches.push_back({"leaf" + num(l), unsigned(H + S * K)});
  for (size_t s = 0; s < S; ++s) e.switches.push_back({"spine" + num(s), unsigned(L * K)});
  e.links = 2 * (L * H + L * S * K);
  e.hops = [=](size_t a, size_t b) { return a / H == b / H ? 1 : 3; };
  e.paths = [=](size_t a, size_t b) { return a / H == b / H ? 1 : S * K * K; };
  e.ecmp = [=](size_t s, size_t h) {
    if (s < L) return s == h / H ? size_t(1) : S * K;  // a leaf: down to its own hosts, else every uplink
    return K;                                          // a spine: the K cables down to the host's leaf
  };
  return e;
}

TEST(fabric, leaf_spine_oversubscribed_three_to_one) {
  topology_params t;
  t.kind = "leaf_spine";
  t.leaves = 3;
  t.hosts_per_leaf = 6;
  t.spines = 2;
  check(t, describe(t), leaf_spine_expectation(3, 6, 2, 1));
  EXPECT_DOUBLE_EQ(t.leaf_oversubscription(), 3.0);  // 6 x 400 down, 2 x 400 up
}

TEST(fabric, leaf_spine_with_parallel_uplinks) {
  topology_params t;
  t.kind = "leaf_spine";
  t.leaves = 3;
  t.hosts_per_leaf = 2;
  t.spines = 2;
  t.links_per_spine = 2;
  const json r = describe(t);
  check(t, r, leaf_spine_expectation(3, 2, 2, 2));
  std::set<std::string> names;
  for (const auto& l : r["links"]) names.insert(l["name"]);
  for (const char* name : {"leaf0_to_spine1_0", "leaf0_to_spine1_1", "spine1_to_leaf0_1", "h3_to_leaf1", "leaf1_to_h3"})
    EXPECT_EQ(names.count(name), 1u) << name;
}

// pods P, leaves per pod L, spines per pod S, cores C, hosts per leaf H, parallel leaf-spine links K.
expected three_tier_expectation(size_t P, size_t L, size_t S, size_t C, size_t H, size_t K) {
  const size_t plane = C / S;
  expected e;
  for (size_t p = 0; p < P; ++p)
    for (size_t l = 0; l < L; ++l) e.switches.push_back({"pod" + num(p) + "_leaf" + num(l), unsigned(H + S * K)});
  for (size_t p = 0; p < P; ++p)
    for (size_t s = 0; s < S; ++s) e.switches.push_back({"pod" + num(p) + "_spine" + num(s), unsigned(L * K + plane)});
  for (size_t c = 0; c < C; ++c) e.switches.push_back({"core" + num(c), unsigned(P)});
  e.links = 2 * (P * L * H + P * L * S * K + P * S * plane);
  auto leaf = [=](size_t h) { return h / H; };
  auto pod = [=](size_t h) { return h / H / L; };
  e.hops = [=](size_t a, size_t b) { return leaf(a) == leaf(b) ? 1 : pod(a) == pod(b) ? 3 : 5; };
  e.paths = [=](size_t a, size_t b) {
    if (leaf(a) == leaf(b)) return size_t(1);
    if (pod(a) == pod(b)) return S * K * K;
    return S * K * plane * K;  // up to any spine, any core of its plane, down the one spine, any cable
  };
  e.ecmp = [=](size_t s, size_t h) {
    if (s < P * L) return s == leaf(h) ? size_t(1) : S * K;
    if (s < P * (L + S)) return (s - P * L) / S == pod(h) ? K : plane;  // spine: down in its pod, else up
    return size_t(1);                                                    // core: the pod's spine of its plane
  };
  return e;
}

TEST(fabric, three_tier_with_core_planes) {
  topology_params t;
  t.kind = "three_tier";
  t.pods = 3;
  t.leaves = 2;
  t.spines = 2;
  t.cores = 4;
  t.hosts_per_leaf = 2;
  t.links_per_spine = 2;
  const json r = describe(t);
  check(t, r, three_tier_expectation(3, 2, 2, 4, 2, 2));
  // Plane wiring: spine 1 of every pod reaches cores 2 and 3 only.
  std::set<std::string> names;
  for (const auto& l : r["links"]) names.insert(l["name"]);
  for (size_t p = 0; p < 3; ++p) {
    for (size_t c = 0; c < 4; ++c) {
      EXPECT_EQ(names.count("pod" + num(p) + "_spine1_to_core" + num(c)), c >= 2 ? 1u : 0u) << p << " " << c;
      EXPECT_EQ(names.count("core" + num(c) + "_to_pod" + num(p) + "_spine0"), c < 2 ? 1u : 0u) << p << " " << c;
    }
  }
}

// groups G, servers per group H, rails R, spines S.
expected rail_expectation(size_t G, size_t H, size_t R, size_t S) {
  expected e;
  for (size_t l = 0; l < G * R; ++l) e.switches.push_back({"leaf" + num(l), unsigned(H + S)});
  for (size_t s = 0; s < S; ++s) e.switches.push_back({"spine" + num(s), unsigned(G * R)});
  e.links = 2 * (G * H * R + G * R * S);
  auto leaf = [=](size_t h) { return h / R / H * R + h % R; };  // group x rails + rail
  e.hops = [=](size_t a, size_t b) { return leaf(a) == leaf(b) ? 1 : 3; };
  e.paths = [=](size_t a, size_t b) { return leaf(a) == leaf(b) ? 1 : S; };
  e.ecmp = [=](size_t s, size_t h) { return s < G * R && s != leaf(h) ? S : size_t(1); };
  return e;
}

TEST(fabric, rail_optimized_same_rail_is_one_hop) {
  topology_params t;
  t.kind = "rail_optimized";
  t.groups = 2;
  t.hosts_per_leaf = 3;
  t.rails = 4;
  t.spines = 2;
  const json r = describe(t);
  check(t, r, rail_expectation(2, 3, 4, 2));
  // Endpoint e is NIC e % rails of server e / rails; h5 is NIC 1 of server 1 (group 0), on leaf1.
  ASSERT_EQ(r["hosts"].size(), 24u);
  for (size_t h = 0; h < 24; ++h) {
    EXPECT_EQ(r["hosts"][h]["server"], h / 4);
    EXPECT_EQ(r["hosts"][h]["rail"], h % 4);
  }
  EXPECT_EQ(r["hosts"][5]["leaf"], 1);
  EXPECT_EQ(r["hosts"][13]["leaf"], 5);  // server 3 is the first of group 1
  EXPECT_EQ(r["hops"][1][5][1], 1);      // same rail, same group: the rail leaf alone
  EXPECT_EQ(r["hops"][0][1][1], 3);      // same server, other rail: through a spine
  EXPECT_EQ(r["hops"][1][13][1], 3);     // same rail, other group
}

// Dragonfly p = h = 1, a = 2, g = 3 (counts: tests/topology/dragonfly_test.cpp). Its global cables, by the
// rule of topology/dragonfly.h (group i's global port q leads to its (q / m)-th other group, m = 1):
// g0r0-g1r0, g0r1-g2r0, g1r1-g2r1; with the local cables g0r0-g0r1, g1r0-g1r1, g2r0-g2r1 the routers form
// one ring g0r0, g0r1, g2r0, g2r1, g1r1, g1r0. Host k is on router k (switch k). A path crosses ring
// distance + 1 switches; the two hosts opposite on the ring (distance 3) have two shortest paths, one of
// them local, global, local and the other global, local, global.
TEST(fabric, dragonfly_smallest_canonical_is_a_ring_of_six_routers) {
  topology_params t;
  t.kind = "dragonfly";
  t.hosts_per_router = 1;
  t.routers_per_group = 2;
  t.global_links_per_router = 1;
  const std::array<int, 6> ring = {0, 1, 5, 4, 2, 3};  // [switch]: its place on the ring
  const auto distance = [ring](size_t a, size_t b) {
    const int d = std::abs(ring[a] - ring[b]);
    return uint64_t(std::min(d, 6 - d));
  };
  expected e;
  for (const char* name : {"g0r0", "g0r1", "g1r0", "g1r1", "g2r0", "g2r1"}) e.switches.push_back({name, 3});
  e.links = 2 * (6 + 3 + 3);
  e.hops = [=](size_t a, size_t b) { return distance(a, b) + 1; };
  e.paths = [=](size_t a, size_t b) { return distance(a, b) == 3 ? 2 : 1; };
  e.ecmp = [=](size_t s, size_t h) { return distance(s, h) == 3 ? 2 : 1; };
  check(t, describe(t), e);
}

// The balanced dragonfly p = h = 2, a = 4, g = 9 (72 hosts, 36 routers of 7 ports): routes are shortest
// only, one switch under one router, two inside a group (every pair of a group has its own local cable), and
// at most four (three switch-to-switch hops: local, global, local) between groups.
TEST(fabric, dragonfly_routes_cross_at_most_three_switch_to_switch_hops) {
  topology_params t;
  t.kind = "dragonfly";
  const json r = describe(t);
  ASSERT_TRUE(r.contains("hops"));
  EXPECT_TRUE(r["errors"].empty()) << r["errors"].dump(1);
  ASSERT_EQ(r["switches"].size(), 36u);
  for (const auto& sw : r["switches"]) EXPECT_EQ(sw["ports"], 7u) << sw["name"];
  EXPECT_EQ(r["links"].size(), 2u * (72 + 54 + 36));
  ASSERT_EQ(r["hosts"].size(), 72u);
  std::map<uint64_t, size_t> by_hops;  // switches on the path -> pairs in different groups
  size_t bad = 0;
  for (size_t a = 0; a < 72; ++a) {
    EXPECT_EQ(r["hosts"][a]["attached"], a / 2);
    for (size_t b = 0; b < 72; ++b) {
      if (a == b) continue;
      const json& h = r["hops"][a][b];
      const bool same_router = a / 2 == b / 2, same_group = a / 8 == b / 8;
      const bool ok = h[0] == h[1] && h[2].get<uint64_t>() >= 1 &&
                      (same_router  ? h[1] == 1
                       : same_group ? h[1] == 2
                                    : h[1].get<uint64_t>() >= 2 && h[1].get<uint64_t>() <= 4);
      if (!ok && ++bad <= 5) ADD_FAILURE() << "h" << a << " -> h" << b << ": [min, max, paths] " << h.dump();
      if (!same_group) ++by_hops[h[1].get<uint64_t>()];
    }
  }
  EXPECT_EQ(bad, 0u);
  // h0 (g0r0) and h8 (g1r0) share g0r0-g1r0, group 0's first global cable: two switches.
  EXPECT_EQ(r["hops"][0][8][1], 2);
  EXPECT_GT(by_hops[4], 0u);  // some pairs need the full local, global, local
}

// Two sites (multi_site: 2 leaves x 2 hosts, 2 spines, 1 edge each; the edges joined by 2 cables): by hand,
// a pair under one leaf crosses 1 switch on 1 path; a pair in one site 3 switches on 2 paths (a spine each);
// a pair in different sites 6 switches (leaf, spine, edge, edge, spine, leaf) on 2 x 2 x 2 = 8 paths (up
// spine, inter-site cable, down spine).
TEST(fabric, multi_site_routes_cross_sites_through_the_edges) {
  topology_params t;
  t.kind = "multi_site";
  t.leaves = 2;
  t.hosts_per_leaf = 2;
  t.spines = 2;
  t.inter_site_links = 2;
  const json r = describe(t);
  ASSERT_TRUE(r.contains("hops"));
  EXPECT_TRUE(r["errors"].empty()) << r["errors"].dump(1);
  ASSERT_EQ(r["switches"].size(), 10u);
  EXPECT_EQ(r["links"].size(), 2u * 22);
  for (size_t a = 0; a < 8; ++a)
    for (size_t b = 0; b < 8; ++b) {
      if (a == b) continue;
      const json expect = a / 2 == b / 2   ? json::array({1, 1, 1})
                          : a / 4 == b / 4 ? json::array({3, 3, 2})
                                           : json::array({6, 6, 8});
      EXPECT_EQ(r["hops"][a][b], expect) << "h" << a << " -> h" << b;
    }
}

TEST(fabric, link_rates_and_latencies_per_tier) {
  topology_params t;
  t.kind = "three_tier";
  t.pods = 2;
  t.leaves = 1;
  t.spines = 1;
  t.cores = 2;
  t.hosts_per_leaf = 2;
  t.link_gbps = 200;
  t.uplink_gbps = 800;
  t.host_cable_m = 3;
  t.leaf_spine_cable_m = 20;
  t.spine_core_cable_m = 100;
  topology::cable_params cable;
  cable.ns_per_metre = 5;
  cable.fec_latency_ns = 50;
  const json r = describe(t, cable);
  ASSERT_TRUE(r.contains("links"));
  size_t host = 0, leaf_spine = 0, spine_core = 0;
  for (const auto& l : r["links"]) {
    const std::string name = l["name"];
    const bool to_host = name[0] == 'h' || name.find("_to_h") != std::string::npos;
    const bool core = name.find("core") != std::string::npos;
    // Hand values: 3 m x 5 ns/m + 50 ns; 20 m x 5 + 50; 100 m x 5 + 50.
    const double gbps = to_host ? 200 : 800;
    const uint64_t latency_ps = to_host ? 65000 : core ? 550000 : 150000;
    EXPECT_DOUBLE_EQ(l["gbps"].get<double>(), gbps) << name;
    EXPECT_EQ(l["latency_ps"], latency_ps) << name;
    (to_host ? host : core ? spine_core : leaf_spine)++;
  }
  EXPECT_EQ(host, 2u * 4);        // 4 hosts, two directions
  EXPECT_EQ(leaf_spine, 2u * 2);  // one leaf and one spine per pod
  EXPECT_EQ(spine_core, 2u * 4);  // 2 spines x 2 cores in the one plane
  // Oversubscription: 2 hosts x 200 down, 1 x 800 up.
  EXPECT_DOUBLE_EQ(t.leaf_oversubscription(), 0.5);
}

TEST(fabric, leaf_of_and_host_count_for_every_kind_without_a_fabric) {
  topology_params t;
  t.hosts = 7;
  EXPECT_EQ(t.host_count(), 7u);
  EXPECT_EQ(topology::leaf_of(t, 6), 0u);
  t.kind = "leaf_spine";
  t.leaves = 3;
  t.hosts_per_leaf = 5;
  EXPECT_EQ(t.host_count(), 15u);
  EXPECT_EQ(topology::leaf_of(t, 14), 2u);
  t.kind = "three_tier";
  t.pods = 2;  // leaves are numbered pod by pod: pod 1's leaf 0 is leaf 3
  EXPECT_EQ(t.host_count(), 30u);
  EXPECT_EQ(topology::leaf_of(t, 15), 3u);
  t.kind = "rail_optimized";
  t.groups = 2;
  t.hosts_per_leaf = 2;
  t.rails = 8;
  EXPECT_EQ(t.host_count(), 32u);
  EXPECT_EQ(topology::leaf_of(t, 9), 1u);   // server 1, rail 1, group 0
  EXPECT_EQ(topology::leaf_of(t, 18), 10u);  // server 2 (group 1), rail 2
}

std::string validation_error(const topology_params& t) {
  try {
    t.validate();
  } catch (const core::config_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(fabric, absurd_sizes_are_refused_naming_the_key) {
  topology_params t;
  t.kind = "rail_optimized";
  t.rails = 0;
  EXPECT_EQ(validation_error(t), "topology.rails: 0 is out of range [1, 576] NICs");
  t = {};
  t.kind = "fat_tree";
  EXPECT_EQ(validation_error(t),
            "topology.kind: \"fat_tree\" is not one of: single_switch, leaf_spine, three_tier, rail_optimized, "
            "dragonfly, multi_site, graph, nvl72");
  t = {};
  t.kind = "three_tier";
  t.spines = 4;
  t.cores = 6;
  EXPECT_NE(validation_error(t).find("topology.cores: 6 is not a multiple of topology.spines (4)"), std::string::npos);
  t = {};
  t.kind = "leaf_spine";
  t.hosts_per_leaf = 1024;
  t.spines = 64;
  t.links_per_spine = 64;
  EXPECT_EQ(validation_error(t),
            "topology: a leaf would have hosts_per_leaf + spines x links_per_spine = 5120 ports, above the radix "
            "limit of 4096; lower topology.hosts_per_leaf, topology.spines or topology.links_per_spine");
  t = {};
  t.kind = "three_tier";
  t.pods = 256;
  t.leaves = 64;
  EXPECT_NE(validation_error(t).find("pods x leaves x hosts_per_leaf = 65536 hosts, above the limit of 16384"),
            std::string::npos);
  t = {};
  t.uplink_gbps = 0.5;
  EXPECT_NE(validation_error(t).find("topology.uplink_gbps"), std::string::npos);
  t = {};
  t.kind = "rail_optimized";
  t.link_gbps = 0;
  EXPECT_EQ(validation_error(t), "topology.link_gbps: 0 is out of range [1, 3200] Gb/s");
}

TEST(fabric, constructor_refuses_bad_topology_and_cable_keys) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;
    const sw::switch_factory make = [](const std::string& name, unsigned ports) {
      return std::make_unique<recording_switch>(name, ports);
    };
    std::string out;
    topology_params t;
    t.kind = "rail_optimized";
    t.rails = 0;
    try {
      topology::fabric fab(t, {}, make, {}, {}, {}, ctx);
    } catch (const core::config_error& e) {
      out += std::string(e.what()) + "\n";
    }
    topology::cable_params cable;
    cable.ns_per_metre = -1;
    try {
      topology::fabric fab({}, cable, make, {}, {}, {0, 0}, ctx);
    } catch (const core::config_error& e) {
      out += e.what();
    }
    return out;
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output,
            "topology.rails: 0 is out of range [1, 576] NICs\nlink.ns_per_metre: -1 is out of range [0, 100] ns/m");
}

// One WRITE of a single packet through the output-queued switch: completion time and packet hops against
// a hand sum over the links of the path (each: serialization at its tier's rate + its latency) and the
// switches on it.
struct one_packet_case {
  const char* label;
  topology_params topo;
  size_t src, dst;
  std::vector<int> path;  // tier of each link in order: 0 host, 1 leaf-spine, 2 spine-core
};

void PrintTo(const one_packet_case& c, std::ostream* os) { *os << c.label; }

class one_packet : public ::testing::TestWithParam<one_packet_case> {};

TEST_P(one_packet, completes_in_the_hand_computed_time) {
  const one_packet_case& k = GetParam();
  topology::cable_params cable;
  cable.ns_per_metre = 5;
  cable.fec_latency_ns = 100;
  sw::oq_switch_params sp;
  sp.latency_ns = 400;
  nic::supernic_params np;
  np.wqe_latency_ns = 200;
  np.rx_latency_ns = 150;
  const uint64_t bytes = 1000;
  const child_result c = run_in_child([&] {
    core::sim_context ctx;
    const sw::switch_factory make = [&](const std::string& name, unsigned ports) {
      return std::make_unique<sw::oq_switch>(name.c_str(), sp, ports, ctx);
    };
    std::vector<uint64_t> mem(k.topo.host_count(), 0);
    mem[k.src] = mem[k.dst] = 4096;
    topology::fabric fab(k.topo, cable, make, np, {}, mem, ctx);
    auto& a = fab.hosts()[k.src];
    auto& b = fab.hosts()[k.dst];
    const uint64_t src = a.mem->allocate(bytes), dst = b.mem->allocate(bytes);
    const uint32_t rkey = b.nic->register_region(dst, bytes);
    const uint32_t qa = a.nic->create_qp(), qb = b.nic->create_qp();
    a.nic->connect_qp(qa, b.ip, qb, 0, 0);
    b.nic->connect_qp(qb, a.ip, qa, 0, 0);
    a.nic->post_write(qa, 0, src, dst, rkey, bytes, core::picoseconds{});
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC), sc_core::SC_EXIT_ON_STARVATION);
    json out;
    out["completed_ps"] = a.nic->completions().empty() ? 0 : a.nic->completions()[0].completed_at.value;
    out["packet_hops"] = ctx.packet_hops;
    return out.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  // Wire bytes: a WRITE ONLY with 1000 payload bytes carries a RETH (98 + 1000), an ACK 86.
  const double data_wire = 98 + bytes, ack_wire = 86;
  const double length_m[3] = {k.topo.host_cable_m, k.topo.leaf_spine_cable_m, k.topo.spine_core_cable_m};
  const double gbps[3] = {k.topo.link_gbps, k.topo.uplink_rate_gbps(), k.topo.uplink_rate_gbps()};
  double data_ps = 0, ack_ps = 0;
  for (int tier : k.path) {
    const double latency_ps = (length_m[tier] * 5 + 100) * 1000;
    data_ps += data_wire * 8 * 1000 / gbps[tier] + latency_ps;
    ack_ps += ack_wire * 8 * 1000 / gbps[tier] + latency_ps;
  }
  const double switches = double(k.path.size() - 1);
  // The responder's reorder block (nic.clock_mhz 1000) processes the packet one cycle after the first ns edge
  // at or after its arrival; its ACK leaves the receive latency later.
  const double data_at_b = 200e3 + data_ps + switches * 400e3;
  const double processed = double(uint64_t(data_at_b / 1000 + 1 - 1e-6)) * 1000 + 1000;  // ceil in ns, + 1
  const double expected_ps = processed + 150e3 + ack_ps + switches * 400e3;
  EXPECT_NEAR(r["completed_ps"].get<double>(), expected_ps, 2.0 * double(k.path.size()));  // ps rounding per link
  EXPECT_EQ(r["packet_hops"], 2 * k.path.size());  // the data packet and its ACK, over the same number of links
}

topology_params three_tier_800_up() {
  topology_params t;
  t.kind = "three_tier";
  t.pods = 2;
  t.leaves = 2;
  t.spines = 2;
  t.cores = 2;
  t.hosts_per_leaf = 2;
  t.uplink_gbps = 800;
  return t;
}

topology_params small_rails() {
  topology_params t;
  t.kind = "rail_optimized";
  t.groups = 2;
  t.hosts_per_leaf = 2;
  t.rails = 2;
  t.spines = 2;
  return t;
}

topology_params small_leaf_spine() {
  topology_params t;
  t.kind = "leaf_spine";
  t.leaves = 2;
  t.hosts_per_leaf = 2;
  t.spines = 2;
  return t;
}

INSTANTIATE_TEST_SUITE_P(
    kinds, one_packet,
    ::testing::Values(one_packet_case{"single_switch", topology_params(), 0, 1, {0, 0}},
                      one_packet_case{"leaf_spine", small_leaf_spine(), 0, 3, {0, 1, 1, 0}},
                      one_packet_case{"three_tier_cross_pod", three_tier_800_up(), 0, 7, {0, 1, 2, 2, 1, 0}},
                      one_packet_case{"three_tier_same_pod", three_tier_800_up(), 0, 2, {0, 1, 1, 0}},
                      one_packet_case{"rail_same_rail", small_rails(), 0, 2, {0, 0}},
                      one_packet_case{"rail_other_rail", small_rails(), 0, 1, {0, 1, 1, 0}}),
    [](const ::testing::TestParamInfo<one_packet_case>& i) { return std::string(i.param.label); });

}  // namespace fabric_test
}  // namespace fabricsim::test
