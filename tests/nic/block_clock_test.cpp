// The clocked reorder block of the SuperNIC (sc_models/nic/block_clock.h): a slow nic.clock_mhz limits goodput
// to one packet per cycle, a packet that releases m stored PSNs holds the next one back for m more cycles,
// the default clock does not limit a 400G stream, and a backlog in the block back-pressures the sender (PFC).
// Expected values come from the cycle timing in rtl/reorder_tracker.sv's header and the wire size of a frame.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sc_models/nic/block_timing.h"
#include "tests/support/nic_bench.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace block_clock_test {

using nlohmann::json;

// A WRITE MIDDLE of 4096 payload bytes on the wire: preamble/SFD 8 + Ethernet 14 + IPv4 20 + UDP 8 + BTH 12
// + payload + ICRC 4 + FCS 4 + inter-frame gap 12 = 4178 bytes; at the bench's 400 Gb/s one every 83.56 ns.
constexpr double middle_wire_ns = 4178 * 8 / 400.0;

const std::vector<std::string> block_counters = {
    "tracker_transactions", "tracker_busy_cycles", "tracker_waited_packets", "tracker_peak_queue_packets",
    "tracker_wait_ps",      "tx_pause_frames",     "rx_buffer_drops",        "tracker_cycles"};

json run(nic_bench_config cfg) {
  cfg.b_counters = block_counters;
  const child_result c = run_in_child([&] {
    const nic_bench_result r = run_nic_bench(cfg);
    json j;
    j["completions"] = r.completions.size();
    j["mismatched_bytes"] = r.mismatched_bytes;
    j["placed"] = json::array();
    for (const nic::placed_message& m : r.placed)
      j["placed"].push_back({{"first_ps", m.first_arrival.value}, {"placed_ps", m.placed_at.value}});
    for (const auto& [name, value] : r.b_counters) j[name] = value;
    j["packets_in_use"] = r.packets_in_use;
    return j.dump();
  });
  if (!c.ok) ADD_FAILURE() << "bench child failed: " << c.output;
  return c.ok ? json::parse(c.output) : json::object();
}

nic_bench_config one_write(uint64_t packets, double b_clock_mhz) {
  nic_bench_config cfg;
  for (nic::supernic_params* p : {&cfg.a, &cfg.b}) {
    p->random_initial_psn = false;
    p->initial_psn = 1000;
  }
  cfg.b.clock_mhz = b_clock_mhz;
  cfg.message_bytes = {packets * 4096};
  return cfg;
}

// Time from the block serving the FIRST packet to serving the LAST (both record their instant in placed()).
double span_ns(const json& r) {
  return double(r["placed"][0]["placed_ps"].get<uint64_t>() - r["placed"][0]["first_ps"].get<uint64_t>()) / 1000;
}

// Edge k of a clock of f kHz is at ceil(k x 1e9 / f) ps. At 1837.2 MHz (544.306... ps a cycle) few edges fall on
// a whole picosecond: a time rounded up to edge k must still be edge k, and one picosecond later edge k + 1.
TEST(block_timing, an_edge_time_is_its_own_edge_at_any_clock) {
  for (double mhz : {1837.2, 1000.0, 3.0, 0.001, 1e5}) {
    nic::block_timing clock("nic0", "t", mhz, nullptr);
    for (uint64_t k : {0ull, 1ull, 2ull, 3ull, 7ull, 1000ull, 123457ull, 99999989ull}) {
      const core::picoseconds at = clock.edge_time(k);
      EXPECT_EQ(clock.edge_at_or_after(at), k) << mhz << " MHz, edge " << k;
      EXPECT_EQ(clock.edge_at_or_after(at + core::picoseconds(1)), k + 1) << mhz << " MHz, edge " << k;
      if (k > 0) EXPECT_EQ(clock.edge_at_or_after(at - core::picoseconds(1)), k) << mhz << " MHz, edge " << k;
    }
  }
  // By hand at 1837.2 MHz: edge 1 at ceil(544.3065...) = 545 ps, edge 2 at ceil(1088.613...) = 1089 ps.
  nic::block_timing clock("nic0", "t", 1837.2, nullptr);
  EXPECT_EQ(clock.edge_time(1), core::picoseconds(545));
  EXPECT_EQ(clock.edge_time(2), core::picoseconds(1089));
  EXPECT_EQ(clock.edge_at_or_after(core::picoseconds(546)), 2u);
  EXPECT_THROW(nic::block_timing("nic0", "t", 2e6, nullptr), core::config_error);  // 2 THz
}

