// DCQCN reaction point: both kinds (Verilated RTL and C++ reference) against sequences computed here from the
// DCQCN formulas, and the RTL against the reference on random stimulus.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "sc_models/core/params.h"
#include "sc_models/nic/dcqcn_rp.h"
#include "sc_models/nic/dcqcn_rp_differential.h"
#include "sc_models/nic/dcqcn_rp_ref.h"
#include "sc_models/nic/dcqcn_rp_rtl.h"

namespace fabricsim::nic {
namespace {

constexpr double alpha_one = 65536.0;  // Q0.16

// The formulas of the DCQCN paper in real numbers; the fixed-point rounding is the one the header declares
// (rates in kb/s and alpha in 1/65536, rounded down; rate increases rounded up).
double cut_rate_kbps(double rate_kbps, double alpha_q16) {
  return rate_kbps - std::floor(rate_kbps * (alpha_q16 / alpha_one) / 2);  // R (1 - alpha / 2)
}
double raised_alpha(double alpha_q16, double g) {  // (1 - g) alpha + g
  return std::floor(((1 - g) * (alpha_q16 / alpha_one) + g) * alpha_one);
}
double decayed_alpha(double alpha_q16, double g) { return std::floor((1 - g) * alpha_q16); }  // (1 - g) alpha
double halfway_up(double target, double current) { return std::ceil((target + current) / 2); }

std::unique_ptr<dcqcn_rate_engine> make(const std::string& kind, const dcqcn_params& p) {
  return make_dcqcn_rate_engine(kind, p);
}

class dcqcn_rp_sequences : public ::testing::TestWithParam<std::string> {};

TEST_P(dcqcn_rp_sequences, cnp_cuts_by_half_alpha_and_raises_alpha) {
  const dcqcn_params p = dcqcn_preset("nvidia");
  auto e = make(GetParam(), p);
  const double line = 400e6;             // 400 Gb/s in kb/s
  const double alpha0 = 1023.0 * 64;     // INITIAL_ALPHA_VALUE 1023/1024 in Q0.16
  const double g = (1024.0 - 1019) / 1024;  // DCE_TCP_G 1019
  EXPECT_EQ(e->rate_mbps(), 400000.0);
  EXPECT_EQ(e->alpha(), alpha0);
  e->cnp(10);
  EXPECT_EQ(e->outputs().rate_kbps, cut_rate_kbps(line, alpha0));
  EXPECT_NEAR(e->rate_mbps(), 400000 * (1 - alpha0 / alpha_one / 2), 0.001);
  EXPECT_EQ(e->outputs().target_kbps, line);
  EXPECT_EQ(e->alpha(), raised_alpha(alpha0, g));
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_cut);
  // Next timer: the alpha timer 1 us (1000 cycles) after the CNP, before the 300 us rate timer.
  EXPECT_EQ(e->next_deadline(), 10u + 1000);

