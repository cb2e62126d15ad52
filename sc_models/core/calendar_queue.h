// The arrival calendar's queue: entries ordered by (time, key, scheduling order), kept in one bucket per
// distinct time instead of one binary heap over every entry. A fabric's arrivals come in bursts at the same
// picosecond (links of one rate carrying frames of one size), so a bucket is filled by appending and sorted
// once when its time comes; only distinct times go through a heap. Plain C++ (no SystemC): the calendar
// wraps it, the unit test checks it against a plain heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sc_models/core/units.h"

namespace fabricsim::core {

class calendar_queue {
 public:
  // A function the queue's owner keeps with an entry (cast back to its own type: a round trip through
  // another function pointer type is well defined).
  using opaque_fn = void (*)();
  struct entry {
    picoseconds at;
    uint64_t key;  // ties at one time are served in key order, then in the order they were pushed
    uint64_t seq;
    void* client;
    const void* head;  // memory the client will touch when due (prefetched), or null
    opaque_fn call;    // the owner's (the arrival calendar's: the client's due_fn), carried unread
  };

  calendar_queue();

  // Adds an entry due at `at`. While a time is being drained (pop_due has returned one of its entries and
  // not yet reported it empty), an entry at or before that time joins it in (time, key, push order).
  void push(picoseconds at, uint64_t key, void* client, const void* head, opaque_fn call = nullptr);

  // The least entry in (time, key, push order) with time <= t; false when there is none. The common case
  // inline (the time being drained has an entry left and nothing joined it), the rest in pop_due_rest.
  bool pop_due(picoseconds t, entry& out) {
    if (m_open_pos < m_open_count && m_late.empty()) {
      const entry& b = m_open_items[m_open_pos];
      if (t < b.at) return false;
      out = b;
      ++m_open_pos;
      --m_size;
      return true;
    }
    return pop_due_rest(t, out);
  }

  bool empty() const { return m_size == 0; }
  size_t size() const { return m_size; }
  // The earliest time pending; only when !empty().
  picoseconds next_at() const;

  // The i-th entry after the one last popped from the bucket being drained (for prefetching), or null.
  // Entries pushed into the time being drained are not counted.
  const entry* upcoming(size_t i) const {
    return m_open_pos + i < m_open_count ? &m_open_items[m_open_pos + i] : nullptr;
  }

 private:
  static constexpr uint32_t none = ~0u;
  struct slot {
    picoseconds at;
    std::vector<entry> items;  // in push order until opened, then sorted by (key, seq)
  };
  struct timed {  // a distinct pending time and its slot, in a min-heap on `at`
    uint64_t at;
    uint32_t slot;
  };
  struct cell {  // the time -> slot hash (open addressing, linear probing)
    uint64_t at;
    uint32_t slot;  // none: empty
  };

  bool pop_due_rest(picoseconds t, entry& out);
  uint32_t find_or_add_slot(picoseconds at);
  void hash_insert(uint64_t at, uint32_t s);
  void hash_erase(uint64_t at);
  size_t home(uint64_t at) const { return size_t((at * 0x9E3779B97F4A7C15ull) >> m_shift); }
  void grow();
  bool open_next(picoseconds t);
  void close_open();

  std::vector<slot> m_slots;
  std::vector<uint32_t> m_free_slots;
  std::vector<timed> m_times;  // heap
  std::vector<cell> m_hash;
  unsigned m_shift;        // 64 - log2(m_hash.size())
  size_t m_hash_used = 0;  // occupied cells
  // The bucket being drained (none: no time is open), the next entry of it, and the entries pushed at or
  // before its time while it drains (a heap on (at, key, seq)).
  uint32_t m_open = none;
  size_t m_open_pos = 0;
  // The open bucket's entries and their count (0 while none is open): its vector is not appended to while it
  // drains, and keeps its buffer when m_slots grows.
  const entry* m_open_items = nullptr;
  size_t m_open_count = 0;
  picoseconds m_open_at{};
  std::vector<entry> m_late;
  uint64_t m_seq = 0;
  size_t m_size = 0;
  // One-entry memo of the last slot pushed to: bursts push many entries at one time in a row.
  uint64_t m_last_at = 0;
  uint32_t m_last_slot = none;
};

}  // namespace fabricsim::core
