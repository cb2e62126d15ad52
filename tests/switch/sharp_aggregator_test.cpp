// SHARP building blocks (sc_models/switch/quantum/sharp_aggregator): the ALU's arithmetic on hand-picked
// values (bf16 rounding to nearest even, fp32, int32 wrap-around) and the aggregation tree over a two-level
// fat tree of Quantum switches (root, depth and children counted by hand); the tree from the wiring alone
// (what every process of a run cut across MPI ranks builds) on a hand-wired fabric, and against the tree read
// from built switches' links on several fabrics. The timing and the reductions in
// a running fabric are tested through the collective engine (tests/testbench/sharp_collective_test.cpp).
#include "sc_models/switch/quantum/sharp_aggregator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <sstream>

#include "sc_models/switch/quantum/quantum_switch.h"
#include "sc_models/topology/fabric.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace sharp_aggregator_test {

TEST(sharp_aggregator, bf16_rounds_to_nearest_even) {
  // bf16 keeps the top 16 bits of a float: 1.0f = 0x3f800000 -> 0x3f80; 3.0f = 0x40400000 -> 0x4040.
  EXPECT_EQ(sw::bf16_from_float(1.0f), 0x3f80);
  EXPECT_EQ(sw::float_from_bf16(0x4040), 3.0f);
  // bf16 has 7 fraction bits: the step at 1 is 2^-7. 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go
  // to the even one, 1 (0x3f80). 1 + 3 x 2^-9 is above halfway: up to 1 + 2^-7 (0x3f81). 1 + 2^-7 + 2^-8
  // is halfway between 0x3f81 (odd) and 0x3f82 (even): 0x3f82.
  EXPECT_EQ(sw::bf16_from_float(1.0f + 0.00390625f), 0x3f80);
  EXPECT_EQ(sw::bf16_from_float(1.0f + 3 * 0.001953125f), 0x3f81);
  EXPECT_EQ(sw::bf16_from_float(1.0f + 0.0078125f + 0.00390625f), 0x3f82);
}

TEST(sharp_aggregator, the_alu_adds_fp32_bf16_and_wraps_int32) {
  // fp32: 1.5 + 2.25 = 3.75 exactly; 1e8 + 1 = 1e8 (the step at 1e8 is 8).
  float fa[2] = {1.5f, 1e8f}, fb[2] = {2.25f, 1.0f};
  sw::sharp_reduce(sw::sharp_dtype::fp32, reinterpret_cast<uint8_t*>(fa), reinterpret_cast<const uint8_t*>(fb), 8);
  EXPECT_EQ(fa[0], 3.75f);
  EXPECT_EQ(fa[1], 1e8f);
  // bf16: 1 + 2^-8 rounds back to 1 (tie to even); 1 + 2^-7 is representable (0x3f81); 3 + 5 = 8 (0x4100).
  uint16_t ba[3] = {0x3f80, 0x3f80, 0x4040}, bb[3] = {sw::bf16_from_float(0.00390625f), sw::bf16_from_float(0.0078125f),
                                                      sw::bf16_from_float(5.0f)};
  sw::sharp_reduce(sw::sharp_dtype::bf16, reinterpret_cast<uint8_t*>(ba), reinterpret_cast<const uint8_t*>(bb), 6);
  EXPECT_EQ(ba[0], 0x3f80);
  EXPECT_EQ(ba[1], 0x3f81);
  EXPECT_EQ(ba[2], 0x4100);
  // int32: two's complement wrap, INT32_MAX + 1 = INT32_MIN; -7 + 3 = -4.
  int32_t ia[2] = {2147483647, -7}, ib[2] = {1, 3};
  sw::sharp_reduce(sw::sharp_dtype::int32, reinterpret_cast<uint8_t*>(ia), reinterpret_cast<const uint8_t*>(ib), 8);
  EXPECT_EQ(ia[0], int32_t(-2147483647 - 1));
  EXPECT_EQ(ia[1], -4);
}

