// HPCC-style window control (sc_models/nic/hpcc.h) against sequences computed by hand from Li et al.,
// SIGCOMM 2019, Algorithm 1. Parameters throughout: eta 0.95, maxStage 5, W_AI 500 B, T 4 us, NIC 400G, so
// B = 5e10 bytes/s and the line-rate window B T = 200 000 bytes.
#include "sc_models/nic/hpcc.h"

#include <gtest/gtest.h>

namespace fabricsim::nic {
namespace hpcc_test {

using core::int_record;
using core::picoseconds;

hpcc_params params() {
  hpcc_params p;
  p.eta = 0.95;
  p.max_stage = 5;
  p.w_ai_bytes = 500;
  p.base_rtt_us = 4.0;
  p.line_rate_mbps = 400000;
  return p;
}

int_record rec(uint64_t at_ns, uint64_t tx_bytes, uint32_t qlen, uint32_t rate_mbps = 400000) {
  return {picoseconds::from_ns(double(at_ns)), tx_bytes, qlen, rate_mbps};
}

TEST(hpcc, starts_at_line_rate_and_needs_two_records) {
  hpcc_cc cc(params());
  EXPECT_DOUBLE_EQ(cc.window_bytes(), 200000.0);
  EXPECT_NEAR(cc.rate_mbps(), 400000.0, 1e-6);  // W / T = 200 000 B / 4 us
  const int_record r = rec(1000, 0, 100000);
  cc.on_ack(&r, 1, 10, 100);  // the first record only primes the per-hop state
  EXPECT_DOUBLE_EQ(cc.window_bytes(), 200000.0);
  EXPECT_EQ(cc.updates(), 0u);
}

TEST(hpcc, multiplicative_then_per_ack_then_additive) {
  hpcc_cc cc(params());
  int_record r = rec(1000, 0, 100000);
  cc.on_ack(&r, 1, 10, 100);
  // 4 us later (tau = T): 200 000 B sent -> txRate = 5e10 = B (1.0); qlen min(100000, 100000) / (B T) = 0.5.
  // U = u = 1.5 >= eta: W = 200000 / (1.5 / 0.95) + 500 = 126 666.67 + 500; first update, so Wc = W.
  r = rec(5000, 200000, 100000);
  cc.on_ack(&r, 1, 10, 100);
  EXPECT_NEAR(cc.utilization(), 1.5, 1e-12);
  EXPECT_NEAR(cc.window_bytes(), 127166.6667, 1e-3);
  EXPECT_NEAR(cc.reference_window_bytes(), 127166.6667, 1e-3);
  EXPECT_NEAR(cc.rate_mbps(), 127166.6667 * 8 / 4e-6 / 1e6, 1e-2);  // 254 333 Mb/s
  EXPECT_EQ(cc.stage(), 0u);
  // Same RTT (ACK for PSN 50, before the update mark 100): W changes, Wc does not. 1 us later: 25 000 B
  // (txRate 2.5e10: 0.5), qlen min(0, 100000) = 0 -> u = 0.5; tau / T = 0.25:
  // U = 0.75 x 1.5 + 0.25 x 0.5 = 1.25; W = 127166.67 / (1.25 / 0.95) + 500 = 96 646.67 + 500.
  r = rec(6000, 225000, 0);
  cc.on_ack(&r, 1, 50, 150);
  EXPECT_NEAR(cc.utilization(), 1.25, 1e-12);
  EXPECT_NEAR(cc.window_bytes(), 97146.6667, 1e-3);
  EXPECT_NEAR(cc.reference_window_bytes(), 127166.6667, 1e-3);
  // ACK for PSN 100 reaches the mark: Wc updates. 4 us, 100 000 B (0.5), qlen 0: U = 0.5 < eta, stage 0:
  // additive, W = Wc + 500 = 127 666.67, stage 1.
  r = rec(10000, 325000, 0);
  cc.on_ack(&r, 1, 100, 200);
  EXPECT_NEAR(cc.utilization(), 0.5, 1e-12);
  EXPECT_NEAR(cc.window_bytes(), 127666.6667, 1e-3);
  EXPECT_EQ(cc.stage(), 1u);
  // Four more updates at U = 0.5 (each acknowledging the previous mark): stages 2..5, Wc + 500 each.
  uint64_t at = 10000, tx = 325000;
  uint32_t mark = 200;
  for (int k = 0; k < 4; ++k) {
    at += 4000;
    tx += 100000;
    r = rec(at, tx, 0);
    cc.on_ack(&r, 1, mark, mark + 100);
    mark += 100;
  }
  EXPECT_EQ(cc.stage(), 5u);
  EXPECT_NEAR(cc.window_bytes(), 129666.6667, 1e-3);
  // Stage 5 = maxStage: the next update is multiplicative even at U = 0.5 < eta:
  // W = 129 666.67 / (0.5 / 0.95) + 500 = 246 866.67, clamped to the line-rate window 200 000; stage 0.
  at += 4000;
  tx += 100000;
  r = rec(at, tx, 0);
  cc.on_ack(&r, 1, mark, mark + 100);
  EXPECT_DOUBLE_EQ(cc.window_bytes(), 200000.0);
  EXPECT_DOUBLE_EQ(cc.reference_window_bytes(), 200000.0);
  EXPECT_EQ(cc.stage(), 0u);
}

TEST(hpcc, the_most_loaded_hop_decides_with_its_own_line_rate) {
  hpcc_cc cc(params());
  // Hop 1 at 400G; hop 2 at 100G (B = 1.25e10 bytes/s, B T = 50 000 bytes).
  int_record r1[2] = {rec(1000, 0, 0), rec(1500, 0, 40000, 100000)};
  cc.on_ack(r1, 2, 1, 10);
  // Hop 1: 120 000 B in 4 us = 3e10 -> 0.6, no queue: u1 = 0.6.
  // Hop 2: 40 000 B in 4 us = 1e10 -> 0.8, qlen min(40000, 50000) / 50000 = 0.8: u2 = 1.6 (decides, tau 4 us).
  // U = 1.6; W = 200 000 / (1.6 / 0.95) + 500 = 118 750 + 500 = 119 250.
  int_record r2[2] = {rec(5000, 120000, 0), rec(5500, 40000, 50000, 100000)};
  cc.on_ack(r2, 2, 10, 20);
  EXPECT_NEAR(cc.utilization(), 1.6, 1e-12);
  EXPECT_NEAR(cc.window_bytes(), 119250.0, 1e-6);
}

TEST(hpcc, a_re_echoed_record_changes_nothing_and_a_new_path_restarts) {
  hpcc_cc cc(params());
  int_record r = rec(1000, 0, 100000);
  cc.on_ack(&r, 1, 10, 100);
  r = rec(5000, 200000, 100000);
  cc.on_ack(&r, 1, 10, 100);
  const double w = cc.window_bytes();
  cc.on_ack(&r, 1, 20, 100);  // the same record again (a coalesced ACK echoing the same data packet)
  EXPECT_DOUBLE_EQ(cc.window_bytes(), w);
  EXPECT_EQ(cc.updates(), 1u);
  r = rec(9000, 100, 0);  // tx_bytes went back: another port, i.e. another path; stored, no update
  cc.on_ack(&r, 1, 30, 100);
  EXPECT_DOUBLE_EQ(cc.window_bytes(), w);
  EXPECT_EQ(cc.updates(), 1u);
  int_record two[2] = {rec(9000, 0, 0), rec(9000, 0, 0)};
  cc.on_ack(two, 2, 30, 100);  // two hops now: stored, no update
  EXPECT_DOUBLE_EQ(cc.window_bytes(), w);
  EXPECT_EQ(cc.updates(), 1u);
}

TEST(hpcc, parameters_are_checked) {
  hpcc_params p = params();
  p.eta = 1.5;
  EXPECT_THROW(hpcc_cc{p}, core::config_error);
  p = params();
  p.min_window_bytes = 300000;  // above B T
  EXPECT_THROW(hpcc_cc{p}, core::config_error);
}

}  // namespace hpcc_test
}  // namespace fabricsim::nic
