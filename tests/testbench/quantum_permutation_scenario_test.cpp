// Adaptive routing on an InfiniBand fat tree (testbench/scenarios/ib_permutation.yaml), on a smaller fabric:
// 4 leaves x 4 HCAs, 4 spines, 800G, a seeded random permutation of long WRITEs, static LFT routing against
// adaptive routing. Expected, by mechanism and computed here from the planned permutation (not from the
// model): with the static LFT a leaf sends LID d up through port (d mod 4) (D-mod-K), so the flows leaving
// one leaf use as many uplinks as their destination LIDs have distinct residues mod 4; an uplink is full
// whatever the number of flows sharing it, and spine-to-leaf links never collide (a leaf's hosts have
// distinct residues), so the fabric carries sum over leaves of (distinct residues) / 16 of the offered
// load, times the payload share of a packet, 4096 / 4122. Adaptive routing spreads every packet: at least
// 0.9 (issue 7), and nothing is dropped in either run (credits).
#include <iostream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testbench/simulation.h"
#include "testbench/workload.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace quantum_permutation_scenario_test {

std::string yaml(uint64_t seed, const std::string& routing) {
  return "seed: " + std::to_string(seed) +
         "\nrun: {duration_us: 40, warmup_us: 10}\n"
         "topology: {kind: leaf_spine, leaves: 4, hosts_per_leaf: 4, spines: 4, link_gbps: 800}\n"
         "switch: {model: quantum_x800}\n"
         "quantum: {routing: " + routing + ", vl_buffer_bytes: 131072}\n"
         "nic: {place_data: false, cc: none, reorder: rtl, reorder_window: 1024}\n"
         "workload: {kind: permutation, pattern: random, message_bytes: 16777216}\n";
}

class ib_permutation : public ::testing::TestWithParam<uint64_t> {};

TEST_P(ib_permutation, static_lft_carries_its_distinct_uplinks_adaptive_routing_fills_the_fabric) {
  const uint64_t seed = GetParam();
  // The static figure, from the permutation the run will post.
  const scenario s = load_scenario_text(yaml(seed, "static"), "t.yaml");
  std::vector<std::set<size_t>> residues(4);
  for (const planned_flow& f : plan_workload(s)) residues[f.src / 4].insert((f.dst + 1) % 4);
  double uplinks = 0;
  for (const auto& r : residues) uplinks += double(r.size());
  const double payload_share = 4096.0 / 4122.0;
  const double expected_static = uplinks / 16.0 * payload_share;

  const nlohmann::json st = test::run_scenario_yaml(yaml(seed, "static"));
  const nlohmann::json ar = test::run_scenario_yaml(yaml(seed, "adaptive"));
  ASSERT_TRUE(st.contains("fabric") && ar.contains("fabric"));
  const double e_static = st["fabric"]["effective_throughput"].get<double>();
  const double e_adaptive = ar["fabric"]["effective_throughput"].get<double>();
  std::cout << "seed " << seed << ": static " << e_static << " (expected " << expected_static << ", " << uplinks
            << " of 16 uplinks), adaptive " << e_adaptive << "\n";
  EXPECT_NEAR(e_static, expected_static, 0.02);
  EXPECT_GE(e_adaptive, 0.9);
  EXPECT_LE(e_adaptive, payload_share + 1e-9);
  EXPECT_EQ(st["dropped_packets"], 0);
  EXPECT_EQ(ar["dropped_packets"], 0);
}

INSTANTIATE_TEST_SUITE_P(seeds, ib_permutation, ::testing::Values(1, 2));

}  // namespace quantum_permutation_scenario_test
}  // namespace fabricsim::testbench
