// Alltoall on a cluster of NVLink domains (testbench/cluster_alltoall.h) on HGX B200 nodes with Spectrum-X
// rails: every GPU's received blocks equal what their senders filled their buffers with, and the algbw stays
// under the hand bound computed here from the link rates and wire formats (not read from the report), within
// a stated fraction of it. Runs of a few seconds, each forked.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace {

using nlohmann::json;

std::string cluster(uint64_t nodes, uint64_t bytes, const std::string& extra = "") {
  return "system: {preset: hgx_b200, nodes: " + std::to_string(nodes) +
         ", scale_out: spectrum_x}\n"
         "workload: {kind: collective}\n"
         "collective: {op: alltoall, algo: hierarchical, dtype: float, iterations: 1, warmup_iterations: 0, "
         "min_bytes: " +
         std::to_string(bytes) + ", max_bytes: " + std::to_string(bytes) + extra + "}\n";
}

// By hand, from the published figures the preset sets (docs/calibration.md): 8 GPUs per node, 18 NVLink 5
// links of 50 GB/s per direction, 256-byte payloads in 272 wire bytes; one 400 Gb/s Ethernet NIC per GPU,
// 4096-byte payloads in 4096 + 82 wire bytes. Per GPU and direction NVLink carries (G-1)/G of the buffer
// (its G-1 blocks in the domain and, through the proxies, its (G-1)(D-1) blocks for other rails) and the
// NIC (N-G)/N, at the same time: algbw <= min(B_nv G/(G-1), B_rail N/(N-G)).
double bound_by_hand(double d) {
  const double g = 8, n = g * d;
  const double b_nv = 18 * 50.0 * 256 / 272, b_rail = 400 / 8.0 * 4096 / 4178;
  const double nv = b_nv * g / (g - 1);
  return d > 1 ? std::min(nv, b_rail * n / (n - g)) : nv;
}

void check_run(uint64_t nodes, uint64_t bytes, double fraction) {
  const json r = test::run_scenario_yaml(cluster(nodes, bytes));
  ASSERT_TRUE(r.contains("collective")) << r.dump().substr(0, 2000);
  const json& row = r["collective"]["rows"][0];
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(row["wrong"], 0u);
  EXPECT_EQ(r["collective"]["result_checked_bytes"], 8 * nodes * bytes);  // every GPU's whole receive buffer
  EXPECT_EQ(r["alltoall"]["rail_writes_failed"], 0u);
  // Rail WRITEs: one per block between domains, (N - G) per GPU.
  EXPECT_EQ(r["alltoall"]["rail_writes"], 8 * nodes * (8 * nodes - 8));
  const double bound = bound_by_hand(double(nodes)), algbw = row["algbw_gbps"].get<double>();
  EXPECT_LE(algbw, bound);
  EXPECT_GE(algbw, fraction * bound) << "bound " << bound;
  EXPECT_NEAR(r["alltoall"]["algbw_bound_gbps"].get<double>(), bound, 1e-6 * bound);
  const json& ph = row["phases_us"];
  EXPECT_NEAR(std::max(ph["nvlink"].get<double>(), ph["rail"].get<double>()), row["time_us"].get<double>(), 1e-3);
  std::cout << nodes << " nodes, " << bytes << " B: algbw " << algbw << " GB/s, bound " << bound << " ("
            << algbw / bound * 100 << " %); phases " << ph.dump() << "\n";
}

TEST(hierarchical_alltoall, one_node_over_nvlink_reaches_its_bound) { check_run(1, 8u << 20, 0.8); }

TEST(hierarchical_alltoall, two_nodes_reach_the_rail_bound) { check_run(2, 8u << 20, 0.8); }

TEST(hierarchical_alltoall, four_nodes_reach_the_rail_bound) { check_run(4, 4u << 20, 0.8); }

TEST(hierarchical_alltoall, refuses_a_reduction_key) {
  const test::child_result c = test::run_in_child(
      [&] { return run_scenario(load_scenario_text(cluster(2, 1u << 20, ", intra: nvls"), "t.yaml")).dump(); });
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.output.find("t.yaml: collective.intra nvls, collective.inter ring: an alltoall reduces nothing"),
            std::string::npos)
      << c.output;
}

}  // namespace
}  // namespace fabricsim::testbench
