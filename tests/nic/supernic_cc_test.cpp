// DCQCN in the SuperNIC, end to end through a Spectrum-4 switch: the receiver's notification point answers
// CE-marked arrivals with CNPs at most once per interval, the CNPs cross the fabric on their own priority,
// and the senders' reaction points cut their pace. Expected figures come from the moderation rule and the
// run length, not from the model.
#include <gtest/gtest.h>

#include "tests/support/sc_fork.h"
#include "tests/support/switch_bench.h"

namespace fabricsim::test {
namespace {

using nlohmann::json;

// Two senders into h0 for `us` microseconds, ECN marking every ECT frame (Kmin = Kmax = 0 bytes).
json run_incast(const std::string& cc, double us) {
  const child_result c = run_in_child([&] {
    switch_bench_config cfg;
    cfg.hosts = 3;
    cfg.run_us = us;
    cfg.sw.ecn_kmin_bytes = 0;
    cfg.sw.ecn_kmax_bytes = 0;
    cfg.nic.place_data = false;
    cfg.nic.cc = cc;
    for (size_t i = 1; i <= 2; ++i) cfg.writes.push_back({i, 0, 64 << 20});
    return run_switch_bench(cfg, [](sw::spectrum_switch&, core::sim_context& ctx, json& out) {
             for (const char* h : {"h0_nic", "h1_nic", "h2_nic"})
               for (const char* k : {"tx_cnps", "rx_cnps", "rx_ecn_marked", "tx_payload_bytes"})
                 out[h][k] = ctx.stats.counter_value(h, k);
           })
        .dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  return c.ok ? json::parse(c.output) : json::object();
}

TEST(supernic_dcqcn, cnps_are_moderated_delivered_and_slow_the_senders) {
  constexpr double us = 200;
  const json with = run_incast("dcqcn", us);
  const json without = run_incast("none", us);
  ASSERT_FALSE(with.empty() || without.empty());
  // Per-port moderation (the default, 2 us): at most one CNP per interval, and marked arrivals all along.
  const uint64_t cnps = with["h0_nic"]["tx_cnps"].get<uint64_t>();
  EXPECT_GT(with["h0_nic"]["rx_ecn_marked"].get<uint64_t>(), cnps);
  EXPECT_GE(cnps, 10u);
  EXPECT_LE(cnps, uint64_t(us / 2.0) + 1);
  // CNPs travel on priority 6 (strict, never paused): every one reaches a sender, except one sent in the
  // run's last ~microsecond (switch plus two links, below the 2 us interval: at most one is in flight).
  const uint64_t received = with["h1_nic"]["rx_cnps"].get<uint64_t>() + with["h2_nic"]["rx_cnps"].get<uint64_t>();
  EXPECT_LE(received, cnps);
  EXPECT_GE(received + 1, cnps);
  // Without congestion control nothing answers the marks, and the senders go at whatever PFC allows.
  EXPECT_EQ(without["h0_nic"]["tx_cnps"].get<uint64_t>(), 0u);
  EXPECT_GT(without["h0_nic"]["rx_ecn_marked"].get<uint64_t>(), 0u);
  // The reaction points cut below the bottleneck's fair share at least for a while: the senders offer less.
  const uint64_t sent_with = with["h1_nic"]["tx_payload_bytes"].get<uint64_t>() +
                             with["h2_nic"]["tx_payload_bytes"].get<uint64_t>();
  const uint64_t sent_without = without["h1_nic"]["tx_payload_bytes"].get<uint64_t>() +
                                without["h2_nic"]["tx_payload_bytes"].get<uint64_t>();
  EXPECT_LT(sent_with, sent_without);
  EXPECT_EQ(with["dropped"].get<uint64_t>(), 0u);
}

// One sender, one CNP: the receiver marks every frame (Kmin = Kmax = 0) but allows one CNP per QP per 100 ms,
// so the sender is cut exactly once (interval 100 ms), deeply: RPG_GD 10 and RPG_MIN_DEC_FAC 0 make the cut alpha x rate, with
// alpha = 1023/1024 the rate falls to 400 Gb/s / 1024 = 0.39 Gb/s, where one 4178-byte frame takes 85 us.
// The rate-increase timer (1 us here, F = 1) then brings it back: 200 Gb/s after 1 us, 300 after 2, ...
// If the NIC runs the timer while the QP waits on its pace, the sender loses about 1 us at 0.39 Gb/s, then
// half of line rate for 1 us, a quarter for the next, ...: 2 us of line rate in all (100 KB at 400 Gb/s).
// Expected: less than twice that (4 us, 200 KB) below the same run without congestion control. (A NIC that
// ran the timers only at the QP's next packet lost 700 KB here.)
TEST(supernic_dcqcn, a_paced_qp_recovers_on_its_timers_not_at_its_next_packet) {
  auto run = [](const std::string& cc) {
    const child_result c = run_in_child([&] {
      switch_bench_config cfg;
      cfg.hosts = 2;
      cfg.run_us = 120;
      cfg.sw.ecn_kmin_bytes = 0;
      cfg.sw.ecn_kmax_bytes = 0;
      cfg.nic.place_data = false;
      cfg.nic.cc = cc;
      cfg.nic.cnp_mode = "per_flow";
      cfg.nic.cnp_interval_ns = 100000000;  // 100 ms: once per run
      cfg.nic.dcqcn_rpg_gd = 10;
      cfg.nic.dcqcn_rpg_min_dec_fac = 0;
      cfg.nic.dcqcn_rpg_time_reset_us = 1;
      cfg.writes.push_back({1, 0, 256 << 20});
      return run_switch_bench(cfg, [](sw::spectrum_switch&, core::sim_context& ctx, json& out) {
               out["sent"] = ctx.stats.counter_value("h1_nic", "tx_payload_bytes");
               out["cnps"] = ctx.stats.counter_value("h1_nic", "rx_cnps");
             })
          .dump();
    });
    if (!c.ok) ADD_FAILURE() << c.output;
    return c.ok ? json::parse(c.output) : json::object();
  };
  const json with = run("dcqcn"), without = run("none");
  ASSERT_FALSE(with.empty() || without.empty());
  EXPECT_EQ(with["cnps"].get<uint64_t>(), 1u);  // exactly one cut
  const double lost = without["sent"].get<double>() - with["sent"].get<double>();
  EXPECT_GT(lost, 0.0);  // the cut did slow it
  EXPECT_LT(lost, 400e9 / 8 * 4e-6) << "sent " << with["sent"] << " vs " << without["sent"];
}

}  // namespace
}  // namespace fabricsim::test