  // Second CNP one monitor period (4 us) later cuts again, with alpha decayed by the timer expiries at
  // 1010, 2010, 3010 and 4010 (a timer due in the CNP's cycle fires first), then raises alpha.
  const double rate1 = e->outputs().rate_kbps;
  double alpha = e->alpha();
  for (int i = 0; i < 4; ++i) alpha = decayed_alpha(alpha, g);
  e->cnp(10 + 4000);
  EXPECT_EQ(e->outputs().rate_kbps, cut_rate_kbps(rate1, alpha));
  EXPECT_EQ(e->outputs().target_kbps, rate1);
  EXPECT_EQ(e->alpha(), raised_alpha(alpha, g));
}

TEST_P(dcqcn_rp_sequences, alpha_decays_once_per_period_without_cnp) {
  const dcqcn_params p = dcqcn_preset("nvidia");
  auto e = make(GetParam(), p);
  const double g = 5.0 / 1024;
  double alpha = 1023.0 * 64;
  EXPECT_EQ(e->next_deadline(), 1000u);  // DCE_TCP_RTT 1 us at 1 GHz; no rate timer at line rate
  e->advance(999);
  EXPECT_EQ(e->alpha(), alpha) << "no decay before the period ends";
  e->advance(1000);
  alpha = decayed_alpha(alpha, g);
  EXPECT_EQ(e->alpha(), alpha);
  EXPECT_EQ(e->next_deadline(), 2000u);
  e->advance(5500);  // expiries at 2000, 3000, 4000, 5000
  for (int i = 0; i < 4; ++i) alpha = decayed_alpha(alpha, g);
  EXPECT_EQ(e->alpha(), alpha);
  EXPECT_EQ(e->next_deadline(), 6000u);
  // A CNP restarts the alpha period from its own time.
  e->cnp(5600);
  EXPECT_EQ(e->alpha(), raised_alpha(alpha, g));
  EXPECT_EQ(e->next_deadline(), 6600u);
}

TEST_P(dcqcn_rp_sequences, monitor_period_allows_one_cut) {
  auto e = make(GetParam(), dcqcn_preset("nvidia"));
  const double g = 5.0 / 1024;
  e->cnp(0);
  const uint32_t rate = e->outputs().rate_kbps;
  const double alpha = e->alpha();
  e->cnp(3999);  // within RATE_REDUCE_MONITOR_PERIOD 4 us: alpha only (after 3 decays at 1000..3000)
  double a = alpha;
  for (int i = 0; i < 3; ++i) a = decayed_alpha(a, g);
  EXPECT_EQ(e->outputs().rate_kbps, rate);
  EXPECT_EQ(e->alpha(), raised_alpha(a, g));
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_cnp_suppressed);
  const double alpha_before = e->alpha();
  e->cnp(4000);  // one period after the cut: cuts again (no decay: the alpha timer restarted at 3999)
  EXPECT_EQ(e->outputs().rate_kbps, cut_rate_kbps(rate, alpha_before));
  EXPECT_EQ(e->outputs().target_kbps, rate);
}

TEST_P(dcqcn_rp_sequences, fast_recovery_halves_the_gap_for_threshold_steps_then_additive) {
  dcqcn_params p = dcqcn_preset("paper");  // F = 5, timer 55 us, R_AI 40 Mb/s, byte counter 10 MiB
  p.dce_tcp_rtt_us = 1000;  // keep the alpha timer out of the way of the rate timer
  auto e = make(GetParam(), p);
  e->cnp(0);
  const double target = 40e6;
  double rate = cut_rate_kbps(target, 1023.0 * 64);
  ASSERT_EQ(e->outputs().rate_kbps, rate);
  for (uint64_t k = 1; k <= 5; ++k) {
    e->advance(k * 55000);
    rate = halfway_up(target, rate);
    EXPECT_EQ(e->outputs().rate_kbps, rate) << "fast recovery step " << k;
    EXPECT_EQ(e->outputs().target_kbps, target) << "fast recovery keeps the target";
    EXPECT_TRUE(e->outputs().events & dcqcn_ev_fast_recovery);
  }
  // Sixth event: additive increase, target + R_AI capped at line rate (it is at line rate already).
  e->advance(6 * 55000);
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_additive);
  EXPECT_EQ(e->outputs().target_kbps, target);
  EXPECT_EQ(e->outputs().rate_kbps, halfway_up(target, rate));
}

