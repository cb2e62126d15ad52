// The InfiniBand incast scenario (testbench/scenarios/ib_incast.yaml) through the whole simulation: SuperNICs
// as HCAs (nic.link_layer infiniband, set by switch.model quantum_x800) on a two-level fat tree of
// Quantum-X800 switches. Expected by mechanism and by hand: nothing dropped; the bottleneck wire full, so its
// payload utilization is the payload share of a 4096-byte WRITE MIDDLE packet, 4096 / (8 + 12 + 4096 + 4 + 2)
// = 0.9937; each of the 16 senders gets 1/16 of that; credit stalls at every hop upstream of the bottleneck
// (HCA -> leaf, leaf -> spine, spine -> leaf0) and none on the bottleneck itself (h0 drains at once).
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testbench/simulation.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace quantum_incast_scenario_test {

TEST(quantum_incast_scenario, lossless_full_bottleneck_and_stalls_upstream) {
  std::ifstream f(std::string(FABRICSIM_SOURCE_DIR) + "/testbench/scenarios/ib_incast.yaml");
  ASSERT_TRUE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  std::string yaml = ss.str();
  // A shorter run keeps the test quick; the shape is the scenario's.
  const size_t at = yaml.find("duration_us: 300");
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, 16, "duration_us: 120");
  const nlohmann::json r = test::run_scenario_yaml(yaml);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r["dropped_packets"], 0);
  const nlohmann::json& fab = r["fabric"];
  const double payload_share = 4096.0 / 4122.0;
  EXPECT_NEAR(fab["bottleneck"]["utilization"].get<double>(), payload_share, 0.005);
  for (const auto& [host, gbps] : fab["sender_goodput_gbps"].items())
    EXPECT_NEAR(gbps.get<double>(), 800.0 * payload_share / 16, 1.0) << host;
  const nlohmann::json& hops = fab["credit_stall_us_by_hop"];
  // Window 70 us after a 50 us warm-up; the stalls run the whole 120 us at every upstream hop.
  EXPECT_GT(hops.value("nic_to_leaf", 0.0), 16 * 100.0);
  EXPECT_GT(hops.value("leaf_to_spine", 0.0), 16 * 100.0);
  EXPECT_GT(hops.value("spine_to_leaf", 0.0), 4 * 100.0);
  EXPECT_FALSE(hops.contains("leaf_to_nic")) << hops.dump();
  EXPECT_EQ(r["stats"]["leaf0"]["not_infiniband"]["value"], 0);
}

}  // namespace quantum_incast_scenario_test
}  // namespace fabricsim::testbench