// The edge arithmetic runs in 64 bits while the products fit and in 128 bits past that: the edges on both sides
// of the switch-over (k x 1e9 passing 2^64 near edge 1.8e10; (t - 1) x f passing it near t = 2^64 / f) are
// those of the formula, worked here in 128 bits, and each edge time is still its own edge.
TEST(block_timing, edges_either_side_of_the_64_bit_limit_follow_the_formula) {
  for (double mhz : {1837.2, 1000.0, 0.001}) {
    nic::block_timing clock("nic0", "t", mhz, nullptr);
    const uint64_t khz = clock.clock_khz();
    auto formula = [&](uint64_t k) {  // in 128 bits: past 2^64 ps for the slowest clock's last edges
      return ((unsigned __int128)k * 1'000'000'000u + khz - 1) / khz;
    };
    const uint64_t k_limit = UINT64_MAX / 1'000'000'000u;  // k x 1e9 fits below this edge
    const uint64_t t_limit = UINT64_MAX / khz;             // (t - 1) x f fits up to t - 1 = this
    std::vector<uint64_t> edges;
    // The edges around k_limit and around t_limit (the edge at or before it and its neighbours), those whose
    // time (and one picosecond after it) is below 2^64 ps.
    const uint64_t k_t = uint64_t((unsigned __int128)t_limit * khz / 1'000'000'000u);
    for (uint64_t k : {k_limit - 2, k_limit - 1, k_limit, k_limit + 1, k_limit + 2, k_t - 1, k_t, k_t + 1, k_t + 2})
      if (formula(k) < UINT64_MAX - 1) edges.push_back(k);
    ASSERT_GE(edges.size(), 4u) << mhz << " MHz";
    for (uint64_t k : edges) {
      const uint64_t at = uint64_t(formula(k));
      EXPECT_EQ(clock.edge_time(k).value, at) << mhz << " MHz, edge " << k;
      EXPECT_EQ(clock.edge_at_or_after(core::picoseconds(at)), k) << mhz << " MHz, edge " << k;
      EXPECT_EQ(clock.edge_at_or_after(core::picoseconds(at + 1)), k + 1) << mhz << " MHz, edge " << k;
      EXPECT_EQ(clock.edge_at_or_after(core::picoseconds(at - 1)), k) << mhz << " MHz, edge " << k;
    }
  }
}

TEST(block_clock, a_slow_clock_limits_goodput_to_one_packet_per_cycle) {
  // 10 MHz: one in-order PSN per cycle (rtl/reorder_tracker.sv: "an in-order stream runs at one PSN per
  // clock") is one 4 KiB packet per 100 ns, slower than the wire's 83.56 ns: every packet after the first
  // waits for the block, and the FIRST-to-LAST span is 63 cycles exactly (the clock's edges are 100 ns apart).
  const uint64_t n = 64;
  const json r = run(one_write(n, 10.0));
  ASSERT_EQ(r["completions"], 1u);
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_DOUBLE_EQ(span_ns(r), double(n - 1) * 100.0);
  // Goodput = payload x clock / cycles per packet = 4096 B x 10 MHz / 1 = 327.68 Gb/s (within 1 %).
  const double goodput_gbps = double(n - 1) * 4096 * 8 / span_ns(r);
  EXPECT_NEAR(goodput_gbps, 4096 * 8 * 10e6 / 1e9, 3.2768);
  EXPECT_EQ(r["tracker_transactions"], n);
  EXPECT_EQ(r["tracker_busy_cycles"], n);  // one cycle each
  // Packet k arrives k x 83.56 ns after the first and starts k x 100 ns after it (in the edge of the first,
  // E0, at f in [0, 100) ns after the first arrival). Its own first edge is E0 + ceil((83.56 k - f) / 100),
  // earlier than E0 + k (it waited) once 16.44 k >= 100 - f: from k = 7 on at the latest (f = 0), from k = 1
  // when f is near 100. So between n - 7 and n - 1 packets waited.
  EXPECT_GE(r["tracker_waited_packets"].get<uint64_t>(), n - 7);
  EXPECT_LE(r["tracker_waited_packets"].get<uint64_t>(), n - 1);
  EXPECT_GE(r["tracker_peak_queue_packets"].get<uint64_t>(), 2u);
  EXPECT_EQ(r["packets_in_use"], 0u);
}

TEST(block_clock, the_default_clock_does_not_limit_a_400g_stream) {
  // 1 GHz: 1 cycle per packet against 83.56 ns between packets. Each packet is served at the cycle after the
  // first edge at or after its arrival, so the span is the wire's (n - 1) x 83.56 ns within one cycle.
  const uint64_t n = 64;
  const json r = run(one_write(n, 1000.0));
  ASSERT_EQ(r["completions"], 1u);
  EXPECT_NEAR(span_ns(r), double(n - 1) * middle_wire_ns, 1.0);
  EXPECT_EQ(r["tracker_waited_packets"], 0u);
  EXPECT_EQ(r["tracker_wait_ps"], 0u);
  EXPECT_EQ(r["tracker_peak_queue_packets"], 1u);
}

// The sender's DCQCN reaction point is clocked too (sc_models/nic/dcqcn_control.cpp): a sent() that finds no
// timer due takes 2 cycles of the Verilated rtl/dcqcn_rp.sv ("k + 2 edges"), and the NIC starts no paced packet
// while it is busy. At 10 MHz that is one packet per 200 ns against the wire's 83.56 ns: the FIRST-to-LAST span
// at the receiver (whose blocks run at 1 GHz, serving each packet a fixed time after it arrives) is
// 63 x 200 ns, within the receiver's one cycle. The alpha timer is kept out of the run (1000 us period).
TEST(block_clock, a_slow_reaction_point_paces_the_sender_at_two_cycles_per_packet) {
  const uint64_t n = 64;
  nic_bench_config cfg = one_write(n, 1000.0);
  cfg.a.cc = "dcqcn";
  cfg.a.dcqcn_model = "rtl";
  cfg.a.dcqcn_dce_tcp_rtt_us = 1000;
  cfg.a.clock_mhz = 10.0;
  const json r = run(cfg);
  ASSERT_EQ(r["completions"], 1u);
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_NEAR(span_ns(r), double(n - 1) * 200.0, 1.0);
  // The same sender at the default 1000 MHz is paced by the wire: 2 ns of RP time per 83.56 ns packet.
  cfg.a.clock_mhz = 1000.0;
  EXPECT_NEAR(span_ns(run(cfg)), double(n - 1) * middle_wire_ns, 1.0);
}

TEST(block_clock, a_release_of_m_stored_psns_holds_the_next_packet_m_cycles) {
  // Batches of B = 100 packets arrive reversed and back to back (the box's output never idles: it flushes a
  // batch when A's last packet of it is in, as its link finishes the batch before). In each batch B - 1
  // packets are out of order (1 cycle each) and the last is in order and releases m = B - 1 stored PSNs:
  // 1 + m = B cycles (rtl/reorder_tracker.sv: busy one cycle per retired PSN). At 1 GHz that is 100 ns, longer
  // than the 83.56 ns until the next batch's first packet, which waits: it starts at edge e + B where e is
  // the in-order packet's start, the first edge at or after its arrival r (r <= e < r + 1 ns), so it waits
  // e + B - (r + 83.56 ns), in (B - 83.56, B - 82.56] ns. The packet after it finds the block free again.
  const uint64_t batch = 100, batches = 4;
  nic_bench_config cfg = one_write(batch * batches, 1000.0);
  cfg.order = reorder_box::order::reverse;
  cfg.batch = batch;
  const json r = run(cfg);
  ASSERT_EQ(r["completions"], 1u);
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  // (B - 1) x 1 + B cycles per batch.
  EXPECT_EQ(r["tracker_busy_cycles"], batches * (2 * batch - 1));
  EXPECT_EQ(r["tracker_cycles"], batches * (2 * batch - 1));  // what the RTL was stepped: the same cycles
  EXPECT_EQ(r["tracker_waited_packets"], batches - 1);        // the first packet of every batch after the first
  const double wait_ns = double(r["tracker_wait_ps"].get<uint64_t>()) / 1000;
  EXPECT_GT(wait_ns, double(batches - 1) * (double(batch) - middle_wire_ns));
  EXPECT_LE(wait_ns, double(batches - 1) * (double(batch) - middle_wire_ns + 1.0));
}

TEST(block_clock, a_backlog_in_the_block_pauses_the_sender_and_loses_nothing) {
  // 1 MHz: 1 us per packet against 83.56 ns on the wire. Packets waiting for the block fill the receive buffer
  // (nic.rx_buffer_bytes 1 MiB, XOFF at 768 KiB: 192 packets of 4 KiB) long before the 400 packets are in,
  // so the receiver pauses its sender (PFC) and drops nothing; the write still completes byte for byte, at
  // the block's pace: 399 us from FIRST to LAST.
  const uint64_t n = 400;
  const json r = run(one_write(n, 1.0));
  ASSERT_EQ(r["completions"], 1u);
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_GT(r["tx_pause_frames"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["rx_buffer_drops"], 0u);
  EXPECT_DOUBLE_EQ(span_ns(r), double(n - 1) * 1000.0);
  // Never more held than the buffer: 256 packets of 4 KiB is 1 MiB.
  EXPECT_LE(r["tracker_peak_queue_packets"].get<uint64_t>(), 256u);
  EXPECT_GE(r["tracker_peak_queue_packets"].get<uint64_t>(), 192u);
}

}  // namespace block_clock_test
}  // namespace fabricsim::test
