// Shared switch parts (sc_models/switch/equal_cost_group.h, cut_through.h): port sets stored once, the
// flow-keyed live-port choice, the least-loaded search and cut-through readiness, against hand-worked cases.
#include "sc_models/switch/equal_cost_group.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "sc_models/switch/cut_through.h"

using namespace fabricsim;
using sw::equal_cost_group;

TEST(equal_cost_groups, a_port_set_is_stored_once_and_order_makes_it_another) {
  sw::equal_cost_groups t;
  const sw::equal_cost_ref a = t.intern({4, 5, 6});
  const sw::equal_cost_ref b = t.intern({7});
  const sw::equal_cost_ref a2 = t.intern({4, 5, 6});
  const sw::equal_cost_ref c = t.intern({6, 5, 4});  // another hash / D-mod-K order: another group
  EXPECT_EQ(a.first, a2.first);
  EXPECT_EQ(a.count, 3u);
  EXPECT_EQ(b.first, 3u);  // right after the first set
  EXPECT_EQ(c.first, 4u);
  EXPECT_EQ(t.groups(), 3u);
  EXPECT_EQ(t.stored_ports(), 7u);  // 3 + 1 + 3, the repeat adds nothing
  const equal_cost_group g = t.group(c);
  EXPECT_EQ(std::vector<unsigned>(g.begin(), g.end()), (std::vector<unsigned>{6, 5, 4}));
}

TEST(equal_cost_group, the_live_choice_is_the_key_mod_live_count_th_live_port) {
  const unsigned ports[] = {10, 11, 12, 13};
  const equal_cost_group g{ports, 4};
  const auto all_but_11 = [](unsigned p) { return p != 11; };  // live: 10, 12, 13
  EXPECT_EQ(g.nth_live(0, all_but_11), 10u);
  EXPECT_EQ(g.nth_live(4, all_but_11), 12u);  // 4 mod 3 = 1: the second live port
  EXPECT_EQ(g.nth_live(5, all_but_11), 13u);  // 5 mod 3 = 2
  EXPECT_EQ(g.nth_live(6, all_but_11), 10u);
  EXPECT_EQ(g.nth_live(1, [](unsigned) { return true; }), 11u);  // nothing down: key mod 4
  EXPECT_EQ(g.nth_live(7, [](unsigned) { return false; }), equal_cost_group::none);
}

TEST(equal_cost_group, the_least_loaded_search_takes_the_first_lowest_from_its_start) {
  const unsigned ports[] = {10, 11, 12, 13};
  const equal_cost_group g{ports, 4};
  // Costs 5, 3, 3 and an ineligible 13 (say, paused) with the lowest cost of all.
  const auto cost = [](unsigned p, int64_t& c) {
    const int64_t costs[] = {5, 3, 3, 0};
    c = costs[p - 10];
    return p != 13;
  };
  auto from1 = g.least_loaded(1, cost);  // visits 11, 12, 13, 10: 11 first of the tie
  EXPECT_EQ(from1.port, 11u);
  EXPECT_EQ(from1.cost, 3);
  EXPECT_EQ(from1.eligible, 3u);
  EXPECT_EQ(g.least_loaded(2, cost).port, 12u);  // visits 12 first
  EXPECT_EQ(g.least_loaded(3, cost).port, 11u);  // 13 (skipped), 10, 11, 12
  const auto none = g.least_loaded(0, [](unsigned, int64_t&) { return false; });
  EXPECT_EQ(none.port, equal_cost_group::none);
  EXPECT_EQ(none.eligible, 0u);
}

TEST(equal_cost_group, a_start_near_2_to_the_32_wraps_before_the_modulo) {
  // The index is (start + k) mod 2^32 mod count: from start 2^32 - 1 over 3 ports that is
  // 4294967295 mod 3 = 0, then 0 mod 3 = 0, then 1 -- port index 2 is not visited (the Spectrum search's
  // arithmetic, kept so that reports stay identical; it happens for 2 of 2^32 starts with 3 ports).
  const unsigned ports[] = {20, 21, 22};
  const equal_cost_group g{ports, 3};
  std::multiset<unsigned> seen;
  g.least_loaded(0xffffffffu, [&](unsigned p, int64_t& c) {
    seen.insert(p);
    c = p == 22 ? 0 : 1;
    return true;
  });
  EXPECT_EQ(seen, (std::multiset<unsigned>{20, 20, 21}));
}

TEST(cut_through, the_tail_beyond_the_headers_is_saved_when_the_egress_is_no_faster) {
  using core::bits_per_second;
  using core::bytes;
  const bits_per_second g400 = bits_per_second::from_gbps(400), g800 = bits_per_second::from_gbps(800);
  // 4138 wire bytes, 128 parsed: (4138 - 128) x 8 = 32,080 bits at 400 Gb/s = 80.2 ns = 80,200 ps.
  EXPECT_EQ(sw::cut_through_advance(bytes(4138), bytes(128), g400, g400).value, 80'200u);
  // Slower egress: still; the ingress rate sets the tail's arrival.
  EXPECT_EQ(sw::cut_through_advance(bytes(4138), bytes(128), g800, g400).value, 40'100u);
  // A faster egress would run dry mid-frame: store and forward.
  EXPECT_EQ(sw::cut_through_advance(bytes(4138), bytes(128), g400, g800).value, 0u);
  // A frame no longer than the header has no tail to save.
  EXPECT_EQ(sw::cut_through_advance(bytes(128), bytes(128), g400, g400).value, 0u);
  // Rounded up to the picosecond like every serialisation: 1 byte at 3 Gb/s = 2.67 ns -> 2667 ps.
  EXPECT_EQ(sw::cut_through_advance(bytes(21), bytes(20), bits_per_second(3'000'000'000), g400).value, 0u);
  EXPECT_EQ(
      sw::cut_through_advance(bytes(21), bytes(20), bits_per_second(3'000'000'000), bits_per_second(3'000'000'000))
          .value,
      2667u);
}