// The fabric_400g preset (docs/dcqcn.md): monitor period 5 us, rate timer 5 us, alpha period 5 us, g = 1/256,
// F = 5, R_AI 1 Gb/s, at 400 Gb/s = 4e8 kb/s. A CNP at 0 cuts, one at 2 us is suppressed (alpha only), the
// rate timer at 5 us is a fast-recovery step, a CNP at 6 us cuts again from there; then timers every 5 us
// from 11 us: five fast-recovery steps, the sixth additive.
TEST_P(dcqcn_rp_sequences, fabric_400g_preset_sequence) {
  const dcqcn_params p = dcqcn_preset("fabric_400g");
  const double g = 1.0 / 256, line = 4e8;
  auto e = make(GetParam(), p);
  e->cnp(0);
  const double rate1 = cut_rate_kbps(line, 1023.0 * 64);
  double alpha = raised_alpha(1023.0 * 64, g);
  EXPECT_EQ(e->outputs().rate_kbps, rate1);
  EXPECT_EQ(e->outputs().alpha_q16, alpha);
  e->cnp(2000);  // inside the 5 us monitor period
  alpha = raised_alpha(alpha, g);
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_cnp_suppressed);
  EXPECT_EQ(e->outputs().rate_kbps, rate1);
  EXPECT_EQ(e->outputs().alpha_q16, alpha);
  e->cnp(6000);  // the rate timer (due at 5000) first: fast recovery towards the line rate; then the cut
  const double rate2 = halfway_up(line, rate1);
  double rate = cut_rate_kbps(rate2, alpha);
  alpha = raised_alpha(alpha, g);
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_fast_recovery);
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_cut);
  EXPECT_EQ(e->outputs().target_kbps, rate2);
  EXPECT_EQ(e->outputs().rate_kbps, rate);
  EXPECT_EQ(e->outputs().alpha_q16, alpha);
  for (uint64_t k = 1; k <= 5; ++k) {  // alpha timer and rate timer both at 6000 + 5000 k: alpha first
    e->advance(6000 + k * 5000);
    alpha = decayed_alpha(alpha, g);
    rate = halfway_up(rate2, rate);
    EXPECT_EQ(e->outputs().alpha_q16, alpha) << "step " << k;
    EXPECT_EQ(e->outputs().rate_kbps, rate) << "fast recovery step " << k;
    EXPECT_EQ(e->outputs().target_kbps, rate2);
  }
  e->advance(36000);  // timer count 6 > F, byte count 0: additive, target + 1 Gb/s
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_additive);
  EXPECT_EQ(e->outputs().target_kbps, rate2 + 1e6);
  EXPECT_EQ(e->outputs().rate_kbps, halfway_up(rate2 + 1e6, rate));
}

TEST_P(dcqcn_rp_sequences, additive_then_hyper_increase_steps) {
  dcqcn_params p = dcqcn_preset("nvidia");  // F = 1, R_AI 5 Mb/s, R_HAI 50 Mb/s
  p.rpg_byte_reset = 1000;
  p.rpg_min_dec_fac = 1;
  p.rpg_gd = 10;  // cut by alpha (not alpha / 2), so the target has room to grow below line rate
  p.dce_tcp_rtt_us = 100000;
  auto e = make(GetParam(), p);
  e->cnp(0);
  const uint32_t cut_target = e->outputs().target_kbps;
  e->cnp(4000);  // second cut: the target becomes the first cut's rate, well below line rate
  double target = e->outputs().target_kbps, rate = e->outputs().rate_kbps;
  ASSERT_LT(target, cut_target);
  const uint64_t t0 = 4000, period = 300000;
  e->advance(t0 + period);  // timer 1, bytes 0: max 1 <= F: fast recovery
  rate = halfway_up(target, rate);
  EXPECT_EQ(e->outputs().rate_kbps, rate);
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_fast_recovery);
  e->advance(t0 + 2 * period);  // timer 2, bytes 0: additive
  target += 5000;
  rate = halfway_up(target, rate);
  EXPECT_EQ(e->outputs().target_kbps, target);
  EXPECT_EQ(e->outputs().rate_kbps, rate);
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_additive);
  e->sent(999, t0 + 2 * period + 1);  // below the byte threshold: nothing
  EXPECT_EQ(e->outputs().events, 0u);
  e->sent(1, t0 + 2 * period + 2);  // byte event 1: min(2, 1) = 1 <= F: additive
  target += 5000;
  rate = halfway_up(target, rate);
  EXPECT_EQ(e->outputs().target_kbps, target);
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_byte);
  e->sent(1000, t0 + 2 * period + 3);  // byte event 2: both counters past F: hyper
  target += 50000;
  rate = halfway_up(target, rate);
  EXPECT_EQ(e->outputs().target_kbps, target);
  EXPECT_EQ(e->outputs().rate_kbps, rate);
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_hyper);
  EXPECT_EQ(e->outputs().timer_count, 2u);
  EXPECT_EQ(e->outputs().byte_count, 2u);
}