// A fabric of Quantum switches wired as `t` (call it in a child process: SystemC elaborates once per process).
std::unique_ptr<topology::fabric> quantum_fabric(const topology::topology_params& t, core::sim_context& ctx,
                                                 const sw::quantum_params& qp) {
  const sw::switch_factory make = [&](const std::string& name, unsigned ports) {
    return std::make_unique<sw::quantum_switch>(name.c_str(), qp, ports, ctx);
  };
  return std::make_unique<topology::fabric>(t, topology::cable_params{}, make, nic::supernic_params{},
                                            std::map<std::string, nic::supernic_params>{},
                                            std::vector<uint64_t>(t.host_count(), 0), ctx);
}

// Builds a leaf_spine of Quantum switches and the tree for the hosts `members`; describes it.
std::string tree_of(uint64_t leaves, uint64_t spines, uint64_t hosts_per_leaf, const std::vector<size_t>& members) {
  const child_result c = run_in_child([&] {
    core::sim_context ctx;
    topology::topology_params t;
    t.kind = "leaf_spine";
    t.leaves = leaves;
    t.spines = spines;
    t.hosts_per_leaf = hosts_per_leaf;
    const auto owned = quantum_fabric(t, ctx, sw::quantum_params{});
    topology::fabric& fab = *owned;
    std::vector<sw::quantum_switch*> sws;
    for (auto& s : fab.switches()) sws.push_back(dynamic_cast<sw::quantum_switch*>(s.get()));
    std::vector<std::pair<size_t, unsigned>> m;
    m.reserve(members.size());
    for (size_t h : members) m.push_back({fab.hosts()[h].leaf, fab.host_port(h)});
    const sw::sharp_tree tree = sw::build_sharp_tree(sws, m);
    std::ostringstream out;
    for (const auto& n : tree.nodes) {
      out << n.sw->name() << " d" << n.depth << " c" << n.child_ports.size();
      // A child port leads to a member host or to a switch of the tree whose parent port faces back.
      for (unsigned p : n.child_ports) {
        core::link& l = n.sw->port(p).out();
        auto* q = dynamic_cast<sw::quantum_switch*>(l.sink());
        if (q == nullptr) continue;
        bool back = false;
        for (const auto& o : tree.nodes) back |= o.sw == q && o.parent_port == int(l.sink_port());
        if (!back) out << " BAD";
      }
      out << ";";
    }
    return out.str();
  });
  return c.ok ? c.output : "child failed: " + c.output;
}

TEST(sharp_aggregator, the_tree_is_rooted_at_a_spine_and_covers_the_members_leaves) {
  // 4 leaves x 2 spines x 2 hosts, every host a member: every spine is one hop from every leaf, so the
  // root is the spine created last (spine1); the four leaves hang off it with their two hosts each.
  EXPECT_EQ(tree_of(4, 2, 2, {0, 1, 2, 3, 4, 5, 6, 7}),
            "spine1 d0 c4;leaf0 d1 c2;leaf1 d1 c2;leaf2 d1 c2;leaf3 d1 c2;");
  // Members on leaves 0 and 2 only (h0, h1, h4): the root still needs to be a spine; leaves 1 and 3 stay out.
  EXPECT_EQ(tree_of(4, 2, 2, {0, 1, 4}), "spine1 d0 c2;leaf0 d1 c2;leaf2 d1 c1;");
  // Every member on leaf 1: the leaf alone is the tree.
  EXPECT_EQ(tree_of(4, 2, 2, {2, 3}), "leaf1 d0 c2;");
}

