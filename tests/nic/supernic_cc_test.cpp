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

}  // namespace
}  // namespace fabricsim::test