TEST_P(dcqcn_rp_sequences, floor_and_line_rate_clamps) {
  dcqcn_params p = dcqcn_preset("paper");
  p.rpg_min_rate_mbps = 25000;  // floor above the first cut: 40 Gb/s (1 - 1023/2048) ~ 20 Gb/s
  auto e = make(GetParam(), p);
  e->cnp(0);
  EXPECT_EQ(e->outputs().rate_kbps, 25e6);
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_min_rate_clamp);

  // rpg_min_dec_fac: with Gd = 2^10 the cut is current * alpha; keeping 70 % limits it.
  p = dcqcn_preset("paper");
  p.rpg_gd = 10;
  p.rpg_min_dec_fac = 70;
  e = make(GetParam(), p);
  e->cnp(0);
  EXPECT_EQ(e->outputs().rate_kbps, std::floor(40e6 * std::round(0.70 * 1024) / 1024));
  EXPECT_TRUE(e->outputs().events & dcqcn_ev_min_dec_clamp);

  // Line rate: an additive step larger than the gap stops at line rate, and the rate timer disarms there.
  p = dcqcn_preset("nvidia");
  p.line_rate_mbps = 1000;
  p.rpg_ai_rate_mbps = 600;
  p.rpg_threshold = 0;
  p.dce_tcp_rtt_us = 1000000;
  e = make(GetParam(), p);
  e->cnp(0);
  double rate = e->outputs().rate_kbps;
  EXPECT_EQ(e->next_deadline(), 300000u);
  uint64_t now = 0;
  int steps = 0;
  while (rate < 1e6 && steps < 64) {
    now += 300000;
    e->advance(now);
    rate = halfway_up(1e6, rate);  // target already at line rate: + R_AI is capped
    ASSERT_EQ(e->outputs().target_kbps, 1e6);
    ASSERT_EQ(e->outputs().rate_kbps, rate);
    ++steps;
  }
  EXPECT_EQ(rate, 1e6);
  EXPECT_EQ(e->next_deadline(), 1000000000u) << "only the alpha timer is left";
}

TEST_P(dcqcn_rp_sequences, cnp_in_the_cycle_a_timer_expires_sees_the_timer_first) {
  dcqcn_params p = dcqcn_preset("nvidia");
  p.dce_tcp_rtt_us = 1000;
  auto e = make(GetParam(), p);
  e->cnp(0);
  const double target = e->outputs().target_kbps, rate = e->outputs().rate_kbps;
  const double alpha = e->alpha();
  ASSERT_EQ(e->next_deadline(), 300000u);
  e->cnp(300000);
  const double recovered = halfway_up(target, rate);  // the timer's fast-recovery step comes first
  EXPECT_EQ(e->outputs().events & (dcqcn_ev_timer | dcqcn_ev_cut), dcqcn_ev_timer | dcqcn_ev_cut);
  EXPECT_EQ(e->outputs().target_kbps, recovered);
  EXPECT_EQ(e->outputs().rate_kbps, cut_rate_kbps(recovered, alpha));
  EXPECT_EQ(e->outputs().timer_count, 0u) << "the cut resets the counters";
  EXPECT_EQ(e->next_deadline(), 600000u);
}

