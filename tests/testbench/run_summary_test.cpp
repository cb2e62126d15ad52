// The fabric's capacity figures (testbench/run_summary.h) against hand counts of cables.
#include "testbench/run_summary.h"

#include <gtest/gtest.h>

namespace fabricsim::testbench {
namespace {

TEST(run_summary, three_tier_capacity_by_hand) {
  topology::topology_params t;
  t.kind = "three_tier";
  t.pods = 2;
  t.leaves = 2;
  t.hosts_per_leaf = 4;
  t.spines = 2;
  t.cores = 4;
  t.link_gbps = 400;
  const fabric_capacity c = capacity_of(t);
  EXPECT_DOUBLE_EQ(c.host_tier_gbps, 16 * 400.0);       // 2 pods x 2 leaves x 4 hosts
  EXPECT_DOUBLE_EQ(c.leaf_uplink_gbps, 4 * 2 * 400.0);  // 4 leaves x 2 spines
  EXPECT_DOUBLE_EQ(c.core_tier_gbps, 2 * 4 * 400.0);    // each pod: one cable to every core
  EXPECT_DOUBLE_EQ(c.leaf_oversubscription, 2.0);       // 4 hosts down, 2 uplinks
  EXPECT_DOUBLE_EQ(c.spine_oversubscription, 1.0);      // 2 leaves down, 4 / 2 cores up
  EXPECT_DOUBLE_EQ(c.bisection_gbps, 1600.0);           // half of the 3200 Gb/s tiers
}

TEST(run_summary, single_switch_line) {
  topology::topology_params t;
  t.hosts = 8;
  EXPECT_EQ(fabric_line(t),
            "fabric: single_switch, one switch, 8 hosts; hosts 400 Gb/s; leaf oversubscription 1:1; "
            "bisection 1.6 Tb/s (half the narrowest tier)\n");
}

TEST(run_summary, uplinks_faster_than_hosts_lower_the_oversubscription) {
  topology::topology_params t;
  t.kind = "leaf_spine";
  t.leaves = 4;
  t.hosts_per_leaf = 8;
  t.spines = 2;
  t.uplink_gbps = 800;  // 8 x 400 down, 2 x 800 up: 2:1
  const fabric_capacity c = capacity_of(t);
  EXPECT_DOUBLE_EQ(c.leaf_oversubscription, 2.0);
  EXPECT_DOUBLE_EQ(c.bisection_gbps, 4 * 2 * 800.0 / 2);  // uplinks 6400 < hosts 12800
}

TEST(run_summary, dragonfly_capacity_and_line_by_hand) {
  topology::topology_params t;
  t.kind = "dragonfly";  // defaults: p = 2, a = 4, h = 2, g = 4 x 2 + 1 = 9; 400 Gb/s everywhere
  const fabric_capacity c = capacity_of(t);
  EXPECT_DOUBLE_EQ(c.host_tier_gbps, 72 * 400.0);              // 9 x 4 routers x 2 hosts
  EXPECT_DOUBLE_EQ(c.leaf_uplink_gbps, 36 * (3 + 2) * 400.0);  // every router: 3 local + 2 global cables
  EXPECT_DOUBLE_EQ(c.core_tier_gbps, 36 * 400.0);              // 9 x 8 / 2 global cables
  EXPECT_DOUBLE_EQ(c.leaf_oversubscription, 0.4);              // 2 hosts over 5 cables
  EXPECT_DOUBLE_EQ(c.bisection_gbps, 36 * 400.0 / 2);          // the global tier is the narrowest
  EXPECT_EQ(fabric_line(t),
            "fabric: dragonfly, 9 groups of 4 routers x 2 hosts, 2 global cables per router; hosts 400 Gb/s, uplinks "
            "400 Gb/s; leaf oversubscription 0.4:1; bisection 7.2 Tb/s (half the narrowest tier)\n");
}

}  // namespace
}  // namespace fabricsim::testbench
