// core::calendar_queue (the arrival calendar's queue): the order it serves entries in, against orders worked
// by hand and against a second implementation (one binary heap over every entry, as the calendar was before)
// on random schedules that push while they drain.
#include "sc_models/core/calendar_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

using fabricsim::core::calendar_queue;
using fabricsim::core::picoseconds;

namespace {

// What a client is in these tests: the n-th byte of one array, so that an entry's client names a number.
char clients[1 << 18];
void* id(uintptr_t n) { return &clients[n]; }
uintptr_t id_of(const calendar_queue::entry& e) { return uintptr_t(static_cast<char*>(e.client) - clients); }

// The reference: a min-heap on (time, key, push number).
class reference_queue {
 public:
  void push(uint64_t at, uint64_t key, uintptr_t client) { m_heap.push({at, key, m_seq++, client}); }
  bool pop_due(uint64_t t, uintptr_t& client) {
    if (m_heap.empty() || std::get<0>(m_heap.top()) > t) return false;
    client = std::get<3>(m_heap.top());
    m_heap.pop();
    return true;
  }
  bool empty() const { return m_heap.empty(); }
  uint64_t next_at() const { return std::get<0>(m_heap.top()); }
  size_t size() const { return m_heap.size(); }

 private:
  using item = std::tuple<uint64_t, uint64_t, uint64_t, uintptr_t>;
  std::priority_queue<item, std::vector<item>, std::greater<item>> m_heap;
  uint64_t m_seq = 0;
};

std::vector<uintptr_t> drain(calendar_queue& q, uint64_t t) {
  std::vector<uintptr_t> order;
  calendar_queue::entry e;
  while (q.pop_due(picoseconds(t), e)) order.push_back(id_of(e));
  return order;
}

}  // namespace

TEST(calendar_queue, serves_by_time_then_key_then_push_order) {
  calendar_queue q;
  q.push(picoseconds(5), 2, id(1), nullptr);
  q.push(picoseconds(5), 1, id(2), nullptr);
  q.push(picoseconds(3), 9, id(3), nullptr);
  q.push(picoseconds(5), 1, id(4), nullptr);
  q.push(picoseconds(7), 0, id(5), nullptr);
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(q.next_at().value, 3u);
  EXPECT_EQ(drain(q, 2), std::vector<uintptr_t>{});  // nothing is due before 3
  // By 5: the entry at 3, then the two of key 1 in push order, then key 2; the one at 7 waits.
  EXPECT_EQ(drain(q, 5), (std::vector<uintptr_t>{3, 2, 4, 1}));
  EXPECT_EQ(q.next_at().value, 7u);
  EXPECT_EQ(drain(q, 100), std::vector<uintptr_t>{5});
  EXPECT_TRUE(q.empty());
}

TEST(calendar_queue, an_entry_pushed_at_the_time_being_drained_joins_it_in_key_order) {
  calendar_queue q;
  q.push(picoseconds(10), 3, id(1), nullptr);
  q.push(picoseconds(10), 5, id(2), nullptr);
  q.push(picoseconds(10), 7, id(3), nullptr);
  calendar_queue::entry e;
  ASSERT_TRUE(q.pop_due(picoseconds(10), e));
  EXPECT_EQ(id_of(e), 1u);
  // While 10 drains: key 0 comes before the keys 5 and 7 left; key 6 between them; key 5 after the 5 pushed
  // first; a later time waits for its turn.
  q.push(picoseconds(10), 6, id(4), nullptr);
  q.push(picoseconds(10), 0, id(5), nullptr);
  q.push(picoseconds(10), 5, id(6), nullptr);
  q.push(picoseconds(11), 0, id(7), nullptr);
  EXPECT_EQ(q.next_at().value, 10u);
  EXPECT_EQ(drain(q, 10), (std::vector<uintptr_t>{5, 2, 6, 4, 3}));
  // Drained: a push at 10 now starts a new bucket of its own, still before 11.
  q.push(picoseconds(10), 9, id(8), nullptr);
  EXPECT_EQ(drain(q, 11), (std::vector<uintptr_t>{8, 7}));
  EXPECT_TRUE(q.empty());
}

TEST(calendar_queue, upcoming_names_the_next_entries_of_the_bucket_being_drained) {
  calendar_queue q;
  int a = 0, b = 0;
  q.push(picoseconds(4), 2, id(1), &a);
  q.push(picoseconds(4), 1, id(2), &b);
  q.push(picoseconds(4), 3, id(3), nullptr);
  EXPECT_EQ(q.upcoming(0), nullptr);  // nothing is open yet
  calendar_queue::entry e;
  ASSERT_TRUE(q.pop_due(picoseconds(4), e));
  EXPECT_EQ(e.head, &b);
  ASSERT_NE(q.upcoming(0), nullptr);
  EXPECT_EQ(q.upcoming(0)->head, &a);
  EXPECT_EQ(id_of(*q.upcoming(1)), 3u);
  EXPECT_EQ(q.upcoming(2), nullptr);
}

