// The congestion-control factory (sc_models/nic/congestion_control.h), and the toy ecn_only rule against rates
// computed by hand. Port: 400 Gb/s = 400 000 000 kb/s; ecn_only: cut factor 0.5, step 5000 Mb/s = 5 000 000 kb/s
// per nic.cnp_interval_ns = 2 us.
#include "sc_models/nic/congestion_control.h"

#include <gtest/gtest.h>

namespace fabricsim::nic {
namespace {

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
  const std::vector<std::string> expected = {"none", "dcqcn", "hpcc", "ecn_only"};
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
    EXPECT_NE(what.find("none, dcqcn, hpcc, ecn_only"), std::string::npos) << what;
  }
}

TEST(congestion_control, paced_policies_need_the_line_rate) {
  for (const char* n : {"dcqcn", "hpcc", "ecn_only"}) {
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
  EXPECT_FALSE(cc->marked_arrival(2, us(1)));
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

TEST(ecn_only, notification_point_moderates_cnps_per_interval) {
  auto cc = make("ecn_only");
  EXPECT_TRUE(cc->marked_arrival(2, us(10)));
  EXPECT_FALSE(cc->marked_arrival(2, us(11)));  // within 2 us of the last CNP of this flow
  EXPECT_TRUE(cc->marked_arrival(3, us(11)));   // per_flow: another QP has its own context
  EXPECT_TRUE(cc->marked_arrival(2, us(12.5)));
}

TEST(ecn_only, rejects_a_zero_recovery_period) {
  supernic_params p = params();
  p.cnp_interval_ns = 0;
  EXPECT_THROW(make_congestion_control("ecn_only", p, {"nic0", nullptr}), core::config_error);
}

}  // namespace
}  // namespace fabricsim::nic
