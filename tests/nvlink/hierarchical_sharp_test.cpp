// collective.inter sharp (testbench/rail_sharp.h): the hierarchical allreduce with its middle phase reduced in
// each rail's Quantum-X800 switches, on HGX B300 nodes (8 GPUs, one 800 Gb/s ConnectX-8 per GPU). Every GPU's
// result equals the reference summed over all GPUs; the busbw stays under the hand bound computed here from
// the link rates and wire formats (not read from the report) and within a stated fraction of it; at 4 nodes,
// where the ring sends 2(D-1)/D = 1.5 shards per NIC and SHARP one, SHARP is faster than the ring. Refusal: a
// switch carrying more rails' trees than it has aggregation slots. Runs of a few seconds, each forked.
#include <gtest/gtest.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace hierarchical_sharp_test {

using nlohmann::json;

std::string cluster(uint64_t nodes, uint64_t bytes, const std::string& inter, const std::string& extra = "") {
  return "system: {preset: hgx_b300, nodes: " + std::to_string(nodes) +
         ", scale_out: quantum_x800}\n"
         "workload: {kind: collective}\n"
         "collective: {op: allreduce, algo: hierarchical, inter: " +
         inter + ", dtype: float, iterations: 1, warmup_iterations: 0, chunk_bytes: 65536, min_bytes: " +
         std::to_string(bytes) + ", max_bytes: " + std::to_string(bytes) + "}\n" + extra;
}

// By hand, from the published figures the preset sets (docs/calibration.md): 8 GPUs per node, 18 NVLink 5
// links of 50 GB/s per direction, 256-byte payloads in 272 wire bytes; one 800 Gb/s InfiniBand port per GPU.
// SHARP packets: a 4096-byte chunk with LRH 8, BTH 12, aggregation header 16, ICRC 4, VCRC 2 = 42 bytes.
// Per NIC and direction SHARP moves the 1/G shard once (up, then the result down); the ring 2(D-1)/D of it.
constexpr double g = 8;
constexpr double b_nv = 18 * 50.0 * 256 / 272;       // GB/s per GPU: 847.06
constexpr double b_sharp = 800 / 8.0 * 4096 / 4138;  // GB/s per NIC: 98.985
constexpr double b_ring = 800 / 8.0 * 4096 / 4122;   // GB/s per NIC: 99.369 (LRH, BTH, ICRC, VCRC)

struct bounds {
  double serial;    // busbw, GB/s
  double inter_us;  // the least time of the rail phase
};

bounds sharp_by_hand(double d, double bytes) {
  const double n = g * d, bf = 2 * (n - 1) / n;
  const double nv = 2 * (g - 1) / g / b_nv, rail = 1 / g / b_sharp;  // s per byte of buffer
  return {bf / (nv + rail), rail * bytes / 1e3};
}

const json& row0(const json& r) { return r["collective"]["rows"][0]; }

// The run's data check, its phases adding up, and its busbw between `fraction` of the serial bound and it.
void check_sharp_run(const json& r, uint64_t nodes, uint64_t bytes, double fraction) {
  ASSERT_TRUE(r.contains("collective")) << r.dump().substr(0, 2000);
  const json& row = row0(r);
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(row["wrong"], 0u);
  EXPECT_EQ(r["collective"]["result_checked_bytes"], 8 * nodes * bytes);  // every GPU's whole result
  const json& sh = r["hierarchical"]["sharp"];
  EXPECT_EQ(sh["trees"], 8u);
  EXPECT_EQ(sh["unexpected"], 0u);
  EXPECT_EQ(sh["host_unexpected"], 0u);
  EXPECT_EQ(sh["credit_violations"], 0u);
  EXPECT_EQ(r["hierarchical"]["rail_writes"], 0u) << "no RDMA WRITE crosses the rails: the switches reduce";
  const bounds b = sharp_by_hand(double(nodes), double(bytes));
  const double busbw = row["busbw_gbps"].get<double>();
  EXPECT_LE(busbw, b.serial);
  EXPECT_GE(busbw, fraction * b.serial) << "bound " << b.serial;
  const json& ph = row["phases_us"];
  EXPECT_GE(ph["inter_domain"].get<double>(), b.inter_us);
  EXPECT_NEAR(ph["reduce_scatter"].get<double>() + ph["inter_domain"].get<double>() + ph["allgather"].get<double>(),
              row["time_us"].get<double>(), 1e-3);
  EXPECT_NEAR(r["hierarchical"]["serial_busbw_bound_gbps"].get<double>(), b.serial, 1e-6 * b.serial);
  std::cout << nodes << " nodes, " << bytes << " B, sharp: busbw " << busbw << " GB/s, serial bound " << b.serial
            << ", inter-domain bound " << b.inter_us << " us; phases " << ph.dump() << "\n";
}

