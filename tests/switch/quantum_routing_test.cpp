// Forwarding of the Quantum-X800 switch: the fabric builders (two-level fat tree = leaf_spine, three_tier,
// rail_optimized) build it through the switch factory unchanged, and its linear forwarding tables reach
// every host from every switch without a loop -- checked by walking the tables hop by hop across the
// fabric's own links, for the LFT port and for every port of every adaptive-routing group. Adaptive routing
// sends a packet to the port with the most free credits.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "sc_models/topology/fabric.h"
#include "tests/support/sc_fork.h"
#include "tests/switch/quantum_bench.h"

namespace fabricsim::test {
namespace quantum_routing_test {

// Walks from every switch towards every host. Returns "ok <paths>" or the first failure.
std::string walk_all(const topology::topology_params& topo) {
  core::sim_context ctx;
  sw::quantum_params qp;
  const sw::switch_factory make = [&](const std::string& name, unsigned ports) {
    return std::make_unique<sw::quantum_switch>(name.c_str(), qp, ports, ctx);
  };
  topology::fabric fab(topo, {}, make, {}, {}, std::vector<uint64_t>(topo.host_count(), 0), ctx);
  std::map<const core::packet_sink*, sw::quantum_switch*> by_sink;
  for (auto& s : fab.switches()) by_sink[s.get()] = dynamic_cast<sw::quantum_switch*>(s.get());
  uint64_t paths = 0;
  const size_t hosts = fab.hosts().size();
  for (auto& start : fab.switches()) {
    for (size_t h = 0; h < hosts; ++h) {
      const uint16_t lid = sw::quantum_switch::lid_of(fab.hosts()[h].ip);
      // Depth-first over every port the switch might choose (LFT port and AR group); a path longer than
      // the number of switches has a loop.
      struct frame {
        sw::quantum_switch* s;
        size_t depth;
      };
      std::vector<frame> stack{{by_sink[start.get()], 0}};
      while (!stack.empty()) {
        const frame f = stack.back();
        stack.pop_back();
        if (f.depth > fab.switches().size())
          return "loop towards h" + std::to_string(h) + " through " + f.s->name();
        const int fixed = f.s->lft(lid);
        if (fixed < 0) return std::string(f.s->name()) + " has no LFT entry for LID " + std::to_string(lid);
        std::set<unsigned> choices(f.s->ar_group(lid).begin(), f.s->ar_group(lid).end());
        if (!choices.count(unsigned(fixed))) return std::string(f.s->name()) + ": LFT port not in its AR group";
        for (unsigned port : choices) {
          core::link& l = fab.egress_link(f.s->name(), port);
          auto it = by_sink.find(l.sink());
          if (it == by_sink.end()) {
            // Left the switches: must be the destination host's NIC.
            if (l.sink() != fab.hosts()[h].nic.get())
              return std::string(f.s->name()) + " port " + std::to_string(port) + " delivers LID " +
                     std::to_string(lid) + " to the wrong host";
            ++paths;
          } else {
            stack.push_back({it->second, f.depth + 1});
          }
        }
      }
    }
  }
  return "ok " + std::to_string(paths);
}

TEST(quantum_routing, two_level_fat_tree_tables_reach_every_host_without_loops) {
  const child_result c = run_in_child([] {
    topology::topology_params t;
    t.kind = "leaf_spine";
    t.leaves = 4;
    t.spines = 3;
    t.hosts_per_leaf = 4;
    t.link_gbps = 800;
    return walk_all(t);
  });
  ASSERT_TRUE(c.ok) << c.output;
  // Paths counted by hand: from a leaf to its own 4 hosts 1 each; to the 12 others 3 (one per spine);
  // from a spine to each of the 16 hosts 1. 4 x (4 + 12 x 3) + 3 x 16 = 208.
  EXPECT_EQ(c.output, "ok 208");
}

TEST(quantum_routing, three_tier_and_rail_optimized_tables_reach_every_host_without_loops) {
  const child_result c = run_in_child([] {
    topology::topology_params t;
    t.kind = "three_tier";
    t.pods = 2;
    t.leaves = 2;
    t.spines = 2;
    t.hosts_per_leaf = 2;
    t.cores = 2;
    t.link_gbps = 800;
    return walk_all(t);
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output.substr(0, 3), "ok ") << c.output;
  const child_result r = run_in_child([] {
    topology::topology_params t;
    t.kind = "rail_optimized";
    t.rails = 2;
    t.groups = 2;
    t.hosts_per_leaf = 2;
    t.spines = 2;
    t.link_gbps = 800;
    return walk_all(t);
  });
  ASSERT_TRUE(r.ok) << r.output;
  EXPECT_EQ(r.output.substr(0, 3), "ok ") << r.output;
}

TEST(quantum_routing, lft_spreads_destinations_over_up_ports) {
  // D-mod-K: the LFT port of LID l among k equal-cost ports is ports[l mod k].
  const child_result c = run_in_child([] {
    ib_net net;
    sw::quantum_params qp;
    sw::quantum_switch& s = net.make_switch("sw", qp, 4);
    std::vector<std::unique_ptr<sw::ib_endpoint>> eps;
    for (unsigned p = 0; p < 4; ++p) {
      sw::ib_endpoint_params ep;
      ep.lid = 100 + p;
      net.attach(net.host("e" + std::to_string(p), ep), s, p, ib_link(10));
    }
    for (uint16_t lid = 1; lid <= 6; ++lid) s.add_lid_route(lid, {1, 2, 3});
    std::ostringstream o;
    for (uint16_t lid = 1; lid <= 6; ++lid) o << s.lft(lid);
    o << ' ' << s.lft(7);
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output, "231231 -1");
}

// One source on port 0; LID 9 reachable over ports 1 and 2 (the LFT port is 1: {2, 1}[9 mod 2]). Port 1's
// endpoint advertises 8 KiB per VL and drains slowly (50 Gb/s), port 2's 64 KiB and drains at once.
std::string run_ar(const std::string& routing, uint64_t packets) {
  ib_net net;
  sw::quantum_params qp;
  qp.routing = routing;
  sw::quantum_switch& s = net.make_switch("sw", qp, 3);
  sw::ib_endpoint_params ep;
  ep.lid = 1;
  sw::ib_endpoint& src = net.host("src", ep);
  ep.lid = 9;
  ep.credit.vl_buffer_bytes = 8192;
  ep.drain_gbps = 50;
  sw::ib_endpoint& slow = net.host("slow", ep);
  ep.credit.vl_buffer_bytes = 65536;
  ep.drain_gbps = 0;
  sw::ib_endpoint& fast = net.host("fast", ep);
  net.attach(src, s, 0, ib_link(50));
  net.attach(slow, s, 1, ib_link(50));
  net.attach(fast, s, 2, ib_link(50));
  s.add_lid_route(9, {2, 1});
  src.send(9, packets * 4096, 0);
  sc_core::sc_start(200, sc_core::SC_US);
  std::ostringstream o;
  o << s.lft(9) << ' ' << slow.rx_packets() << ' ' << fast.rx_packets() << ' ' << s.ar_decisions() << ' '
    << s.port(1).counters(0).ar_decisions + s.port(2).counters(0).ar_decisions;
  return o.str();
}

TEST(quantum_routing, adaptive_routing_picks_the_port_with_most_free_credits) {
  // A single packet: the fast port has 1024 free credits, the slow one 128 -> fast, though the LFT says 1.
  const child_result one = run_in_child([] { return run_ar("adaptive", 1); });
  ASSERT_TRUE(one.ok) << one.output;
  EXPECT_EQ(one.output, "1 0 1 1 1");
  // A long run: the slow port can take its 8 KiB plus 50/800 of the traffic at most; AR keeps it to that.
  const child_result many = run_in_child([] { return run_ar("adaptive", 400); });
  ASSERT_TRUE(many.ok) << many.output;
  std::stringstream ss(many.output);
  double lft, slow, fast, dec, per_port;
  ss >> lft >> slow >> fast >> dec >> per_port;
  EXPECT_EQ(slow + fast, 400);
  EXPECT_LT(slow, 400 * 50.0 / 800 + 8192.0 / 4122 + 2);
  EXPECT_EQ(dec, 400);
  EXPECT_EQ(per_port, 400);
  // Static routing: everything on the LFT port, the slow one (200 packets at 50 Gb/s: 132 us, in the run).
  const child_result fixed = run_in_child([] { return run_ar("static", 200); });
  ASSERT_TRUE(fixed.ok) << fixed.output;
  EXPECT_EQ(fixed.output, "1 200 0 0 0");
}

}  // namespace quantum_routing_test
}  // namespace fabricsim::test
