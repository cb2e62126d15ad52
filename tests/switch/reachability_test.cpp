// The reachability table InfiniBand rerouting reads (sc_models/switch/quantum/reachability.h), on a
// hand-wired two-leaf, two-spine fat tree with hand-derived expectations: with nothing down, with a spine's
// down-link to a leaf down, and with a host cable down.
#include "sc_models/switch/quantum/reachability.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

using namespace fabricsim;
using sw::reach_inputs;

namespace reachability_test {

// Switches: leaf0 (0), leaf1 (1), spine0 (2), spine1 (3). A leaf's ports 0 and 1 face its hosts, port 2 spine0,
// port 3 spine1; a spine's port 0 faces leaf0, port 1 leaf1. Hosts h0, h1 on leaf0 are LIDs 1, 2; h2, h3 on
// leaf1 are LIDs 3, 4; LID 0 has no route anywhere. Routes as the fabric's up/down ones: a leaf to its own
// hosts by their port, to the other leaf's over both spines; a spine down to the leaf of the host.
struct fat_tree {
  sw::equal_cost_groups groups;
  std::vector<std::vector<sw::equal_cost_ref>> route;  // [switch][lid]
  std::set<std::pair<size_t, unsigned>> down;          // (switch, port) whose link is known down
  reach_inputs in;

  fat_tree() {
    const size_t h = reach_inputs::no_switch;
    in.peer = {{h, h, 2, 3}, {h, h, 2, 3}, {0, 1}, {0, 1}};
    in.lids = 5;
    route.assign(4, std::vector<sw::equal_cost_ref>(5));
    for (size_t leaf = 0; leaf < 2; ++leaf)
      for (uint16_t lid = 1; lid <= 4; ++lid) {
        const bool own = (lid - 1) / 2 == leaf;
        route[leaf][lid] = own ? groups.intern({unsigned((lid - 1) % 2)}) : groups.intern({2, 3});
      }
    for (size_t spine = 2; spine < 4; ++spine)
      for (uint16_t lid = 1; lid <= 4; ++lid) route[spine][lid] = groups.intern({unsigned((lid - 1) / 2)});
    in.group = [this](size_t s, uint16_t lid) { return groups.group(route[s][lid]); };
    in.down = [this](size_t s, unsigned port) { return down.count({s, port}) != 0; };
  }
};

// The row as a string of 0/1 by LID (0 .. 4), or "host" for an empty row.
std::string row(const std::vector<sw::reach_rows>& t, size_t s, unsigned port) {
  if (t.at(s).at(port).empty()) return "host";
  std::string out;
  for (bool b : t[s][port]) out += b ? '1' : '0';
  return out;
}

TEST(reachability, with_nothing_down_every_switch_beyond_every_port_reaches_every_host) {
  fat_tree f;
  const std::vector<sw::reach_rows> t = sw::reach_beyond(f.in);
  ASSERT_EQ(t.size(), 4u);
  for (size_t leaf = 0; leaf < 2; ++leaf) {
    EXPECT_EQ(row(t, leaf, 0), "host");
    EXPECT_EQ(row(t, leaf, 1), "host");
    EXPECT_EQ(row(t, leaf, 2), "01111");  // LID 0: no route
    EXPECT_EQ(row(t, leaf, 3), "01111");
  }
  for (size_t spine = 2; spine < 4; ++spine) {
    EXPECT_EQ(row(t, spine, 0), "01111");
    EXPECT_EQ(row(t, spine, 1), "01111");
  }
}

TEST(reachability, a_spine_whose_link_to_a_leaf_is_down_no_longer_reaches_that_leafs_hosts) {
  fat_tree f;
  f.down.insert({3, 1});  // spine1 -> leaf1
  const std::vector<sw::reach_rows> t = sw::reach_beyond(f.in);
  // spine1's only route to h2 and h3 (LIDs 3, 4) is that link: the leaves see them unreachable through
  // spine1, still reachable through spine0; h0 and h1 stay reachable through spine1 (spine1 -> leaf0 is up).
  EXPECT_EQ(row(t, 0, 3), "01100");
  EXPECT_EQ(row(t, 1, 3), "01100");
  EXPECT_EQ(row(t, 0, 2), "01111");
  EXPECT_EQ(row(t, 1, 2), "01111");
  // Beyond a spine's ports are leaves, which still reach everything (leaf1 reaches h0 through spine0): the
  // down link itself is the spine's own to check, not the table's.
  EXPECT_EQ(row(t, 3, 1), "01111");
  EXPECT_EQ(row(t, 3, 0), "01111");
  EXPECT_EQ(row(t, 2, 1), "01111");
}

TEST(reachability, a_host_cable_down_makes_that_host_unreachable_from_every_port_that_leads_to_it) {
  fat_tree f;
  f.down.insert({1, 0});  // leaf1 -> h2 (LID 3)
  const std::vector<sw::reach_rows> t = sw::reach_beyond(f.in);
  // leaf1 cannot deliver LID 3; so neither spine can (each goes down to leaf1), and leaf0, whose route to
  // LID 3 is the two spines, cannot either. Every other LID is as before.
  EXPECT_EQ(row(t, 0, 2), "01101");
  EXPECT_EQ(row(t, 0, 3), "01101");
  EXPECT_EQ(row(t, 2, 1), "01101");  // spine0 -> leaf1
  EXPECT_EQ(row(t, 2, 0), "01101");  // spine0 -> leaf0, which would go back up to a spine
  EXPECT_EQ(row(t, 1, 2), "01101");  // leaf1 -> spine0: spine0 reaches h2 only through leaf1
}

}  // namespace reachability_test
