// Determinism of whole runs (docs/robustness.md): a mid-size scenario that draws from every kind of seeded
// stream (generated flow sizes, arrivals and destinations, ECMP/adaptive choices, sprayed source ports,
// initial PSNs, injected losses) runs twice with one seed and once with another, each in its own process.
// The first two reports must be identical byte for byte apart from the host wall-clock fields; the third
// must differ.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/scenario_child.h"

namespace determinism_test {

using nlohmann::json;

// The fields that measure the host, not the model (docs/report.md): removed wherever they appear.
void strip_wall_clock(json& j) {
  if (j.is_object()) {
    j.erase("wall_time_s");
    j.erase("packet_hops_per_s");
    j.erase("peak_rss_mib");
    for (auto& [key, value] : j.items()) strip_wall_clock(value);
  } else if (j.is_array()) {
    for (json& value : j) strip_wall_clock(value);
  }
}

std::string scenario(int seed) {
  return "name: determinism\n"
         "seed: " + std::to_string(seed) + "\n"
         "topology: {kind: leaf_spine, leaves: 4, spines: 2, hosts_per_leaf: 4, link_gbps: 400}\n"
         "switch: {routing: adaptive}\n"
         "link: {drop_probability: 0.001}\n"
         "nic: {cc: dcqcn, path_entropy: per_packet}\n"
         "workload: {kind: generated, distribution: websearch, load: 0.5, flow_count: 128,\n"
         "           max_flow_bytes: 262144, destinations: uniform}\n";
}

json run(int seed) {
  json report = fabricsim::test::run_scenario_yaml(scenario(seed));
  strip_wall_clock(report);
  return report;
}

TEST(determinism, same_seed_same_report_other_seed_differs) {
  const json a = run(11), b = run(11), c = run(12);
  ASSERT_FALSE(a.empty());
  // The run did something worth comparing: every generated flow completed and was checked.
  ASSERT_EQ(a.at("operations").get<uint64_t>(), 128u);
  EXPECT_EQ(a.at("completed"), a.at("operations"));
  EXPECT_TRUE(a.at("verified").get<bool>());
  // 128 flows of up to 256 KiB (websearch mean under the cap ~100 KB: ~13 MB, ~3000 MTU packets over 2-4 hops,
  // plus ACKs) at 0.1 % loss per frame and link: ~10-20 losses expected, none at all has odds near e^-10.
  // Without losses the loss and retransmission streams would go untested.
  EXPECT_GT(a.at("fabric").at("injected_drops").get<uint64_t>(), 0u);
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_NE(a.dump(), c.dump());
  // Not only somewhere: the flows themselves (sizes, destinations, completion times) differ.
  EXPECT_NE(a.at("flows").dump(), c.at("flows").dump());
}

}  // namespace determinism_test
