// The report's fabric-wide counter figures (testbench/report_counters): sums and maxima over the instances
// that have a counter, from hand-added values; only counters count; values are read when asked.
#include "testbench/report_counters.h"

#include <gtest/gtest.h>

#include "sc_models/core/stats.h"

namespace fabricsim::testbench {
namespace report_counters_test {

// Three instances with a counter "tx", one with "drops", and a gauge and a histogram also named "tx".
struct blocks {
  uint64_t h0_tx = 5, h1_tx = 7, sw0_tx = 0, h0_drops = 3;
  core::histogram sw2_hist;
  core::stats_registry stats;
  blocks() {
    stats.counter("h0_nic", "tx", "packets", "sent", &h0_tx);
    stats.counter("h1_nic", "tx", "packets", "sent", &h1_tx);
    stats.counter("sw0.port1", "tx", "packets", "forwarded", &sw0_tx);
    stats.counter("h0_nic", "drops", "packets", "dropped", &h0_drops);
    stats.gauge("sw1", "tx", "packets", "not a counter", [] { return 100.0; });
    sw2_hist.add(1000);
    stats.hist("sw2", "tx", "packets", "not a counter", &sw2_hist);
  }
};

TEST(report_counters, sums_and_maxima_over_the_instances_that_have_the_counter) {
  blocks b;
  const report_counters c(b.stats);
  EXPECT_EQ(c.total("tx"), 12u);  // 5 + 7 + 0: the gauge's 100 and the histogram's 1000 are not counters
  EXPECT_EQ(c.max("tx"), 7u);
  EXPECT_EQ(c.total("drops"), 3u);
  EXPECT_EQ(c.max("drops"), 3u);
  EXPECT_EQ(c.total("absent"), 0u);  // no instance has it
  EXPECT_EQ(c.max("absent"), 0u);
}

TEST(report_counters, reads_the_values_when_asked) {
  blocks b;
  const report_counters c(b.stats);
  b.h0_tx = 9;  // after the index was built: a scale-out merge or the run writes the counters in place
  b.sw0_tx = 20;
  EXPECT_EQ(c.total("tx"), 36u);  // 9 + 7 + 20
  EXPECT_EQ(c.max("tx"), 20u);
}

}  // namespace report_counters_test
}  // namespace fabricsim::testbench
