// The statistics registry's probes: read live when asked, kept out of the `stats` JSON, one per name; its
// counter totals and maxima by name, from hand-added values, over counters registered before and after a query.
#include "sc_models/core/stats.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace fabricsim::core {
namespace stats_test {

TEST(stats_registry, probes_are_read_live_and_never_written_in_the_json) {
  stats_registry r;
  uint64_t packets = 3;
  double depth = 10.0;
  r.counter("sw0.port1", "packets", "packets", "sent", &packets);
  r.probe("sw0.port1", "queued_bytes", "bytes", "queued now", [&depth] { return depth; });
  r.probe_record("sw0", "log", "a log", [&depth] { return nlohmann::json::array({depth, 2 * depth}); });
  EXPECT_TRUE(r.has_probe("sw0.port1", "queued_bytes"));
  EXPECT_FALSE(r.has_probe("sw0.port1", "packets"));  // a counter is not a probe
  EXPECT_FALSE(r.has("sw0.port1", "queued_bytes"));   // nor a probe a statistic
  const std::function<double()>& read = r.probe_reader("sw0.port1", "queued_bytes");
  depth = 25.0;
  EXPECT_EQ(read(), 25.0);
  EXPECT_EQ(r.probe_value("sw0.port1", "queued_bytes"), 25.0);
  EXPECT_EQ(r.probe_record_value("sw0", "log"), nlohmann::json::array({25.0, 50.0}));
  // The report's `stats` object holds the counter only: no probe, no instance made of probes alone.
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j.size(), 1u);
  EXPECT_EQ(j["sw0.port1"].size(), 1u);
  EXPECT_TRUE(j["sw0.port1"].contains("packets"));
  // Nor does a scale-out merge see them.
  size_t entries = 0;
  r.for_each_entry([&](const stats_registry::merge_entry&) { ++entries; });
  EXPECT_EQ(entries, 1u);
}

TEST(stats_registry, a_probe_is_registered_once_and_read_as_its_kind) {
  stats_registry r;
  r.probe("p", "x", "", "", [] { return 1.0; });
  EXPECT_THROW(r.probe("p", "x", "", "", [] { return 2.0; }), std::logic_error);
  EXPECT_THROW(r.probe_record("p", "x", "", [] { return nlohmann::json(); }), std::logic_error);
  r.probe_record("p", "y", "", [] { return nlohmann::json(7); });
  EXPECT_THROW(r.probe_reader("p", "y"), std::out_of_range);        // a record, not a value
  EXPECT_THROW(r.probe_record_value("p", "x"), std::out_of_range);  // a value, not a record
  EXPECT_THROW(r.probe_value("q", "x"), std::out_of_range);         // no such instance
}

TEST(stats_registry, an_instance_pattern_writes_each_run_of_digits_as_a_star) {
  EXPECT_EQ(stats_registry::pattern_of("h12_nic"), "h*_nic");
  EXPECT_EQ(stats_registry::pattern_of("sw0.port31.tc3"), "sw*.port*.tc*");
  EXPECT_EQ(stats_registry::pattern_of("leaf3_to_spine17"), "leaf*_to_spine*");
  EXPECT_EQ(stats_registry::pattern_of("fabric"), "fabric");
  EXPECT_EQ(stats_registry::pattern_of("007"), "*");
  EXPECT_EQ(stats_registry::pattern_of(""), "");
}

TEST(stats_registry, units_and_descriptions_are_written_once_per_instance_pattern) {
  stats_registry r;
  uint64_t a = 1, b = 2, c = 3, d = 4;
  histogram h;
  h.add(5);
  r.counter("h0_nic", "tx", "packets", "frames sent", &a);
  r.counter("h1_nic", "tx", "packets", "frames sent", &b);
  r.hist("h1_nic", "delay", "ps", "time queued", &h);
  r.counter("h10_nic", "tx", "bytes", "another model's count", &c);  // same pattern and name, other text
  r.counter("sw0", "tx", "packets", "frames forwarded", &d);         // same name, other pattern
  const nlohmann::json text = r.descriptions_json();
  const nlohmann::json want = {{"h*_nic",
                                {{"tx", {{"unit", "packets"}, {"description", "frames sent"}}},
                                 {"delay", {{"unit", "ps"}, {"description", "time queued"}}}}},
                               {"sw*", {{"tx", {{"unit", "packets"}, {"description", "frames forwarded"}}}}}};
  // The first instance in name order ("h0_nic" < "h10_nic" < "h1_nic") gives its pattern's text.
  EXPECT_EQ(text, want) << text.dump();
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["h0_nic"]["tx"], nlohmann::json({{"value", 1}}));
  EXPECT_EQ(j["h1_nic"]["tx"], nlohmann::json({{"value", 2}}));
  EXPECT_EQ(j["h1_nic"]["delay"]["count"], 1);
  EXPECT_FALSE(j["h1_nic"]["delay"].contains("description"));
  // An entry that its pattern does not describe says its own text.
  EXPECT_EQ(j["h10_nic"]["tx"],
            nlohmann::json({{"value", 3}, {"unit", "bytes"}, {"description", "another model's count"}}));
  EXPECT_EQ(j["sw0"]["tx"], nlohmann::json({{"value", 4}}));
}

