// Fault injection on a link: bit-error and loss probabilities per frame against the hand formula
// (statistical, seeded), and a link down that loses exactly the frames serialized during the interval
// (hand-counted), PFC frames included; the carrier becomes known at the ends after the detection delay.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sc_models/core/fault_injector.h"
#include "sc_models/core/link.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace fault_injector_test {

using namespace fabricsim::core;
using nlohmann::json;

// The fraction of `n` frames of `wire_bytes` the injector hits, with the per-entry counters.
double hit_fraction(fault_injector& inj, std::vector<fault_counters>& c, uint64_t wire_bytes, int n) {
  packet p;
  p.sealed_wire_bytes = uint32_t(wire_bytes);
  int hit = 0;
  for (int i = 0; i < n; ++i)
    hit += inj.judge(p, picoseconds(1000 * uint64_t(i)), picoseconds(1000 * uint64_t(i) + 500)) !=
           fault_injector::verdict::pass;
  EXPECT_EQ(c[0].frames_lost + c[0].fcs_errors, uint64_t(hit));
  EXPECT_EQ(c[0].frames_judged, uint64_t(n));
  return double(hit) / n;
}

// Tolerance: 5 standard deviations of a binomial fraction over n draws (a false failure about once in
// 3.5 million seeds; the seed is fixed, so the outcome is too).
double five_sigma(double p, int n) { return 5.0 * std::sqrt(p * (1 - p) / n); }

TEST(fault_injector, bit_errors_corrupt_a_frame_with_probability_one_minus_one_minus_ber_to_the_bits) {
  constexpr int n = 20000;
  // 1000-byte frame (1020 on the wire less preamble and gap): 8000 bits.
  for (const auto& [ber, wire, bits] : {std::tuple{1e-4, 1020u, 8000.0}, std::tuple{1e-6, 9020u, 72000.0}}) {
    std::vector<fault_counters> c(1);
    fault_injector inj("l", 7, picoseconds{0}, c);
    inj.set_ber(ber, 0, picoseconds{0}, picoseconds{UINT64_MAX});
    const double expected = 1.0 - std::pow(1.0 - ber, bits);  // 0.5507 and 0.0695
    EXPECT_NEAR(fault_injector::frame_error_probability(ber, bits / 8), expected, 1e-9 * expected);  // pow rounds 1 - ber
    EXPECT_NEAR(hit_fraction(inj, c, wire, n), expected, five_sigma(expected, n)) << "ber " << ber;
    EXPECT_EQ(c[0].frames_lost, 0u);  // corrupted, not lost: the receiver's FCS check drops them
  }
  // No cancellation at tiny ratios: 1e-15 over 8000 bits is 8e-12.
  EXPECT_NEAR(fault_injector::frame_error_probability(1e-15, 1000), 8e-12, 1e-16);
}

TEST(fault_injector, random_loss_hits_its_probability_inside_its_window_only) {
  constexpr int n = 20000;
  std::vector<fault_counters> c(1);
  fault_injector inj("l", 3, picoseconds{0}, c);
  inj.set_loss(0.25, 0, picoseconds{0}, picoseconds{UINT64_MAX});
  EXPECT_NEAR(hit_fraction(inj, c, 1020, n), 0.25, five_sigma(0.25, n));
  // A window: frames starting outside it pass untouched and are not even counted as exposed.
  std::vector<fault_counters> w(1);
  fault_injector win("l", 3, picoseconds{0}, w);
  win.set_loss(1.0, 0, picoseconds(10'000), picoseconds(20'000));
  packet p;
  p.sealed_wire_bytes = 100;
  EXPECT_EQ(win.judge(p, picoseconds(9'999), picoseconds(10'500)), fault_injector::verdict::pass);
  EXPECT_EQ(win.judge(p, picoseconds(10'000), picoseconds(10'500)), fault_injector::verdict::lost);
  EXPECT_EQ(win.judge(p, picoseconds(20'000), picoseconds(20'500)), fault_injector::verdict::pass);
  EXPECT_EQ(w[0].frames_judged, 1u);
}

TEST(fault_injector, same_seed_same_draws_other_seed_other_draws) {
  auto draws = [](uint64_t seed) {
    std::vector<fault_counters> c(1);
    fault_injector inj("leaf0_to_spine1", seed, picoseconds{0}, c);
    inj.set_loss(0.5, 0, picoseconds{0}, picoseconds{UINT64_MAX});
    packet p;
    p.sealed_wire_bytes = 100;
    std::string out;
    for (int i = 0; i < 64; ++i) out += inj.judge(p, picoseconds(i), picoseconds(i + 1)) == fault_injector::verdict::lost ? '1' : '0';
    return out;
  };
  EXPECT_EQ(draws(1), draws(1));
  EXPECT_NE(draws(1), draws(2));
}

struct recorder : packet_sink {
  explicit recorder(sim_context& c) : ctx(c) {}
  void receive(packet* p, unsigned) override {
    ids.push_back(p->id);
    ctx.pool.release(p);
  }
  sim_context& ctx;
  std::vector<uint64_t> ids;
};