// An entry pushed while its time lay beyond the wheel's reach and one pushed onto the wheel later for the same
// time are served in key order, not in the order they were pushed.
TEST(calendar_queue, an_entry_from_beyond_the_wheel_meets_a_later_push_at_its_time_in_key_order) {
  calendar_queue q;
  q.push(picoseconds(3'000'000), 1, id(1), nullptr);  // 3 us ahead: beyond the wheel
  q.push(picoseconds(2'500'000), 0, id(2), nullptr);  // beyond it too
  EXPECT_EQ(q.next_at().value, 2'500'000u);
  EXPECT_EQ(drain(q, 2'499'999), std::vector<uintptr_t>{});
  EXPECT_EQ(drain(q, 2'500'000), std::vector<uintptr_t>{2});  // the wheel turned: 3 us is within reach
  q.push(picoseconds(3'000'000), 0, id(3), nullptr);
  EXPECT_EQ(q.next_at().value, 3'000'000u);
  EXPECT_EQ(drain(q, 3'000'000), (std::vector<uintptr_t>{3, 1}));
  EXPECT_TRUE(q.empty());
}

// A bucket's entries are sorted when the wheel reaches it: by insertion when few are out of place, by a full
// sort past a budget of moves. One bucket of each shape (1,024 ps wide: times 0-1023, then 2048-3071), against
// the reference: a few entries displaced among ascending ones, and every entry in descending time order (about
// n^2/2 moves by insertion, far past the budget).
TEST(calendar_queue, sorts_a_nearly_sorted_bucket_and_a_reversed_one_into_the_reference_order) {
  calendar_queue q;
  reference_queue ref;
  uintptr_t next_id = 1;
  auto push = [&](uint64_t at, uint64_t key) {
    q.push(picoseconds(at), key, id(next_id), nullptr);
    ref.push(at, key, next_id);
    ++next_id;
  };
  for (uint64_t i = 0; i < 300; ++i) push(i * 3 + (i % 50 == 7 ? 0 : 100), i % 3);  // six go back 100 ps
  for (uint64_t i = 0; i < 300; ++i) push(2048 + 1000 - i * 3, (i * 7) % 4);
  for (uint64_t i = 0; i < 40; ++i) push(2048 + 500, 3 - i % 4);  // ties at one time, keys descending
  size_t served = 0;
  while (!ref.empty()) {
    const uint64_t t = ref.next_at();
    ASSERT_EQ(q.next_at().value, t);
    uintptr_t want = 0;
    ASSERT_TRUE(ref.pop_due(t, want));
    calendar_queue::entry e;
    ASSERT_TRUE(q.pop_due(picoseconds(t), e));
    ASSERT_EQ(id_of(e), want) << "after " << served << " served";
    ++served;
  }
  EXPECT_EQ(served, 640u);
  EXPECT_TRUE(q.empty());
}

// A random schedule like a fabric's: a clock that jumps to the next pending time, bursts of entries at
// shared times with few keys (many ties), pushes during each drain at the time being drained, at or before
// it, and later, over a span of times wider than the wheel's reach (about 1 us: entries wait beyond it and
// move on as it turns) and long enough to reuse its slots and bucket arrays many times. The order of every entry served
// must be the reference's.
class calendar_queue_random : public ::testing::TestWithParam<uint64_t> {};

TEST_P(calendar_queue_random, serves_the_same_order_as_one_heap_over_every_entry) {
  std::mt19937_64 rng(GetParam());
  calendar_queue q;
  reference_queue ref;
  uintptr_t next_id = 1;
  uint64_t t = 0;
  auto push = [&](uint64_t at) {
    ASSERT_LT(next_id, sizeof clients);
    const uint64_t key = rng() % 6;  // few keys: ties at one time are common
    q.push(picoseconds(at), key, id(next_id), nullptr);
    ref.push(at, key, next_id);
    ++next_id;
  };
  // Times drawn from a few offsets of `t` (bursts) or anywhere in a wide window (distinct times).
  auto later_time = [&]() -> uint64_t {
    const uint64_t r = rng() % 10;
    if (r < 6) return t + 1 + (rng() % 4) * 1000;
    return t + 1 + rng() % 5'000'000;
  };
  for (int i = 0; i < 2000; ++i) push(later_time());
  size_t served = 0, at_now = 0;
  while (!ref.empty()) {
    ASSERT_FALSE(q.empty());
    ASSERT_EQ(q.size(), ref.size());
    ASSERT_EQ(q.next_at().value, ref.next_at());
    t = ref.next_at();
    for (;;) {
      uintptr_t want = 0;
      const bool ref_has = ref.pop_due(t, want);
      calendar_queue::entry e;
      const bool has = q.pop_due(picoseconds(t), e);
      ASSERT_EQ(has, ref_has) << "at " << t << " after " << served << " served";
      if (!has) break;
      ASSERT_EQ(id_of(e), want) << "at " << t << " after " << served << " served";
      ++served;
      // While draining: sometimes push at this very time or before it (served in this drain), mostly later.
      const uint64_t r = rng() % 100;
      if (r < 8) {
        push(t - (t > 0 && r < 2 ? 1 : 0));
        ++at_now;
      }
      if (next_id < 60000 && r < 70) push(later_time());
      if (next_id < 60000 && r < 20) push(later_time());
    }
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(served, next_id - 1);
  EXPECT_GT(at_now, 1000u);  // the merge of entries pushed into a draining time was exercised
}

INSTANTIATE_TEST_SUITE_P(seeds, calendar_queue_random, ::testing::Values(1u, 2u, 3u, 42u, 1234567u));