TEST_P(dcqcn_rp_sequences, rejects_time_going_backwards_and_oversized_sends) {
  auto e = make(GetParam(), dcqcn_preset("nvidia"));
  e->advance(100);
  EXPECT_THROW(e->cnp(99), std::invalid_argument);
  EXPECT_THROW(e->sent(dcqcn_max_sent_bytes + 1, 200), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(kinds, dcqcn_rp_sequences, ::testing::Values("ref", "rtl"),
                         [](const auto& info) { return info.param; });

TEST(dcqcn_rp, presets_and_parameter_errors) {
  const dcqcn_params paper = dcqcn_preset("paper");
  EXPECT_EQ(paper.dce_tcp_g, 1020u);  // g = 1/256
  EXPECT_EQ(paper.rpg_threshold, 5u);
  EXPECT_EQ(paper.rpg_time_reset_us, 55u);
  const dcqcn_params nvidia = dcqcn_preset("nvidia");
  EXPECT_EQ(nvidia.rpg_byte_reset, 32767u);
  EXPECT_EQ(nvidia.rate_reduce_monitor_period_us, 4u);
  try {
    dcqcn_preset("nope");
    FAIL() << "no error for an unknown preset";
  } catch (const core::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("paper, nvidia"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_dcqcn_rate_engine("gate", nvidia), core::config_error);
  dcqcn_params bad = nvidia;
  bad.rpg_min_rate_mbps = 500000;
  EXPECT_THROW(make_dcqcn_rate_engine("ref", bad), core::config_error);
  bad = nvidia;
  bad.clock_mhz = 10000;
  bad.rpg_time_reset_us = 500000;  // 5e9 cycles at 10 GHz: more than the 32-bit period holds
  EXPECT_THROW(make_dcqcn_rate_engine("rtl", bad), core::config_error);
}

// ---------------------------------------------------------------------------------------------------------
// Differential: RTL against reference on constrained-random stimulus.

class dcqcn_rp_differential : public ::testing::TestWithParam<std::string> {};

TEST_P(dcqcn_rp_differential, rtl_matches_reference_after_every_transaction) {
  dcqcn_rp_differential_options o;
  o.preset = GetParam();
  o.cycles = uint64_t{1} << 40;
  o.transactions = 400000;
  o.seed = 11 + GetParam().size();
  const auto start = std::chrono::steady_clock::now();
  const dcqcn_rp_differential_result r = run_dcqcn_rp_differential(o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.matched) << "seed " << o.seed << " cycle " << r.mismatch_cycle << ": " << r.mismatch_signal
                         << " expected " << r.expected << " got " << r.got << "\n" << r.mismatch;
  EXPECT_EQ(r.transactions, o.transactions);
  RecordProperty("transactions_per_s", std::to_string(static_cast<uint64_t>(r.transactions / wall)));
  RecordProperty("rtl_cycles", std::to_string(r.rtl_cycles));
  for (const auto& [name, hits] : r.coverage) {
    if (name == "cut" || name == "fast_recovery" || name == "alpha_decay" || name == "timer_event" ||
        name == "byte_event" || name == "cnp_as_timer_expires") {
      EXPECT_GT(hits, 0u) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(presets, dcqcn_rp_differential, ::testing::Values("paper", "nvidia", "fabric_400g"),
                         [](const auto& info) { return info.param; });

TEST(dcqcn_rp_coverage, default_run_hits_every_bin) {
  const dcqcn_rp_differential_result r = run_dcqcn_rp_differential(dcqcn_rp_differential_options{});
  ASSERT_TRUE(r.matched) << r.mismatch_signal << " expected " << r.expected << " got " << r.got << "\n"
                         << r.mismatch;
  ASSERT_EQ(r.coverage.size(), dcqcn_rp_coverage_bins().size());
  for (const auto& [name, hits] : r.coverage) EXPECT_GT(hits, 0u) << "coverage bin " << name << " not hit";
}

}  // namespace
}  // namespace fabricsim::nic
