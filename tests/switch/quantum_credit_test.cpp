// InfiniBand credit-based flow control (credit_link, ib_endpoint, quantum_switch): a sender never exceeds
// the credit advertised, a credit-limited link runs at credits x 64 B per credit round trip (hand-computed
// below), a slow receiver throttles its sender to the drain rate without any loss, and every credit comes
// back at the end (conservation).
#include <gtest/gtest.h>

#include <sstream>

#include "tests/support/sc_fork.h"
#include "tests/switch/quantum_bench.h"

namespace fabricsim::test {
namespace {

std::vector<double> parse(const std::string& s) {
  std::stringstream ss(s);
  std::vector<double> v;
  double x;
  while (ss >> x) v.push_back(x);
  return v;
}

TEST(quantum_credit, packet_sizes_follow_ib_framing) {
  // LRH 8 + BTH 12 + payload + ICRC 4 + VCRC 2, no preamble or gap; GRH adds 40.
  core::packet p;
  p.kind = core::frame_kind::infiniband;
  p.payload_bytes = 4096;
  EXPECT_EQ(p.wire_size().value, 4122u);
  p.lrh.has_grh = true;
  EXPECT_EQ(p.wire_size().value, 4162u);
  p.lrh.has_grh = false;
  p.has_reth = true;  // RDMA WRITE first/only: RETH 16
  EXPECT_EQ(p.wire_size().value, 4138u);
  EXPECT_EQ(sw::ib::blocks_of(4122), 65u);  // 4122 / 64 = 64.4 -> 65 credits
  // RoCE is unchanged: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 4096 + ICRC 4 + FCS 4, + preamble 8 + IFG 12.
  core::packet r;
  r.payload_bytes = 4096;
  EXPECT_EQ(r.wire_size().value, 4178u);
}

// A sends to B over one 800G link with 1000 ns one-way latency; B advertises 130 blocks (two 4122-byte
// packets of 65 blocks) and returns credit at once (period and processing 0). Hand timeline:
//   packets 1 and 2 leave back to back (41.22 ns each: 4122 B x 8 / 800 Gb/s);
//   packet 1's tail reaches B at 41.22 + 1000, B frees it, the update reaches A 1000 ns later: packet 3
//   starts at T = 2041.22 ns, packet 4 right behind it when packet 2's credit arrives 41.22 ns later.
// So two packets per T: 2 x 4122 B / 2041.22 ns = 32.31 Gb/s, and packet 2m lands at
// (m-1) T + 1041.22 + 41.22 ns.
TEST(quantum_credit, credit_limited_link_runs_at_credits_per_round_trip) {
  const child_result c = run_in_child([] {
    ib_net net;
    sw::ib_endpoint_params ep;
    ep.credit.vl_buffer_bytes = 130 * 64;
    ep.credit.update_period_ns = 0;
    ep.credit.update_latency_ns = 0;
    ep.lid = 1;
    sw::ib_endpoint& a = net.host("a", ep);
    ep.lid = 2;
    sw::ib_endpoint& b = net.host("b", ep);
    net.direct(a, b, ib_link(1000.0));
    a.send(2, 40 * 4096, 0);
    sc_core::sc_start(200, sc_core::SC_US);
    std::ostringstream o;
    o << b.rx_packets() << ' ' << b.last_rx().value << ' ' << b.receiver().max_used(0) << ' '
      << b.receiver().overruns() << ' ' << a.sender().violations() << ' ' << a.sender().stall_ps(0, core::now())
      << ' ' << a.sender().fccl(0) - a.sender().fctbs(0);
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const auto v = parse(c.output);
  ASSERT_EQ(v.size(), 7u);
  EXPECT_EQ(v[0], 40);
  const double T = 41220 + 2 * 1000000;  // ps
  const double last = (20 - 1) * T + 1000000 + 2 * 41220;
  EXPECT_NEAR(v[1], last, 40) << "packet 40 should land at 19 T + 1082.44 ns";
  const double gbps = 40.0 * 4122 * 8 / (v[1] / 1000.0);
  EXPECT_NEAR(gbps, 2 * 4122 * 8 / (T / 1000), 2.0);  // ~32.3 Gb/s (the first pair is ahead of the rate)
  EXPECT_LE(v[2], 130);  // never more than the credits advertised
  EXPECT_EQ(v[3], 0);
  EXPECT_EQ(v[4], 0);
  // A waited for credit 19 times for (T - 2 x 41.22 ns) each.
  EXPECT_NEAR(v[5], 19 * (T - 2 * 41220), 19 * 50);
  EXPECT_EQ(v[6], 130);  // every credit back once the receiver is empty
}

// A slow receiver (drains 100 Gb/s) behind an 800G link: the sender is held to the drain rate by credits
// alone, nothing is lost, the buffer never holds more than it advertised, and A's stall time is most of
// the run (it could send 8x faster).
TEST(quantum_credit, slow_receiver_throttles_sender_without_loss) {
  const child_result c = run_in_child([] {
    ib_net net;
    sw::ib_endpoint_params ep;
    ep.credit.vl_buffer_bytes = 32768;
    ep.lid = 1;
    sw::ib_endpoint& a = net.host("a", ep);
    ep.lid = 2;
    ep.drain_gbps = 100.0;
    sw::ib_endpoint& b = net.host("b", ep);
    net.direct(a, b, ib_link(100.0));
    a.send(2, 512 * 4096, 0);
    sc_core::sc_start(500, sc_core::SC_US);
    std::ostringstream o;
    o << b.rx_packets() << ' ' << b.rx_wire_bytes() << ' ' << b.first_rx().value << ' ' << b.last_rx().value << ' '
      << b.receiver().max_used(0) << ' ' << b.receiver().limit_blocks() << ' ' << b.receiver().overruns() << ' '
      << a.sender().violations() << ' ' << a.sender().stall_ps(0, core::now()) << ' '
      << a.sender().fccl(0) - a.sender().fctbs(0) << ' ' << a.sender().fctbs(0) << ' ' << b.receiver().abr(0);
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const auto v = parse(c.output);
  ASSERT_EQ(v.size(), 12u);
  EXPECT_EQ(v[0], 512);
  // Arrival rate after the first buffer-full: the drain rate, 100 Gb/s.
  const double gbps = v[1] * 8 / ((v[3] - v[2]) / 1000.0);
  EXPECT_NEAR(gbps, 100.0, 100.0 * 0.05);
  EXPECT_LE(v[4], v[5]);
  EXPECT_EQ(v[5], 512);  // 32768 / 64
  EXPECT_EQ(v[6], 0);
  EXPECT_EQ(v[7], 0);
  const double run_ps = v[3];
  EXPECT_GT(v[8], 0.8 * run_ps);  // sending takes 1/8 of the time, credit waits most of the rest
  EXPECT_EQ(v[9], 512);           // every credit back
  EXPECT_EQ(v[10], v[11]);        // blocks sent == blocks received (conservation)
}

// The same through a switch: the slow receiver's switch port stalls for credit, and so does the source
// (the switch's ingress buffer fills, its credit stops) -- back-pressure hop by hop, nothing dropped.
TEST(quantum_credit, backpressure_crosses_the_switch_hop_by_hop) {
  const child_result c = run_in_child([] {
    ib_net net;
    sw::quantum_params qp;
    qp.credit.vl_buffer_bytes = 32768;
    sw::quantum_switch& s = net.make_switch("sw", qp, 2);
    sw::ib_endpoint_params ep;
    ep.lid = 1;
    sw::ib_endpoint& a = net.host("a", ep);
    ep.lid = 2;
    ep.drain_gbps = 200.0;
    sw::ib_endpoint& b = net.host("b", ep);
    net.attach(a, s, 0, ib_link(50));
    net.attach(b, s, 1, ib_link(50));
    s.add_lid_route(2, {1});
    a.send(2, 256 * 4096, 0);
    sc_core::sc_start(500, sc_core::SC_US);
    const core::picoseconds t = core::now();
    std::ostringstream o;
    o << b.rx_packets() << ' ' << s.port(1).sender().stall_ps(0, t) << ' ' << a.sender().stall_ps(0, t) << ' '
      << s.receiver(0).max_used(0) << ' ' << s.receiver(0).overruns() << ' ' << b.receiver().overruns() << ' '
      << s.port(1).sender().violations() << ' ' << a.sender().violations() << ' ' << s.receiver(0).used(0) << ' '
      << net.ctx.pool.in_use();
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const auto v = parse(c.output);
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v[0], 256);
  EXPECT_GT(v[1], 0);  // switch egress waited for the receiver's credit
  EXPECT_GT(v[2], 0);  // and the source for the switch's
  EXPECT_LE(v[3], 512);
  EXPECT_EQ(v[4] + v[5] + v[6] + v[7], 0);
  EXPECT_EQ(v[8], 0);  // the switch buffer drained
  EXPECT_EQ(v[9], 0);  // every descriptor back in the pool
}

}  // namespace
}  // namespace fabricsim::test
