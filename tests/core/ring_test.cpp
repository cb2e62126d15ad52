// core::ring (sc_models/core/ring.h): a FIFO whose capacity doubles when full, indexed by a mask. Checked
// against std::deque, the standard library's FIFO, over pushes and pops that wrap the ring and make it grow
// with its head anywhere, and its copies and moves.
#include "sc_models/core/ring.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <string>

using fabricsim::core::ring;

namespace {
struct slot {  // 24 bytes, as a switch port's queue entry: the size whose indexing once needed a division
  uint64_t a = 0, b = 0, c = 0;
  bool operator==(const slot& o) const { return a == o.a && b == o.b && c == o.c; }
};

template <class T>
void expect_same(const ring<T>& r, const std::deque<T>& d, const std::string& where) {
  ASSERT_EQ(r.size(), d.size()) << where;
  ASSERT_EQ(r.empty(), d.empty()) << where;
  for (size_t i = 0; i < d.size(); ++i) ASSERT_TRUE(r[i] == d[i]) << where << ", entry " << i;
  if (!d.empty()) {
    ASSERT_TRUE(r.front() == d.front()) << where;
  }
}
}  // namespace

TEST(ring, capacity_is_the_least_power_of_two_at_or_above_the_one_asked) {
  EXPECT_EQ(ring<int>(1).capacity(), 1u);
  EXPECT_EQ(ring<int>(3).capacity(), 4u);
  EXPECT_EQ(ring<int>(4).capacity(), 4u);
  EXPECT_EQ(ring<int>(5).capacity(), 8u);
  EXPECT_EQ(ring<int>().capacity(), 16u);
}

TEST(ring, keeps_fifo_order_through_wraps_and_growth_as_a_deque_does) {
  std::mt19937_64 rng(7);
  ring<slot> r(2);
  std::deque<slot> d;
  uint64_t n = 0;
  size_t grew = 0;
  for (int step = 0; step < 20000; ++step) {
    // Bursts of pushes and pops, so that the ring fills, wraps with its head at every slot, and grows.
    const bool push = d.empty() || rng() % 100 < (step % 2000 < 1000 ? 60u : 40u);
    if (push) {
      const size_t before = r.capacity();
      const slot s{n, n * 3 + 1, ~n};
      ++n;
      r.push_back(s);
      d.push_back(s);
      if (r.capacity() != before) {
        ++grew;
        EXPECT_EQ(r.capacity(), 2 * before);  // doubled, and only when it was full
        EXPECT_EQ(r.size(), before + 1);
      }
    } else {
      r.pop_front();
      d.pop_front();
    }
    expect_same(r, d, "step " + std::to_string(step));
    if (!d.empty()) {
      ASSERT_TRUE(r.back() == d.back()) << "step " << step;
    }
  }
  EXPECT_GE(grew, 3u);  // the run did make it grow, from 2 slots
  EXPECT_GT(n, 9000u);
}

TEST(ring, a_copy_holds_the_same_entries_and_is_independent) {
  ring<int> r(4);
  for (int i = 0; i < 3; ++i) r.push_back(i);
  r.pop_front();
  r.pop_front();
  for (int i = 3; i < 6; ++i) r.push_back(i);  // wrapped: 2 3 4 5, head at slot 2
  ring<int> c(r);
  ASSERT_EQ(c.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(c[i], int(i) + 2);
  c.pop_front();
  c.push_back(6);
  EXPECT_EQ(r.front(), 2);  // the original is untouched
  EXPECT_EQ(r.size(), 4u);
  ring<int> moved(std::move(c));
  EXPECT_EQ(moved.front(), 3);
  EXPECT_EQ(moved.back(), 6);
  ring<int> assigned(1);
  assigned = r;
  EXPECT_EQ(assigned.size(), 4u);
  EXPECT_EQ(assigned.back(), 5);
  assigned.clear();
  EXPECT_TRUE(assigned.empty());
  EXPECT_EQ(r.size(), 4u);
}
