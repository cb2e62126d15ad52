// The partition of a fabric across ranks against hand derivations: which rank gets which hosts and switches,
// how many link directions cross, the lookahead, and which rank owns a statistics instance. No MPI: the
// partition is plain bookkeeping every rank computes alike.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sc_models/mpi/partition.h"
#include "sc_models/topology/fabric.h"

namespace fabricsim::test {
namespace partition_test {

using nlohmann::json;

// Describes the partition of the fabric `topo` lays out into `ranks` (the layout alone: no device is built).
json describe(const topology::topology_params& topo, int ranks, const std::vector<std::string>& instances,
              const std::vector<std::vector<std::string>>& placed = {}) {
  const topology::fabric_layout layout = topology::plan_fabric(topo, {});
  const mpi::partition part(layout, ranks, placed);
  json out;
  out["hosts"] = part.hosts_per_rank();
  out["switches"] = part.switches_per_rank();
  out["cross"] = part.cross_links();
  out["lookahead_ns"] = part.lookahead().ns();
  std::vector<int> sw;
  for (size_t s = 0; s < layout.switches.size(); ++s) sw.push_back(part.switch_rank(s));
  out["switch_rank"] = sw;
  for (const std::string& i : instances) out["instance"][i] = part.instance_rank(i);
  std::vector<int> built;  // rank 1's mask: hosts, then switches
  for (bool b : part.built_by(1)) built.push_back(b ? 1 : 0);
  out["built_by_1"] = built;
  return out;
}

TEST(Partition, LeafSpineLeavesInBlocksSpinesSpread) {
  // 5 leaves x 4 hosts, 4 spines, 2 ranks. Leaf j goes to rank j * 2 / 5: leaves 0, 1, 2 to rank 0 (12
  // hosts), 3, 4 to rank 1 (8). Each spine sees the leaves 3:2, no 3/4 majority, so it goes to the rank with
  // fewer switches: spine0 to 1 (3 vs 2), spine1 to 0 (3 vs 3, lowest), spine2 to 1, spine3 to 0. Crossing
  // cables: rank 0's 3 leaves to rank 1's 2 spines, rank 1's 2 leaves to rank 0's 2 spines: 10 cables, 20
  // link directions. Lookahead: a 10 m leaf-spine cable, 50 ns, plus 100 ns of FEC.
  topology::topology_params t;
  t.kind = "leaf_spine";
  t.leaves = 5;
  t.hosts_per_leaf = 4;
  t.spines = 4;
  const json j = describe(t, 2, {"h13_nic", "h3_mem", "leaf0.port2", "spine0", "spine1.port0", "h0_to_leaf0",
                                 "arrival_calendar"});
  EXPECT_EQ(j["hosts"], json({12, 8}));
  EXPECT_EQ(j["switches"], json({5, 4}));
  EXPECT_EQ(j["switch_rank"], json({0, 0, 0, 1, 1, 1, 0, 1, 0}));
  EXPECT_EQ(j["cross"], 20);
  EXPECT_DOUBLE_EQ(j["lookahead_ns"].get<double>(), 150.0);
  EXPECT_EQ(j["instance"]["h13_nic"], 1);  // h13 hangs off leaf 3
  EXPECT_EQ(j["instance"]["h3_mem"], 0);
  EXPECT_EQ(j["instance"]["leaf0.port2"], 0);
  EXPECT_EQ(j["instance"]["spine0"], 1);
  EXPECT_EQ(j["instance"]["spine1.port0"], 0);
  EXPECT_EQ(j["instance"]["h0_to_leaf0"], -1);  // a link: summed over both ends
  EXPECT_EQ(j["instance"]["arrival_calendar"], -1);
}

TEST(Partition, ThreeTierPodsStayWhole) {
  // 2 pods of 2 leaves x 2 hosts and 2 spines, 2 cores (one per plane), 2 ranks. Leaves 0, 1 (pod 0) to rank
  // 0, leaves 2, 3 (pod 1) to rank 1. A pod spine sees only its pod's leaves (cores come later): all on one
  // rank, so it joins its pod. Core c links pod0_spine c and pod1_spine c, 1:1: the least loaded rank, core0
  // to 0 (4 vs 4), core1 to 1 (5 vs 4). Crossing: core0 to pod1_spine0 and core1 to pod0_spine1, 2 cables,
  // 4 directions; the lookahead is the 30 m spine-core cable, 150 ns, plus 100 ns of FEC.
  topology::topology_params t;
  t.kind = "three_tier";
  t.pods = 2;
  t.leaves = 2;
  t.hosts_per_leaf = 2;
  t.spines = 2;
  t.cores = 2;
  const json j = describe(t, 2, {"pod1_leaf0.port0", "core1"});
  EXPECT_EQ(j["hosts"], json({4, 4}));
  EXPECT_EQ(j["switches"], json({5, 5}));
  EXPECT_EQ(j["switch_rank"], json({0, 0, 1, 1, 0, 0, 1, 1, 0, 1}));
  EXPECT_EQ(j["cross"], 4);
  EXPECT_DOUBLE_EQ(j["lookahead_ns"].get<double>(), 250.0);
  EXPECT_EQ(j["instance"]["pod1_leaf0.port0"], 1);
  EXPECT_EQ(j["instance"]["core1"], 1);
}

TEST(Partition, DevicesPlacedByHandOthersByTheRules) {
  // The 5-leaf fabric above with leaf0 and every spine placed on rank 0 and leaves 1-4 and h0 on rank 1 by
  // hand (h0 away from its leaf). Hosts: h1-h3 under leaf0 on rank 0, h0 and the 16 under leaves 1-4 on rank
  // 1. Crossing: leaves 1-4 to the 4 spines, 16 cables, and h0's own cable: 17 cables, 34 link directions.
  // The shortest crossing cable is h0's 2 m host cable: 10 ns plus 100 ns of FEC.
  topology::topology_params t;
  t.kind = "leaf_spine";
  t.leaves = 5;
  t.hosts_per_leaf = 4;
  t.spines = 4;
  const json j = describe(t, 2, {"h0_nic", "h1_nic"},
                          {{"leaf0", "spine0", "spine1", "spine2", "spine3"}, {"leaf1", "leaf2", "leaf3", "leaf4", "h0"}});
  EXPECT_EQ(j["hosts"], json({3, 17}));
  EXPECT_EQ(j["switches"], json({5, 4}));
  EXPECT_EQ(j["switch_rank"], json({0, 1, 1, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(j["cross"], 34);
  EXPECT_DOUBLE_EQ(j["lookahead_ns"].get<double>(), 110.0);
  EXPECT_EQ(j["instance"]["h0_nic"], 1);
  EXPECT_EQ(j["instance"]["h1_nic"], 0);
  // Rank 1 builds h0 and h4-h19, and leaves 1-4.
  std::vector<int> expected(20 + 9, 0);
  expected[0] = 1;
  for (int h = 4; h < 20; ++h) expected[size_t(h)] = 1;
  for (int leaf = 1; leaf <= 4; ++leaf) expected[size_t(20 + leaf)] = 1;
  EXPECT_EQ(j["built_by_1"], json(expected));
  // Only leaf0 named, on rank 1: the other leaves keep their blocks (1, 2 to rank 0; 3, 4 to rank 1), so
  // rank 0 has 2 switches and rank 1 has 3. Every spine sees the leaves 2:3 (no 3/4 majority) and goes to the
  // rank with fewer switches, the lowest on a tie: spine0 to 0 (2 vs 3), spine1 to 0 (3 vs 3), spine2 to 1
  // (4 vs 3), spine3 to 0 (4 vs 4).
  const json k = describe(t, 2, {}, {{}, {"leaf0"}});
  EXPECT_EQ(k["switch_rank"], json({1, 0, 0, 1, 1, 0, 0, 1, 0}));
  EXPECT_EQ(k["hosts"], json({8, 12}));
}

TEST(Partition, OneRankCutsNothing) {
  topology::topology_params t;
  t.kind = "leaf_spine";
  const json j = describe(t, 1, {});
  EXPECT_EQ(j["cross"], 0);
  EXPECT_EQ(j["hosts"], json({16}));
}

}  // namespace partition_test
}  // namespace fabricsim::test
