// A 16:1 incast on a two-level fat tree of Quantum-X800 switches with credit flow control: 16 sources on
// leaves 1-4 (four each) send to one host on leaf 0 through 4 spines. Expected by mechanism: nothing is
// dropped (no switch ever accepts more than the credit it advertised), the bottleneck (leaf 0's port to the
// sink) is busy all the time once the first packets arrive, and the back-pressure shows as credit stalls at
// every hop upstream of it: spine down-ports, leaf up-ports, source HCAs -- not at the bottleneck itself,
// whose sink drains at once.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "tests/support/sc_fork.h"
#include "tests/switch/quantum_bench.h"

namespace fabricsim::test {
namespace quantum_incast_test {

constexpr unsigned leaves = 5, spines = 4, hpl = 4;
constexpr uint64_t flow_bytes = 256 * 4096;  // 1 MiB per source, 16 MiB in all

TEST(quantum_incast, sixteen_to_one_loses_nothing_and_keeps_the_bottleneck_full) {
  const child_result c = run_in_child([] {
    ib_net net;
    sw::quantum_params qp;
    qp.routing = "adaptive";
    sw::ib_endpoint_params ep;
    const ib_tree t = build_tree(net, leaves, spines, hpl, qp, ep, ib_link(60));
    uint64_t sources = 0;
    for (unsigned h = hpl; h < leaves * hpl; ++h) {
      net.hosts[h]->send(1, flow_bytes, 0);
      ++sources;
    }
    sc_core::sc_start(400, sc_core::SC_US);
    const core::picoseconds now = core::now();
    sw::ib_endpoint& sink = *net.hosts[0];
    uint64_t sent = 0, overruns = 0, violations = 0, no_route = 0;
    double src_stall = 0;
    for (unsigned h = hpl; h < leaves * hpl; ++h) {
      sent += net.hosts[h]->tx_packets();
      src_stall += double(net.hosts[h]->sender().stall_ps(0, now));
      violations += net.hosts[h]->sender().violations();
    }
    double leaf_up_stall = 0, spine_down_stall = 0, bottleneck_stall = 0;
    for (unsigned l = 0; l < leaves; ++l) {
      sw::quantum_switch& s = *t.leaves[l];
      no_route += s.no_route();
      for (unsigned p = 0; p < hpl + spines; ++p) {
        overruns += s.receiver(p).overruns();
        violations += s.port(p).sender().violations();
        if (l > 0 && p >= hpl) leaf_up_stall += double(s.port(p).sender().stall_ps(0, now));
      }
    }
    bottleneck_stall = double(t.leaves[0]->port(0).sender().stall_ps(0, now));
    for (unsigned sp = 0; sp < spines; ++sp) {
      sw::quantum_switch& s = *t.spines[sp];
      no_route += s.no_route();
      for (unsigned p = 0; p < leaves; ++p) {
        overruns += s.receiver(p).overruns();
        violations += s.port(p).sender().violations();
      }
      spine_down_stall += double(s.port(0).sender().stall_ps(0, now));
    }
    overruns += sink.receiver().overruns();
    // Utilization of the bottleneck between the first and the last arrival at the sink.
    const double busy_ns = double(sink.last_rx().value - sink.first_rx().value) / 1000.0;
    const double util = double(sink.rx_wire_bytes()) * 8 / busy_ns / 800.0;
    std::ostringstream o;
    o << sources << ' ' << sent << ' ' << sink.rx_packets() << ' ' << sink.rx_payload() << ' ' << overruns << ' '
      << violations << ' ' << no_route << ' ' << util << ' ' << bottleneck_stall / 1e6 << ' '
      << spine_down_stall / spines / 1e6 << ' ' << leaf_up_stall / (spines * (leaves - 1)) / 1e6 << ' '
      << src_stall / double(sources) / 1e6 << ' ' << busy_ns / 1000 << ' ' << net.ctx.pool.in_use() << ' '
      << net.ctx.events << ' ' << net.ctx.packet_hops;
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  std::stringstream ss(c.output);
  double sources, sent, rx, payload, overruns, violations, no_route, util, st_bottleneck, st_spine, st_leaf, st_src,
      busy_us, in_use, events, hops;
  ss >> sources >> sent >> rx >> payload >> overruns >> violations >> no_route >> util >> st_bottleneck >> st_spine >>
      st_leaf >> st_src >> busy_us >> in_use >> events >> hops;
  std::printf("incast 16:1: bottleneck utilization %.4f over %.2f us; mean credit-stall time per port (us): "
              "bottleneck %.2f, spine down-port %.2f, leaf up-port %.2f, source HCA %.2f; %.0f events, %.0f hops\n",
              util, busy_us, st_bottleneck, st_spine, st_leaf, st_src, events, hops);
  EXPECT_EQ(sources, 16);
  EXPECT_EQ(sent, 16 * 256);
  EXPECT_EQ(rx, sent);  // zero drops
  EXPECT_EQ(payload, 16 * flow_bytes);
  EXPECT_EQ(overruns + violations + no_route, 0);
  EXPECT_EQ(in_use, 0);
  // 16 MiB at 800G is 16 x 256 x 4122 B x 8 / 800 Gb/s = 168.8 us of wire time: the sink must see it all
  // in about that long, i.e. the bottleneck never idles.
  EXPECT_GT(util, 0.99);
  EXPECT_NEAR(busy_us, 16 * 256 * 4122 * 8 / 800e3, 168.8 * 0.01);
  EXPECT_EQ(st_bottleneck, 0);  // the sink drains at once: no stall at the last hop
  // Upstream of it the fabric is 16x oversubscribed: each source can send 1/16 of the time at most.
  EXPECT_GT(st_spine, 0);
  EXPECT_GT(st_leaf, 0);
  EXPECT_GT(st_src, 0.8 * busy_us);
}

}  // namespace quantum_incast_test
}  // namespace fabricsim::test
