// The NVLink switch chip and the GPU copy engine (sc_models/nvlink/): packets are whole flits; a GPU-to-GPU
// transfer striped over every link finishes when the hand timeline says (serialization of the packets of
// one link, two link latencies, the chip's latency); a credit-limited port runs at its credits per credit
// round trip (hand-computed); an incast holds every receiver within the credits it advertised, and every
// byte that lands is checked against its source (generated payloads, placement scoreboard).
#include <gtest/gtest.h>

#include <sstream>

#include "sc_models/memory/placement_scoreboard.h"
#include "sc_models/topology/nvlink_domain.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace {

std::vector<double> parse(const std::string& s) {
  std::stringstream ss(s);
  std::vector<double> v;
  double x;
  while (ss >> x) v.push_back(x);
  return v;
}

// A small domain: 4 GPUs, 2 chips, 4 links per GPU (2 to each chip), NVLink 5 link rates.
nvlink::nvlink_params small_domain() {
  nvlink::nvlink_params p;
  p.gpus_per_domain = 4;
  p.switch_chips = 2;
  p.links_per_gpu = 4;
  return p;
}

TEST(nvlink_switch, packets_are_whole_flits) {
  nvlink::nvlink_params p;
  // 16-byte header + 256-byte payload = 272 bytes = 17 flits; 100 bytes: 116 -> 8 flits = 128 bytes.
  EXPECT_EQ(p.wire_bytes(256), 272u);
  EXPECT_EQ(p.flits(272), 17u);
  EXPECT_EQ(p.wire_bytes(100), 128u);
  EXPECT_DOUBLE_EQ(p.flit_efficiency(), 256.0 / 272.0);
  core::packet pk;
  pk.kind = core::frame_kind::nvlink;
  pk.sealed_wire_bytes = 272;
  EXPECT_EQ(pk.wire_size().value, 272u);  // no preamble or gap: the sealed flits
  EXPECT_EQ(p.credits().vl_buffer_bytes / p.credits().credit_bytes, 16384u / 16u);
}

TEST(nvlink_switch, bad_shapes_are_refused_naming_the_keys) {
  nvlink::nvlink_params p;
  p.links_per_gpu = 10;  // not a multiple of 18 chips
  try {
    p.validate("nvlink");
    FAIL() << "accepted";
  } catch (const core::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("links_per_gpu 10 is not a multiple of switch_chips 18"), std::string::npos)
        << e.what();
  }
  p = nvlink::nvlink_params{};
  p.buffer_bytes_per_port = 256;
  EXPECT_THROW(p.validate("nvlink"), core::config_error);
}

// GPU 0 writes 64 KiB to GPU 1: 256 packets of 256 B, 64 per link, each 272 B = 5.44 ns at 50 GB/s.
// Hand timeline of a link's last packet: it leaves the GPU at 63 x 5.44 ns and is on the chip at
// 64 x 5.44 + 20 ns; ready 150 ns later; its copy down takes 5.44 ns and 20 ns: the transfer lands at
// 65 x 5.44 + 190 = 543.6 ns. The chip's buffer (16 KiB) covers the credit loop, so no stall.
TEST(nvlink_switch, striped_transfer_lands_on_the_hand_timeline) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;
    const nvlink::nvlink_params p = small_domain();
    topology::nvlink_domains dom(p, 1 << 20, ctx);
    memory::payload_pattern pattern(7);
    memory::placement_scoreboard sb(pattern, 4);
    sb.add_region({1, 4096, 0, 0, 65536});
    for (unsigned i = 0; i < 4; ++i) {
      dom.gpu(0, i).set_payload_pattern(&pattern);
      dom.gpu(0, i).set_landing_observer(&sb.observer(i));
    }
    core::picoseconds landed{};
    dom.gpu(0, 1).on_arrival([&](const nvlink::gpu_arrival& a) { landed = a.at; });
    nvlink::gpu_transfer t;
    t.dst_gpu = 1;
    t.src_addr = 0;
    t.dst_addr = 4096;
    t.bytes = 65536;
    t.tag = 5;
    t.generated = true;
    dom.gpu(0, 0).post(t);
    sc_core::sc_start(10, sc_core::SC_US);
    uint64_t per_link_min = UINT64_MAX, per_link_max = 0;
    for (unsigned l = 0; l < 4; ++l) {
      per_link_min = std::min(per_link_min, dom.gpu(0, 0).port(l).tx_packets());
      per_link_max = std::max(per_link_max, dom.gpu(0, 0).port(l).tx_packets());
    }
    std::ostringstream o;
    o << landed.value << ' ' << sb.check(0).checked << ' ' << sb.check(0).mismatched << ' ' << sb.stray_bytes() << ' '
      << per_link_min << ' ' << per_link_max << ' ' << dom.credit_overruns() << ' ' << dom.credit_violations();
    uint64_t stall = 0;
    for (unsigned l = 0; l < 4; ++l) stall += dom.gpu(0, 0).port(l).sender().stall_ps(0, core::now());
    o << ' ' << stall;
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const auto v = parse(c.output);
  ASSERT_EQ(v.size(), 9u);
  EXPECT_NEAR(v[0], 65 * 5440 + 190000, 10) << "lands at 65 x 5.44 + 190 ns";
  EXPECT_EQ(v[1], 65536);  // every byte checked, none wrong
  EXPECT_EQ(v[2], 0);
  EXPECT_EQ(v[3], 0);
  EXPECT_EQ(v[4], 64);  // round robin per packet: 256 packets over 4 links
  EXPECT_EQ(v[5], 64);
  EXPECT_EQ(v[6], 0);
  EXPECT_EQ(v[7], 0);
  EXPECT_EQ(v[8], 0);
}

