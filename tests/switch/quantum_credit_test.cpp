// InfiniBand credit-based flow control (credit_link, ib_endpoint, quantum_switch): a sender never exceeds
// the credit advertised, a credit-limited link runs at credits x 64 B per credit round trip (hand-computed
// below), a slow receiver throttles its sender to the drain rate without any loss, and every credit comes
// back at the end (conservation); under scale-out a proxied link gets each update with its arrival time, and
// simultaneous deliveries follow the links' calendar keys.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "tests/support/sc_fork.h"
#include "tests/switch/quantum_bench.h"

namespace fabricsim::test {
namespace quantum_credit_test {

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

// A long random run: random flows (sizes, destinations, service levels on three data VLs, start times) over
// a multi-switch fat tree with half the uplinks a non-blocking tree would have and destinations colliding at
// random, so that credits run out all over the fabric. Every 0.5 us, on every link direction and VL, the invariants of IBTA
// 7.9 flow control are checked against the two ends' own counters:
//   - the sender never had more blocks outstanding than its limit (FCTBS <= FCCL, and no `sent` without
//     credit: violations stay 0);
//   - the limit the sender holds is never more than the receiver can honour: FCCL <= ABR + free blocks
//     (the receiver's FCCL only grows by blocks it has freed);
//   - blocks are conserved: sent = received + on the wire (FCTBS - ABR >= 0), and the receive buffer never
//     holds more than it advertised (no overrun).
// At the end, drained: every block sent was received, every buffer is empty, and every sender's credit is
// back to the full buffer (FCCL - FCTBS = the limit).
TEST(quantum_credit, credits_are_conserved_over_a_long_random_run) {
  const child_result c = run_in_child([] {
    ib_net net;
    sw::quantum_params qp;
    qp.data_vls = 3;
    qp.routing = "adaptive";
    qp.credit.vl_buffer_bytes = 16384;  // 256 blocks: about four MTU packets per VL
    sw::ib_endpoint_params ep;
    ep.data_vls = 3;
    ep.credit.vl_buffer_bytes = 16384;
    ep.mtu = 2048;
    const unsigned leaves = 4, spines = 2, hpl = 4, hosts = leaves * hpl;
    ib_tree t = build_tree(net, leaves, spines, hpl, qp, ep, ib_link(60));
    core::rng_stream rng = core::make_stream(7, "quantum_credit_test", "flows");
    uint64_t offered = 0;
    for (unsigned h = 0; h < hosts; ++h) {
      for (int k = 0; k < 100; ++k) {
        unsigned d = unsigned(rng() % hosts);
        if (d == h) d = (d + 1) % hosts;
        const uint64_t bytes = 1 + rng() % (64 * 1024);
        const unsigned sl = unsigned(rng() % 6);
        net.hosts[h]->send(uint16_t(d + 1), bytes, sl, core::picoseconds::from_ns(double(rng() % 150000)));
        offered += bytes;
      }
    }
    // Each link direction: the sender and the receiver at its two ends.
    struct wire {
      sw::ib::credit_sender* tx;
      sw::ib::credit_receiver* rx;
    };
    std::vector<wire> wires;
    for (unsigned h = 0; h < hosts; ++h) {
      sw::quantum_switch& leaf = *t.leaves[h / hpl];
      wires.push_back({&net.hosts[h]->sender(), &leaf.receiver(h % hpl)});
      wires.push_back({&leaf.port(h % hpl).sender(), &net.hosts[h]->receiver()});
    }
    for (unsigned l = 0; l < leaves; ++l)
      for (unsigned s = 0; s < spines; ++s) {
        wires.push_back({&t.leaves[l]->port(hpl + s).sender(), &t.spines[s]->receiver(l)});
        wires.push_back({&t.spines[s]->port(l).sender(), &t.leaves[l]->receiver(hpl + s)});
      }
    std::ostringstream bad;
    uint64_t checks = 0, max_outstanding = 0, stalls = 0;
    auto check = [&](bool final_check) {
      for (size_t w = 0; w < wires.size(); ++w)
        for (unsigned vl = 0; vl < 3; ++vl) {
          const sw::ib::credit_sender& tx = *wires[w].tx;
          const sw::ib::credit_receiver& rx = *wires[w].rx;
          const uint64_t limit = rx.limit_blocks();
          ++checks;
          if (tx.fctbs(vl) > tx.fccl(vl)) bad << "w" << w << " vl" << vl << " FCTBS > FCCL; ";
          if (tx.fccl(vl) > rx.abr(vl) + limit - std::min(limit, rx.used(vl)))
            bad << "w" << w << " vl" << vl << " FCCL beyond what the receiver can hold; ";
          if (rx.abr(vl) > tx.fctbs(vl)) bad << "w" << w << " vl" << vl << " received more than sent; ";
          if (rx.used(vl) > limit) bad << "w" << w << " vl" << vl << " buffer beyond its limit; ";
          max_outstanding = std::max(max_outstanding, tx.fccl(vl) - tx.fctbs(vl));
          if (final_check) {
            if (tx.fctbs(vl) != rx.abr(vl)) bad << "w" << w << " vl" << vl << " sent != received at the end; ";
            if (rx.used(vl) != 0) bad << "w" << w << " vl" << vl << " buffer not empty at the end; ";
            if (tx.fccl(vl) - tx.fctbs(vl) != limit) bad << "w" << w << " vl" << vl << " credit not all back; ";
            stalls += tx.stalls(vl);
          }
        }
    };
    for (int slice = 0; slice < 600; ++slice) {
      sc_core::sc_start(500, sc_core::SC_NS);
      check(false);
    }
    sc_core::sc_start(2000, sc_core::SC_US);  // drain
    check(true);
    uint64_t violations = 0, overruns = 0, delivered = 0;
    for (const wire& w : wires) {
      violations += w.tx->violations();
      overruns += w.rx->overruns();
    }
    double last_rx_ns = 0;
    for (auto& h : net.hosts) {
      delivered += h->rx_payload();
      last_rx_ns = std::max(last_rx_ns, h->last_rx().ns());
    }
    std::ostringstream o;
    o << checks << ' ' << violations << ' ' << overruns << ' ' << (delivered == offered) << ' ' << stalls << ' '
      << net.ctx.pool.in_use() << ' ' << max_outstanding << ' ' << (sc_core::sc_time_stamp().to_double() / 1e6)
      << ' ' << last_rx_ns << " | " << bad.str().substr(0, 400);
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const size_t bar = c.output.find('|');
  ASSERT_NE(bar, std::string::npos) << c.output;
  const auto v = parse(c.output.substr(0, bar));
  ASSERT_EQ(v.size(), 9u);
  std::cout << "credit run: " << v[4] << " credit stalls, last packet at " << v[8] << " ns\n";
  // Flows start up to 150 us in, so traffic runs at least that long; the fabric drained within the checked
  // 300 us, so every check saw traffic or its tail.
  EXPECT_GT(v[8], 150000.0);
  EXPECT_LT(v[8], 300000.0);
  const std::string problems = c.output.substr(bar + 1);
  EXPECT_EQ(problems, " ") << problems;
  EXPECT_EQ(v[0], 601.0 * (16 * 2 + 4 * 2 * 2) * 3);  // every check ran
  EXPECT_EQ(v[1], 0);  // never sent without credit
  EXPECT_EQ(v[2], 0);  // never more in a buffer than advertised
  EXPECT_EQ(v[3], 1);  // every payload byte arrived
  EXPECT_GT(v[4], 100);  // credits did run out (the test exercises stalls)
  EXPECT_EQ(v[5], 0);  // every descriptor back in the pool
  EXPECT_EQ(v[6], 256);  // no sender ever held more than the 256 blocks of a buffer
}

// A frame lost on the wire (an injected fault, docs/faults.md) leaks its credit until the sender's next
// FCTBS refresh resynchronises the receiver's ABR (IBTA 7.9.4.2). A sends two 4096-byte packets (4122 B,
// 65 blocks each) to B over a 100 ns cable with room for one; the first is lost. Hand timeline: packet 1
// leaves 0 - 41.22 ns and is lost; A has no credit for packet 2. The refresh after 41.22 ns is at 1000 ns
// (fc_refresh_ns), reaches B at 1100 ns; B counts the 65 blocks received, advertises them at once (period
// and processing 0), A has the credit at 1200 ns, and packet 2 lands at 1200 + 41.22 + 100 = 1341.22 ns.
TEST(quantum_credit, a_frame_lost_on_the_wire_gets_its_credit_back_at_the_next_refresh) {
  const child_result c = run_in_child([] {
    ib_net net;
    sw::ib_endpoint_params ep;
    ep.credit.vl_buffer_bytes = 65 * 64;
    ep.credit.update_period_ns = 0;
    ep.credit.update_latency_ns = 0;
    ep.lid = 1;
    sw::ib_endpoint& a = net.host("a", ep);
    ep.lid = 2;
    sw::ib_endpoint& b = net.host("b", ep);
    net.direct(a, b, ib_link(100.0));
    std::vector<core::fault_counters> counters(1);
    core::fault_injector inj("l0", 1, core::picoseconds{0}, counters);
    inj.set_loss(1.0, 0, core::picoseconds{0}, core::picoseconds{1000});  // every frame starting before 1 ns
    net.links[0]->set_fault(&inj);
    sw::ib::wire_loss_recovery rec(b.receiver(), 1, net.links[0]->latency(), core::picoseconds::from_ns(1000), inj);
    inj.set_listener(&rec);
    a.send(2, 2 * 4096, 0);
    sc_core::sc_start(10, sc_core::SC_US);
    std::ostringstream o;
    o << b.rx_packets() << ' ' << b.last_rx().value << ' ' << counters[0].frames_lost << ' '
      << b.receiver().resynced_blocks() << ' ' << a.sender().fctbs(0) << ' ' << b.receiver().abr(0) << ' '
      << a.sender().fccl(0) - a.sender().fctbs(0);
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const auto v = parse(c.output);
  ASSERT_EQ(v.size(), 7u);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], 1341220);
  EXPECT_EQ(v[2], 1);
  EXPECT_EQ(v[3], 65);
  EXPECT_EQ(v[4], 130);  // A sent both
  EXPECT_EQ(v[5], 130);  // B counts both: one received, one resynchronised
  EXPECT_EQ(v[6], 65);   // the whole buffer free again
}

// Random loss and bit errors on both data links of a switched path, and an outage of the switch-to-B cable
// (the switch discards what it holds for B and drops what comes for B once it knows, 1 us later): whatever the
// faults destroy, at the end every sender's FCTBS equals its receiver's ABR, the credit is all
// back, the frames that arrived plus those destroyed are all that was sent, and nothing was ever sent
// without credit.
TEST(quantum_credit, faults_on_every_link_leak_no_credit) {
  const child_result c = run_in_child([] {
    ib_net net;
    sw::quantum_params qp;
    qp.credit.vl_buffer_bytes = 16384;
    sw::quantum_switch& s = net.make_switch("sw", qp, 2);
    sw::ib_endpoint_params ep;
    ep.credit.vl_buffer_bytes = 16384;
    ep.lid = 1;
    sw::ib_endpoint& a = net.host("a", ep);
    ep.lid = 2;
    sw::ib_endpoint& b = net.host("b", ep);
    net.attach(a, s, 0, ib_link(50));  // links 0 (a -> sw) and 1 (sw -> a)
    net.attach(b, s, 1, ib_link(50));  // links 2 (b -> sw) and 3 (sw -> b)
    s.add_lid_route(1, {0});
    s.add_lid_route(2, {1});
    std::vector<core::fault_counters> counters(3);
    const core::picoseconds forever{UINT64_MAX};
    // The switch learns of the outage 1 us after it starts: until then its port to B sends into the dead
    // cable while it has credit.
    core::fault_injector up("l0", 3, core::picoseconds{0}, counters),
        down("l3", 3, core::picoseconds::from_ns(1000), counters);
    up.set_loss(0.05, 0, core::picoseconds{0}, forever);
    down.set_ber(2e-6, 1, core::picoseconds{0}, forever);
    down.add_down(core::picoseconds::from_ns(20000), core::picoseconds::from_ns(23000), 2);
    net.links[0]->set_fault(&up);
    net.links[3]->set_fault(&down);
    const core::picoseconds refresh = core::picoseconds::from_ns(qp.credit.fc_refresh_ns);
    sw::ib::wire_loss_recovery r0(s.receiver(0), 1, net.links[0]->latency(), refresh, up);
    sw::ib::wire_loss_recovery r3(b.receiver(), 1, net.links[3]->latency(), refresh, down);
    up.set_listener(&r0);
    down.set_listener(&r3);
    a.send(2, 2000 * 4096, 0);
    sc_core::sc_start(500, sc_core::SC_US);
    const uint64_t destroyed = counters[0].frames_lost + counters[1].fcs_errors + counters[2].frames_lost;
    std::ostringstream o;
    o << a.tx_packets() << ' ' << b.rx_packets() << ' ' << destroyed << ' ' << counters[0].frames_lost << ' '
      << counters[1].fcs_errors << ' ' << counters[2].frames_lost << ' '
      << (a.sender().fctbs(0) == s.receiver(0).abr(0)) << ' '
      << (s.port(1).sender().fctbs(0) == b.receiver().abr(0)) << ' '
      << a.sender().fccl(0) - a.sender().fctbs(0) << ' ' << s.port(1).sender().fccl(0) - s.port(1).sender().fctbs(0)
      << ' ' << a.sender().violations() + s.port(1).sender().violations() << ' ' << net.ctx.pool.in_use() << ' '
      << s.port(1).discarded_down() + s.no_live_port();
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const auto v = parse(c.output);
  ASSERT_EQ(v.size(), 13u);
  EXPECT_EQ(v[0], 2000);
  // Arrived + destroyed on a wire + discarded by the switch while sw -> b was known down = sent.
  EXPECT_EQ(v[1] + v[2] + v[12], 2000);
  EXPECT_GT(v[12], 0);
  EXPECT_GT(v[3], 50);           // 5 % of 2000: about 100 lost on a -> sw
  EXPECT_GT(v[4], 10);           // 33,000 bits at 2e-6: about 6.4 % of what reaches sw -> b
  EXPECT_GT(v[5], 0);            // and some in the 3 us outage
  EXPECT_EQ(v[6], 1);
  EXPECT_EQ(v[7], 1);
  EXPECT_EQ(v[8], 256);  // every credit back on both hops
  EXPECT_EQ(v[9], 256);
  EXPECT_EQ(v[10], 0);
  EXPECT_EQ(v[11], 0);
}

}  // namespace quantum_credit_test
}  // namespace fabricsim::test

namespace fabricsim::test {
namespace quantum_credit_test {

// Scale-out (docs/scale_out.md): what a credit receiver hands a link's proxy, and the order of simultaneous
// deliveries.
struct credit_log : core::link_proxy, sw::ib::credit_peer {
  std::ostringstream out;
  void forward(core::link&, core::packet*, core::picoseconds, uint8_t) override {}
  void forward_credit(core::link& l, unsigned vl, uint64_t fccl, core::picoseconds arrival) override {
    out << l.name() << ' ' << vl << ' ' << fccl << ' ' << arrival.value << ';';
  }
  void credit_update(unsigned port, unsigned vl, uint64_t fccl) override {
    out << "port" << port << ' ' << vl << ' ' << fccl << ' ' << core::now().value << ';';
  }
};

// A receiver whose link has a proxy (its far end in another process) sends every update to the proxy when
// it is sent, with its arrival time, and none to the peer it was given. Buffer 10 blocks per VL, updates at
// most every 50 ns, 20 ns to build one, a 150 ns cable. By hand, on VL 1:
//   3 blocks arrive and leave at 0: ABR 3, all 10 free: FCCL 13, sent at 0, arrives 0 + 150 + 20 = 170 ns;
//   2 more arrive and leave at 10 ns, inside the period: sent at 50 ns with ABR 5: FCCL 15, arrives 220 ns.
TEST(quantum_credit, a_proxied_link_gets_each_update_with_its_arrival_time) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;
    core::link out("out", ib_link(150.0), ctx);
    credit_log log;
    out.set_proxy(&log);
    sw::ib::credit_params cp;
    cp.vl_buffer_bytes = 10 * 64;
    cp.update_period_ns = 50;
    cp.update_latency_ns = 20;
    sw::ib::credit_receiver rx(cp, 2, ctx.calendar);
    rx.attach(&log, 4, out);  // the peer is ignored: the far end is behind the proxy
    if (!rx.attached()) return std::string("not attached");
    log.out << "init;";  // nothing at link initialisation: the far end's owner knows the limit
    rx.received(1, 3);
    rx.released(1, 3, core::picoseconds::from_ns(0));
    rx.received(1, 2);
    rx.released(1, 2, core::picoseconds::from_ns(10));
    sc_core::sc_start(1, sc_core::SC_US);
    return log.out.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output, "init;out 1 13 170000;out 1 15 220000;");
}

// Two receivers send to one peer updates that arrive at the same time: they are delivered in the order of
// the keys of the links they travel along (link key + 2^32, after that time's frame arrivals), not in the
// order they were sent -- the order a far process, which receives them later, can reproduce. Receiver A
// (link key 7, peer port 1) sends at 0, B (key 3, port 2) at 0 too but after A; both arrive at 100 + 0 ns.
TEST(quantum_credit, simultaneous_deliveries_follow_the_links_calendar_keys) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;
    core::link la("la", ib_link(100.0), ctx), lb("lb", ib_link(100.0), ctx);
    la.set_calendar_key(7);
    lb.set_calendar_key(3);
    credit_log log;
    sw::ib::credit_params cp;
    cp.vl_buffer_bytes = 10 * 64;
    cp.update_period_ns = 0;
    cp.update_latency_ns = 0;
    sw::ib::credit_receiver a(cp, 1, ctx.calendar), b(cp, 1, ctx.calendar);
    a.attach(&log, 1, la);
    b.attach(&log, 2, lb);
    log.out.str("");  // the initial limits, given at once
    a.received(0, 1);
    a.released(0, 1, core::picoseconds{0});
    b.received(0, 2);
    b.released(0, 2, core::picoseconds{0});
    sc_core::sc_start(1, sc_core::SC_US);
    return log.out.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  // FCCL = ABR + 10 free blocks: A 11, B 12.
  EXPECT_EQ(c.output, "port2 0 12 100000;port1 0 11 100000;");
}

}  // namespace quantum_credit_test
}  // namespace fabricsim::test