// The tree from the wiring alone (no switch object): 2 leaves (switches 0, 1) and 2 spines (2, 3), leaf port p
// + 2 to spine p, spine port l to leaf l; members h0, h1 on leaf0 ports 0, 1 and h2 on leaf1 port 0. Both
// spines reach both leaves in one hop (a leaf is two hops from the other leaf), so the root is the last spine
// created (3), or with root_choice 1 the one before (2); each leaf's parent port is its cable to that spine.
TEST(sharp_aggregator, the_tree_from_the_wiring_alone_by_hand) {
  const std::vector<sw::sharp_cable> cables{{0, 2, 2, 0}, {0, 3, 3, 0}, {1, 2, 2, 1}, {1, 3, 3, 1}};
  const std::vector<std::pair<size_t, unsigned>> members{{0, 0}, {0, 1}, {1, 0}};
  for (size_t choice : {0u, 1u}) {
    const sw::sharp_tree t = sw::build_sharp_tree(4, cables, members, choice);
    ASSERT_EQ(t.nodes.size(), 3u);
    const unsigned spine_port = choice == 0 ? 3 : 2;  // leaf port towards the root spine
    EXPECT_EQ(t.nodes[0].switch_index, choice == 0 ? 3u : 2u);
    EXPECT_EQ(t.nodes[0].parent, -1);
    EXPECT_EQ(t.nodes[0].parent_port, -1);
    EXPECT_EQ(t.nodes[0].child_ports, (std::vector<unsigned>{0, 1}));  // spine ports to leaf0, leaf1
    EXPECT_EQ(t.nodes[1].switch_index, 0u);
    EXPECT_EQ(t.nodes[1].parent, 0);
    EXPECT_EQ(t.nodes[1].parent_port, int(spine_port));
    EXPECT_EQ(t.nodes[1].depth, 1u);
    EXPECT_EQ(t.nodes[1].child_ports, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(t.nodes[2].switch_index, 1u);
    EXPECT_EQ(t.nodes[2].child_ports, (std::vector<unsigned>{0}));
    for (const auto& n : t.nodes) EXPECT_EQ(n.sw, nullptr);
  }
  // No cable between the members' switches: no tree spans them.
  EXPECT_THROW(sw::build_sharp_tree(4, {{0, 2, 2, 0}}, {{0, 0}, {1, 0}}), core::config_error);
}

// The same tree from the layout's cables as from the built switches' links (a second reading of the same
// wiring): node for node, on a leaf-spine and a three-tier fabric, for every host and for scattered members,
// with the roots spread (root_choice).
std::string layout_tree_differs(const std::string& kind, const std::vector<size_t>& members, size_t choice) {
  const child_result c = run_in_child([&] {
    core::sim_context ctx;
    topology::topology_params t;
    t.kind = kind;
    t.leaves = 4;
    t.spines = 4;
    t.hosts_per_leaf = 2;
    t.pods = 2;
    t.cores = 4;
    const auto owned = quantum_fabric(t, ctx, sw::quantum_params{});
    topology::fabric& fab = *owned;
    std::vector<sw::quantum_switch*> sws;
    for (auto& s : fab.switches()) sws.push_back(dynamic_cast<sw::quantum_switch*>(s.get()));
    const topology::fabric_layout& lay = fab.layout();
    std::vector<sw::sharp_cable> cables;
    for (const auto& k : lay.cables)
      if (k.a >= lay.hosts && k.b >= lay.hosts)
        cables.push_back({k.a - lay.hosts, k.a_port, k.b - lay.hosts, k.b_port});
    std::vector<std::pair<size_t, unsigned>> m;
    m.reserve(members.size());
    for (size_t h : members) m.push_back({fab.hosts()[h].leaf, fab.host_port(h)});
    const sw::sharp_tree a = sw::build_sharp_tree(sws, m, choice);
    const sw::sharp_tree b = sw::build_sharp_tree(lay.switches.size(), cables, m, choice);
    std::ostringstream out;
    if (a.nodes.size() != b.nodes.size()) out << "nodes " << a.nodes.size() << " vs " << b.nodes.size();
    for (size_t i = 0; i < std::min(a.nodes.size(), b.nodes.size()); ++i) {
      const auto &x = a.nodes[i], &y = b.nodes[i];
      if (x.sw != sws[x.switch_index] || x.switch_index != y.switch_index || x.parent != y.parent ||
          x.parent_port != y.parent_port || x.child_ports != y.child_ports || x.depth != y.depth)
        out << "node " << i << " differs;";
    }
    if (a.nodes.size() < 2) out << "a trivial tree";
    return out.str();
  });
  return c.ok ? c.output : "child failed: " + c.output;
}

TEST(sharp_aggregator, the_tree_from_the_layout_is_the_tree_from_the_switches) {
  for (const std::string kind : {"leaf_spine", "three_tier"})
    for (size_t choice : {0u, 1u, 2u}) {
      EXPECT_EQ(layout_tree_differs(kind, {0, 1, 2, 3, 4, 5, 6, 7}, choice), "") << kind << " " << choice;
      EXPECT_EQ(layout_tree_differs(kind, {0, 3, 6}, choice), "") << kind << " " << choice;
    }
}

}  // namespace sharp_aggregator_test
}  // namespace fabricsim::test