// Three instances with a counter "tx", one with "drops", and a gauge and a histogram also named "tx".
struct blocks {
  uint64_t h0_tx = 5, h1_tx = 7, sw0_tx = 0, h0_drops = 3;
  histogram sw2_hist;
  stats_registry stats;
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

TEST(stats_registry, counter_totals_and_maxima_are_over_the_instances_that_have_the_counter) {
  blocks b;
  EXPECT_EQ(b.stats.counter_total("tx"), 12u);  // 5 + 7 + 0: the gauge's 100 and the histogram's 1000 are not counters
  EXPECT_EQ(b.stats.counter_max("tx"), 7u);
  EXPECT_EQ(b.stats.counter_total("drops"), 3u);
  EXPECT_EQ(b.stats.counter_max("drops"), 3u);
  EXPECT_EQ(b.stats.counter_total("absent"), 0u);  // no instance has it
  EXPECT_EQ(b.stats.counter_max("absent"), 0u);
}

TEST(stats_registry, counter_totals_read_the_values_when_asked) {
  blocks b;
  EXPECT_EQ(b.stats.counter_total("tx"), 12u);  // the first query: the index is built here
  b.h0_tx = 9;                                  // after it: the run, or a scale-out merge, writes the counters in place
  b.sw0_tx = 20;
  EXPECT_EQ(b.stats.counter_total("tx"), 36u);  // 9 + 7 + 20
  EXPECT_EQ(b.stats.counter_max("tx"), 20u);
}

TEST(stats_registry, counters_registered_after_a_query_are_in_the_next_one) {
  blocks b;
  EXPECT_EQ(b.stats.counter_total("tx"), 12u);
  EXPECT_EQ(b.stats.counter_max("tx"), 7u);
  EXPECT_EQ(b.stats.counter_total("ecn"), 0u);
  // As a scale-out merge adds the other ranks' blocks on rank 0 after set-up: an instance seen before, a new
  // one, a name no instance had, and a gauge of a counter's name (still not a counter).
  uint64_t sw0_drops = 4, h7_tx = 30, h7_ecn = 2, sw3_ecn = 6;
  b.stats.counter("sw0.port1", "drops", "packets", "dropped", &sw0_drops);
  b.stats.counter("h7_nic", "tx", "packets", "sent", &h7_tx);
  b.stats.counter("h7_nic", "ecn", "packets", "marked", &h7_ecn);
  b.stats.counter("sw3", "ecn", "packets", "marked", &sw3_ecn);
  b.stats.gauge("sw4", "drops", "packets", "not a counter", [] { return 50.0; });
  EXPECT_EQ(b.stats.counter_total("tx"), 42u);  // 5 + 7 + 0 + 30
  EXPECT_EQ(b.stats.counter_max("tx"), 30u);
  EXPECT_EQ(b.stats.counter_total("drops"), 7u);  // 3 + 4
  EXPECT_EQ(b.stats.counter_max("drops"), 4u);
  EXPECT_EQ(b.stats.counter_total("ecn"), 8u);  // 2 + 6
  EXPECT_EQ(b.stats.counter_max("ecn"), 6u);
  // And once more after a second round of registration, each counter counted once.
  uint64_t h8_tx = 1;
  b.stats.counter("h8_nic", "tx", "packets", "sent", &h8_tx);
  EXPECT_EQ(b.stats.counter_total("tx"), 43u);
  EXPECT_EQ(b.stats.counter_total("drops"), 7u);
  // The statistics' JSON frees the index; the next query builds it again, with what was registered since.
  EXPECT_EQ(b.stats.to_json()["h8_nic"]["tx"]["value"], 1);
  uint64_t h9_tx = 100;
  b.stats.counter("h9_nic", "tx", "packets", "sent", &h9_tx);
  EXPECT_EQ(b.stats.counter_total("tx"), 143u);
  EXPECT_EQ(b.stats.counter_max("tx"), 100u);
  EXPECT_EQ(b.stats.counter_total("ecn"), 8u);
}

}  // namespace stats_test
}  // namespace fabricsim::core