TEST(fault_injector, link_down_loses_exactly_the_frames_serialized_while_down) {
  const child_result r = run_in_child([] {
    sim_context ctx;
    link_params lp;
    lp.rate_gbps = 400;
    lp.propagation_ns = 10;
    lp.fec_latency_ns = 100;
    link l("l", lp, ctx), pfc_link("pfc_link", lp, ctx);
    recorder rx(ctx), pfc_rx(ctx);
    l.bind(rx, 0);
    pfc_link.bind(pfc_rx, 0);
    std::vector<fault_counters> c(2);
    fault_injector inj("l", 1, picoseconds::from_ns(1000), c), pfc_inj("pfc_link", 1, picoseconds{0}, c);
    inj.add_down(picoseconds::from_ns(200), picoseconds::from_ns(400), 0);
    pfc_inj.add_down(picoseconds{0}, picoseconds::from_ns(1000), 1);
    l.set_fault(&inj);
    pfc_link.set_fault(&pfc_inj);
    // Eight 4178-byte frames back to back from t = 0 (4096 B payload, a RoCE WRITE middle).
    picoseconds free{};
    for (uint64_t i = 0; i < 8; ++i) {
      packet* p = ctx.pool.acquire();
      p->id = i;
      p->bth.opcode = bth_opcode::rc_rdma_write_middle;
      p->payload_bytes = 4096;
      free = l.transmit(p, free);
    }
    packet* pfc = ctx.pool.acquire();
    pfc->kind = frame_kind::pfc;
    pfc->id = 99;
    pfc_link.transmit(pfc, picoseconds::from_ns(100));
    sc_core::sc_start();
    json known = json::array();
    for (double ns : {1199.999, 1200.0, 1399.999, 1400.0}) known.push_back(l.known_down(picoseconds::from_ns(ns)));
    return json{{"ids", rx.ids},          {"lost", l.fault_lost()}, {"entry_lost", c[0].frames_lost},
                {"pfc_delivered", pfc_rx.ids.size()}, {"pfc_lost", c[1].frames_lost}, {"known", known},
                {"down_ps", inj.down_time(0, picoseconds::from_ns(5000)).value}, {"in_use", ctx.pool.in_use()}}
        .dump();
  });
  ASSERT_TRUE(r.ok) << r.output;
  const json j = json::parse(r.output);
  // Frame k is on the wire in [83.56 k, 83.56 (k + 1)) ns (4178 B x 8 / 400 Gb/s). It meets [200, 400) ns when
  // 83.56 (k + 1) > 200 and 83.56 k < 400: k = 2, 3, 4.
  EXPECT_EQ(j["ids"], json::array({0, 1, 5, 6, 7}));
  EXPECT_EQ(j["lost"], 3u);
  EXPECT_EQ(j["entry_lost"], 3u);
  EXPECT_EQ(j["pfc_delivered"], 0u);  // a PFC frame on a dead wire is lost like any other
  EXPECT_EQ(j["pfc_lost"], 1u);
  // Known down from 200 + 1000 ns to 400 + 1000 ns.
  EXPECT_EQ(j["known"], json::array({false, true, true, false}));
  EXPECT_EQ(j["down_ps"], 200000u);
  EXPECT_EQ(j["in_use"], 0u);  // lost frames went back to the pool
}

// What an InfiniBand link asks of the injector: when the carrier is next up (credit resynchronisation after
// an outage) and when the ends' knowledge next changes (a switch port wakes to discard); and that every
// destroyed frame reaches the listener, once, and a passing one never. Intervals by hand: down [10, 20) and
// [15, 30) (overlapping), [50, 60), [100, forever); detect 3.
TEST(fault_injector, carrier_queries_and_the_wire_loss_listener) {
  std::vector<fault_counters> c(1);
  fault_injector inj("l", 1, picoseconds(3), c);
  inj.add_down(picoseconds(10), picoseconds(20), 0);
  inj.add_down(picoseconds(15), picoseconds(30), 0);
  inj.add_down(picoseconds(50), picoseconds(60), 0);
  inj.add_down(picoseconds(100), picoseconds(UINT64_MAX), 0);
  EXPECT_EQ(inj.up_at(picoseconds(5)).value, 5u);
  EXPECT_EQ(inj.up_at(picoseconds(12)).value, 30u);  // through both overlapping intervals
  EXPECT_EQ(inj.up_at(picoseconds(55)).value, 60u);
  EXPECT_EQ(inj.up_at(picoseconds(150)).value, UINT64_MAX);
  // Known-down changes at 13 (down), 33 (up), 53, 63, 103; 18 and 23 (inside the merged outage) may be
  // reported as well: a spurious wake-up is harmless, a missed one is not.
  std::vector<uint64_t> seen;
  for (picoseconds t{0}; t.value != UINT64_MAX && seen.size() < 10; t = inj.next_known_change(t)) {
    if (t.value > 0) seen.push_back(t.value);
  }
  for (uint64_t must : {13u, 33u, 53u, 63u, 103u})
    EXPECT_NE(std::find(seen.begin(), seen.end(), must), seen.end()) << must;
  for (uint64_t t : seen) EXPECT_TRUE(t == 13 || t == 18 || t == 23 || t == 33 || t == 53 || t == 63 || t == 103) << t;
  EXPECT_EQ(seen.back(), 103u);

  struct counting : wire_loss_listener {
    int calls = 0;
    void on_wire_loss(const packet&, picoseconds, picoseconds) override { ++calls; }
  } listener;
  inj.set_listener(&listener);
  packet p;
  p.sealed_wire_bytes = 100;
  EXPECT_EQ(inj.judge(p, picoseconds(0), picoseconds(5)), fault_injector::verdict::pass);
  EXPECT_EQ(inj.judge(p, picoseconds(8), picoseconds(12)), fault_injector::verdict::lost);
  EXPECT_EQ(inj.judge(p, picoseconds(35), picoseconds(40)), fault_injector::verdict::pass);
  EXPECT_EQ(inj.judge(p, picoseconds(59), picoseconds(61)), fault_injector::verdict::lost);
  EXPECT_EQ(listener.calls, 2);
  EXPECT_EQ(c[0].frames_lost, 2u);
}

}  // namespace fault_injector_test
}  // namespace fabricsim::test
