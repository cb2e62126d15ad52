// PFC and ECN in an 8:1 incast through one Spectrum-4 switch, lossless against lossy.
#include <gtest/gtest.h>

#include <iostream>

#include "tests/support/sc_fork.h"
#include "tests/support/switch_bench.h"

namespace fabricsim::test {
namespace {

using nlohmann::json;

json run_incast(bool lossless) {
  const child_result c = run_in_child([&] {
    switch_bench_config cfg;
    cfg.hosts = 9;
    cfg.sw.buffer_bytes = 4 << 20;
    if (!lossless) cfg.sw.lossless_priorities = "";
    cfg.link.rate_gbps = 400;
    for (size_t i = 1; i <= 8; ++i) cfg.writes.push_back({i, 0, 1 << 20});
    return run_switch_bench(cfg).dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  return c.ok ? json::parse(c.output) : json::object();
}

TEST(spectrum_incast, lossless_class_pauses_upstream_and_loses_nothing) {
  const json r = run_incast(true);
  std::cerr << r.dump(1) << "\n";
  EXPECT_EQ(r["dropped"], 0);
  EXPECT_EQ(r["completed"], 8);
  EXPECT_EQ(r["mismatched_bytes"], 0);
  EXPECT_GT(r["pause_frames_sent"].get<uint64_t>(), 0u);
}

TEST(spectrum_incast, lossy_class_drops) {
  const json r = run_incast(false);
  std::cerr << r.dump(1) << "\n";
  EXPECT_GT(r["dropped"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["pause_frames_sent"], 0);
}

}  // namespace
}  // namespace fabricsim::test
