// The congestion-control factory (sc_models/nic/congestion_control.h), and the toy ecn_only rule against rates
// computed by hand. Port: 400 Gb/s = 400 000 000 kb/s; ecn_only: cut factor 0.5, step 5000 Mb/s = 5 000 000 kb/s
// per nic.cnp_interval_ns = 2 us.
#include "sc_models/nic/congestion_control.h"

#include <gtest/gtest.h>

namespace fabricsim::nic {
namespace congestion_control_test {

using core::picoseconds;

constexpr uint64_t line_bps = 400'000'000'000ull;

supernic_params params() {
  supernic_params p;
  p.cnp_model = "ref";  // plain C++ here: no Verilated block needed to test the policies
  p.dcqcn_model = "ref";
  p.cnp_mode = "per_flow";
  p.cnp_interval_ns = 2000;
  p.ecn_only_cut_factor = 0.5;
  p.ecn_only_ai_mbps = 5000;
  return p;
}

std::unique_ptr<congestion_control> make(const std::string& name, const supernic_params& p = params()) {
  auto cc = make_congestion_control(name, p, {"nic0", nullptr});
  cc->add_qp("", line_bps, picoseconds{});
  return cc;
}

picoseconds us(double v) { return picoseconds::from_ns(v * 1000.0); }

double rate_mbps(const congestion_control& cc) {
  qp_status st;
  st.rate_mbps = st.target_mbps = 400000.0;
  cc.status(0, st);
  return st.rate_mbps;
}

TEST(congestion_control, factory_knows_each_name_nic_cc_lists) {
  const std::vector<std::string> expected = {"none", "dcqcn", "hpcc", "ecn_only", "dcqcn_distance"};
  EXPECT_EQ(congestion_control_names(), expected);
  for (const std::string& n : expected) EXPECT_STREQ(make(n)->name(), n.c_str());
  // nic.cc validates against the same list.
  supernic_params p = params();
  p.cc = "ecn_only";
  EXPECT_NO_THROW(core::check_ranges(p, "nic0: nic"));
  p.cc = "bogus";
  EXPECT_THROW(core::check_ranges(p, "nic0: nic"), core::config_error);
}

TEST(congestion_control, unknown_name_names_the_key_and_the_choices) {
  try {
    make_congestion_control("reno", params(), {"host3.nic", nullptr});
    FAIL() << "no error for an unknown name";
  } catch (const core::config_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("host3.nic"), std::string::npos) << what;
    EXPECT_NE(what.find("nic.cc \"reno\""), std::string::npos) << what;
    EXPECT_NE(what.find("none, dcqcn, hpcc, ecn_only, dcqcn_distance"), std::string::npos) << what;
  }
}

TEST(congestion_control, paced_policies_need_the_line_rate) {
  for (const char* n : {"dcqcn", "hpcc", "ecn_only", "dcqcn_distance"}) {
    auto cc = make_congestion_control(n, params(), {"nic0", nullptr});
    EXPECT_THROW(cc->add_qp("", 0, picoseconds{}), core::config_error) << n;
  }
  auto none = make_congestion_control("none", params(), {"nic0", nullptr});
  EXPECT_NO_THROW(none->add_qp("", 0, picoseconds{}));
}

TEST(congestion_control, none_never_paces_nor_asks_for_cnps) {
  auto cc = make("none");
  cc->sent(0, 4000, us(1));
  EXPECT_EQ(cc->next_send(0), picoseconds{});
  EXPECT_EQ(cc->timers(0, us(1)), congestion_control::never);
  EXPECT_FALSE(cc->window_full(0, uint64_t(1) << 40));
  EXPECT_EQ(cc->marked_arrival(2, us(1)), congestion_control::never);
  EXPECT_FALSE(cc->telemetry());
  qp_status st;
  st.rate_mbps = 400000.0;
  cc->status(0, st);
  EXPECT_FALSE(st.paced);
  EXPECT_EQ(st.rate_mbps, 400000.0);
}

TEST(congestion_control, paced_policies_start_at_line_rate) {
  for (const char* n : {"dcqcn", "hpcc"}) {
    auto cc = make(n);
    EXPECT_DOUBLE_EQ(rate_mbps(*cc), 400000.0) << n;
    cc->sent(0, 1000, us(1));  // 8000 bits at 400 Gb/s: 20 ns
    EXPECT_EQ(cc->next_send(0), us(1) + picoseconds(20'000)) << n;
  }
}

TEST(congestion_control, only_hpcc_asks_for_telemetry) {
  EXPECT_TRUE(make("hpcc")->telemetry());
  EXPECT_FALSE(make("dcqcn")->telemetry());
  EXPECT_FALSE(make("ecn_only")->telemetry());
}

TEST(ecn_only, paces_at_line_rate_until_a_cnp) {
  auto cc = make("ecn_only");
  EXPECT_DOUBLE_EQ(rate_mbps(*cc), 400000.0);
  cc->sent(0, 1000, us(1));  // 8000 bits at 400 Gb/s: 20 ns
  EXPECT_EQ(cc->next_send(0), us(1) + picoseconds(20'000));
  EXPECT_EQ(cc->timers(0, us(1)), congestion_control::never);  // at line rate: no recovery timer
}

TEST(ecn_only, cut_per_cnp_then_additive_steps_per_interval) {
  auto cc = make("ecn_only");
  cc->on_cnp(0, us(10));
  EXPECT_DOUBLE_EQ(rate_mbps(*cc), 200000.0);  // 400 000 x 0.5
  EXPECT_EQ(cc->timers(0, us(11)), us(12));    // first step one interval after the cut
  EXPECT_DOUBLE_EQ(rate_mbps(*cc), 200000.0);
  EXPECT_EQ(cc->timers(0, us(16.5)), us(18));  // steps at 12, 14, 16 us
  EXPECT_DOUBLE_EQ(rate_mbps(*cc), 215000.0);  // 200 000 + 3 x 5000
  cc->on_cnp(0, us(17));
  EXPECT_DOUBLE_EQ(rate_mbps(*cc), 107500.0);  // 215 000 x 0.5
  EXPECT_EQ(cc->timers(0, us(18.5)), us(19));  // the period restarted at the cut
}

TEST(ecn_only, recovery_stops_at_the_line_rate) {
  auto cc = make("ecn_only");
  cc->on_cnp(0, us(10));  // 200 000 Mb/s: 40 steps of 5000 back to 400 000, the 40th at 10 + 40 x 2 = 90 us
  EXPECT_EQ(cc->timers(0, us(89.999)), us(90));
  EXPECT_DOUBLE_EQ(rate_mbps(*cc), 395000.0);
  EXPECT_EQ(cc->timers(0, us(90)), congestion_control::never);
  EXPECT_DOUBLE_EQ(rate_mbps(*cc), 400000.0);
}

TEST(ecn_only, a_cut_stretches_the_gap_already_started) {
  auto cc = make("ecn_only");
  cc->sent(0, 1000, us(1));  // due at 1.020 us at 400 Gb/s
  cc->on_cnp(0, us(1.005));  // 200 Gb/s: 8000 bits take 40 ns from 1 us
  EXPECT_EQ(cc->next_send(0), us(1) + picoseconds(40'000));
  cc->sent(0, 1000, us(1.01));  // sent early by the caller: its gap starts when it was due, 1.040 us
  EXPECT_EQ(cc->next_send(0), us(1) + picoseconds(80'000));
}

// At the default 1000 MHz an arrival on an edge (every whole ns) is accepted there and its CNP leaves one
// cycle (1 ns) later (rtl/cnp_gen.sv, cycle timing).
TEST(ecn_only, notification_point_moderates_cnps_per_interval) {
  auto cc = make("ecn_only");
  const picoseconds cycle(1000);
  EXPECT_EQ(cc->marked_arrival(2, us(10)), us(10) + cycle);
  EXPECT_EQ(cc->marked_arrival(2, us(11)), congestion_control::never);  // within 2 us of this flow's last CNP
  // per_flow: another QP has its own context; the suppressed arrival of flow 2 took the edge at 11 us, so this
  // one is accepted at the next and decided a cycle after that.
  EXPECT_EQ(cc->marked_arrival(3, us(11)), us(11) + cycle + cycle);
  EXPECT_EQ(cc->marked_arrival(2, us(12.5)), us(12.5) + cycle);
}

// nic.clock_mhz 1: one edge per us. The generator takes one arrival per clock at the first free edge at or
// after it and decides a cycle later; a suppressed arrival takes its cycle too. Hand timeline:
//   flow 2 at 0.3 us -> edge 1, CNP at 2 us;  flow 3 at 0.4 us -> edge 2 (1 busy), CNP at 3 us;
//   flow 2 at 0.5 us -> edge 3, suppressed (200 ns after its CNP's time stamp, interval 2 us);
//   flow 4 at 0.6 us -> edge 4, CNP at 5 us;  flow 5 at 7.2 us -> edge 8 (idle again), CNP at 9 us.
TEST(ecn_only, the_notification_point_takes_one_arrival_per_clock) {
  core::stats_registry stats;
  auto cc = make_congestion_control("ecn_only", params(), {"nic0", nullptr, nullptr, 1.0, &stats});
  for (int q = 0; q < 6; ++q) cc->add_qp("", line_bps, picoseconds{});
  EXPECT_EQ(cc->marked_arrival(2, us(0.3)), us(2));
  EXPECT_EQ(cc->marked_arrival(3, us(0.4)), us(3));
  EXPECT_EQ(cc->marked_arrival(2, us(0.5)), congestion_control::never);
  EXPECT_EQ(cc->marked_arrival(4, us(0.6)), us(5));
  EXPECT_EQ(cc->marked_arrival(5, us(7.2)), us(9));
  EXPECT_EQ(stats.counter_value("nic0", "cnp_gen_transactions"), 5u);
  EXPECT_EQ(stats.counter_value("nic0", "cnp_gen_busy_cycles"), 5u);
  EXPECT_EQ(stats.counter_value("nic0", "cnp_gen_waited_transactions"), 3u);  // the 2nd, 3rd and 4th
  // Waits: 0.4 -> 2 us, 0.5 -> 3 us, 0.6 -> 4 us: 1.6 + 2.5 + 3.4 = 7.5 us.
  EXPECT_EQ(stats.counter_value("nic0", "cnp_gen_wait_ps"), 7'500'000u);
}

// The reaction point at nic.clock_mhz 10 (100 ns a cycle): a sent() that finds no timer due takes 2 cycles
// (rtl/dcqcn_rp.sv: k + 2 edges), so the NIC's next paced packet, of any QP, waits for the edge 2 cycles after
// the one that took it, though 1000 bytes at 400 Gb/s would allow it 20 ns later. Timers kept out of the way:
// the alpha period (dce_tcp_rtt) and the rate timer are far longer than the run.
TEST(dcqcn, the_reaction_point_holds_paced_packets_while_busy) {
  supernic_params p = params();
  p.dcqcn_dce_tcp_rtt_us = 1000;
  core::stats_registry stats;
  auto cc = make_congestion_control("dcqcn", p, {"nic0", nullptr, nullptr, 10.0, &stats});
  cc->add_qp("", line_bps, picoseconds{});
  cc->add_qp("", line_bps, picoseconds{});
  cc->sent(0, 1000, us(1));  // accepted at edge 10 (1 us), busy to edge 12
  EXPECT_EQ(cc->next_send(0), us(1.2));
  EXPECT_EQ(cc->next_send(1), us(1.2)) << "one datapath for every QP of the NIC";
  cc->sent(1, 1000, us(1.25));  // accepted at edge 13 (1.3 us), busy to edge 15
  EXPECT_EQ(cc->next_send(1), us(1.5));
  EXPECT_EQ(stats.counter_value("nic0", "dcqcn_rp_busy_cycles"), 4u);
  // At the default 1000 MHz the same packet is paced by the wire alone: 2 cycles are 2 ns of its 20.
  auto fast = make("dcqcn", p);
  fast->sent(0, 1000, us(1));
  EXPECT_EQ(fast->next_send(0), us(1) + picoseconds(20'000));
}

TEST(ecn_only, rejects_a_zero_recovery_period) {
  supernic_params p = params();
  p.cnp_interval_ns = 0;
  EXPECT_THROW(make_congestion_control("ecn_only", p, {"nic0", nullptr}), core::config_error);
}

}  // namespace congestion_control_test
}  // namespace fabricsim::nic