// A chip port that advertises two packets (34 flits), credits returned at once: GPU 0 link 0 may have two
// packets between its wire and the chip's egress. Cycle of one credit: the packet's serialization (5.44),
// the link (20), the chip (150), its departure frees it, the return crosses the link (20): T = 195.44 ns per
// two packets, so 544 B / 195.44 ns = 2.78 GB/s, against 50 GB/s uncredited.
TEST(nvlink_switch, credit_limited_port_runs_at_credits_per_round_trip) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;
    nvlink::nvlink_params p = small_domain();
    p.links_per_gpu = 2;
    p.switch_chips = 1;
    p.gpus_per_domain = 2;
    p.buffer_bytes_per_port = 2 * 272;
    p.credit_update_period_ns = 0;
    p.credit_update_latency_ns = 0;
    topology::nvlink_domains dom(p, 1 << 20, ctx);
    core::picoseconds landed{};
    dom.gpu(0, 1).on_arrival([&](const nvlink::gpu_arrival& a) { landed = a.at; });
    dom.gpu(0, 0).set_data(false);
    dom.gpu(0, 1).set_data(false);
    nvlink::gpu_transfer t;
    t.dst_gpu = 1;
    t.bytes = 80 * 256;  // 40 packets per link
    t.tag = 1;
    dom.gpu(0, 0).post(t);
    sc_core::sc_start(100, sc_core::SC_US);
    std::ostringstream o;
    o << landed.value << ' ' << dom.chip(0, 0).receiver(0).max_used(0) << ' ' << dom.credit_overruns() << ' '
      << dom.credit_violations() << ' ' << dom.gpu(0, 0).port(0).sender().stall_ps(0, core::now());
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const auto v = parse(c.output);
  ASSERT_EQ(v.size(), 5u);
  const double T = 5440 + 20000 + 150000 + 20000;  // ps per two packets
  // Packets 39 and 40 of a link leave at 19 T and 19 T + 5.44; the last lands 5.44 + 20 + 150 + 5.44 + 20
  // after it left.
  const double last = 19 * T + 5440 + 5440 + 20000 + 150000 + 5440 + 20000;
  EXPECT_NEAR(v[0], last, 20);
  EXPECT_LE(v[1], 34);  // never more than the flits advertised
  EXPECT_EQ(v[2], 0);
  EXPECT_EQ(v[3], 0);
  EXPECT_GT(v[4], 0);  // the sender did wait for credit
}

// Three GPUs write 256 KiB each to GPU 0 at once: GPU 0's four down-links carry it all, the chips' ingress
// buffers fill and credits hold the senders back. Every receiver stays within what it advertised, nothing
// is lost, every byte is checked, and the last byte lands no sooner than 3 x 256 KiB over GPU 0's links at
// flit efficiency allow, and within 5 % of it plus the latency of one path.
TEST(nvlink_switch, incast_stays_within_credits_and_every_byte_is_checked) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;
    const nvlink::nvlink_params p = small_domain();
    topology::nvlink_domains dom(p, 1 << 20, ctx);
    memory::payload_pattern pattern(3);
    memory::placement_scoreboard sb(pattern, 4);
    for (unsigned i = 0; i < 4; ++i) {
      dom.gpu(0, i).set_payload_pattern(&pattern);
      dom.gpu(0, i).set_landing_observer(&sb.observer(i));
    }
    core::picoseconds last{};
    unsigned arrivals = 0;
    dom.gpu(0, 0).on_arrival([&](const nvlink::gpu_arrival& a) {
      last = std::max(last, a.at);
      ++arrivals;
    });
    for (unsigned s = 1; s < 4; ++s) {
      sb.add_region({0, s * 262144ull, s, 0, 262144});
      nvlink::gpu_transfer t;
      t.dst_gpu = 0;
      t.dst_addr = s * 262144ull;
      t.bytes = 262144;
      t.tag = s;
      t.generated = true;
      dom.gpu(0, s).post(t);
    }
    sc_core::sc_start(100, sc_core::SC_US);
    uint64_t max_used = 0, limit = dom.chip(0, 0).receiver(0).limit_blocks();
    for (const auto& chip : dom.chips())
      for (unsigned i = 0; i < chip->ports(); ++i) max_used = std::max(max_used, chip->receiver(i).max_used(0));
    uint64_t checked = 0, bad = 0;
    for (size_t r = 0; r < sb.regions(); ++r) {
      checked += sb.check(r).checked;
      bad += sb.check(r).mismatched;
    }
    std::ostringstream o;
    o << last.value << ' ' << arrivals << ' ' << max_used << ' ' << limit << ' ' << dom.credit_overruns() << ' '
      << dom.credit_violations() << ' ' << checked << ' ' << bad << ' ' << sb.stray_bytes();
    return o.str();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const auto v = parse(c.output);
  ASSERT_EQ(v.size(), 9u);
  const nvlink::nvlink_params p = small_domain();
  const double bound_ps = 3.0 * 262144 / (4 * p.link_gbytes_per_s * p.flit_efficiency()) * 1000.0;
  EXPECT_EQ(v[1], 3);
  EXPECT_GE(v[0], bound_ps);
  EXPECT_LE(v[0], bound_ps * 1.05 + 200000);
  EXPECT_LE(v[2], v[3]);
  EXPECT_GT(v[2], v[3] / 2) << "the incast should fill the chips' buffers";
  EXPECT_EQ(v[4], 0);
  EXPECT_EQ(v[5], 0);
  EXPECT_EQ(v[6], 3 * 262144);
  EXPECT_EQ(v[7], 0);
  EXPECT_EQ(v[8], 0);
}

}  // namespace
}  // namespace fabricsim::test
