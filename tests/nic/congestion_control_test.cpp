// The congestion-control factory (sc_models/nic/congestion_control.h) and what each policy answers when it
// has nothing to do. Port: 400 Gb/s = 400 000 000 kb/s.
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
  const std::vector<std::string> expected = {"none", "dcqcn", "hpcc"};
  EXPECT_EQ(congestion_control_names(), expected);
  for (const std::string& n : expected) EXPECT_STREQ(make(n)->name(), n.c_str());
  // nic.cc validates against the same list.
  supernic_params p = params();
  p.cc = "hpcc";
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
    EXPECT_NE(what.find("none, dcqcn, hpcc"), std::string::npos) << what;
  }
}

TEST(congestion_control, paced_policies_need_the_line_rate) {
  for (const char* n : {"dcqcn", "hpcc"}) {
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
}

}  // namespace
}  // namespace fabricsim::nic