TEST(hierarchical_sharp, two_nodes_reach_the_serial_bound) {
  check_sharp_run(test::run_scenario_yaml(cluster(2, 8u << 20, "sharp")), 2, 8u << 20, 0.9);
}

// At D = 4 the ring's rail phase carries 2(D-1)/D = 1.5 shards per NIC and direction, SHARP's one: SHARP's
// inter-domain phase is shorter by about 1.5 x b_sharp / b_ring = 1.49 (the NVLink phases are the same).
TEST(hierarchical_sharp, four_nodes_reach_the_serial_bound_and_beat_the_ring) {
  const uint64_t bytes = 8u << 20;
  const json sharp = test::run_scenario_yaml(cluster(4, bytes, "sharp"));
  check_sharp_run(sharp, 4, bytes, 0.9);
  const json ring = test::run_scenario_yaml(cluster(4, bytes, "ring"));
  ASSERT_TRUE(ring.contains("collective")) << ring.dump().substr(0, 2000);
  EXPECT_TRUE(ring["verified"].get<bool>());
  const double t_sharp = row0(sharp)["time_us"].get<double>(), t_ring = row0(ring)["time_us"].get<double>();
  const double i_sharp = row0(sharp)["phases_us"]["inter_domain"].get<double>();
  const double i_ring = row0(ring)["phases_us"]["inter_domain"].get<double>();
  EXPECT_LT(t_sharp, t_ring);
  EXPECT_GT(i_ring / i_sharp, 1.3) << "the ring's rail phase moves 1.5x the bytes";
  std::cout << "4 nodes, 8 MiB: sharp " << t_sharp << " us (inter " << i_sharp << "), ring " << t_ring << " us (inter "
            << i_ring << ")\n";
}

// Two groups of two nodes: each rail has a leaf per group, so its tree climbs to a spine; the 8 rails' roots
// spread over the 4 spines (2 trees each), which split their 64 aggregation slots: 32 per tree.
constexpr const char* two_groups = "topology: {groups: 2, hosts_per_leaf: 2}\n";

TEST(hierarchical_sharp, trees_across_two_leaves_per_rail_climb_to_the_spines) {
  const uint64_t bytes = 8u << 20;
  const json r = test::run_scenario_yaml(cluster(4, bytes, "sharp", two_groups));
  check_sharp_run(r, 4, bytes, 0.9);
  const json& sh = r["hierarchical"]["sharp"];
  EXPECT_EQ(sh["tree_switches"], 8u * 3u) << "two leaves and a spine per rail";
  const std::set<std::string> roots(sh["roots"].begin(), sh["roots"].end());
  EXPECT_EQ(roots.size(), 4u) << sh["roots"].dump();
  for (const std::string& root : roots) EXPECT_EQ(root.rfind("spine", 0), 0u) << root;
  EXPECT_EQ(sh["min_slots_per_tree"], 32u);
}

TEST(hierarchical_sharp, a_spine_with_fewer_slots_than_trees_is_refused) {
  const test::child_result c = test::run_in_child([&] {
    return run_scenario(load_scenario_text(
                            cluster(4, 1u << 20, "sharp", std::string(two_groups) + "sharp: {slots: 1}\n"), "t.yaml"))
        .dump();
  });
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.output.find("t.yaml: sharp.slots 1: switch spine"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("is on the SHARP trees of 2 rails (topology.rails 8, topology.groups 2, topology.spines 4)"),
            std::string::npos)
      << c.output;
}

// One node: nothing crosses the rails; the phase ends as it starts and the result is still every GPU's sum.
TEST(hierarchical_sharp, one_node_has_no_rail_phase) {
  const json r = test::run_scenario_yaml(cluster(1, 1u << 20, "sharp"));
  ASSERT_TRUE(r.contains("collective")) << r.dump().substr(0, 2000);
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(row0(r)["wrong"], 0u);
  EXPECT_EQ(row0(r)["phases_us"]["inter_domain"].get<double>(), 0.0);
  EXPECT_EQ(r["hierarchical"]["sharp"]["trees"], 0u);
}

}  // namespace hierarchical_sharp_test
}  // namespace fabricsim::testbench
