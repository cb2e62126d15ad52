// The arrival calendar's queue: entries ordered by (time, key, scheduling order), kept in a timing wheel of
// buckets 1,024 ps wide instead of one binary heap over every entry. A bucket is filled by appending and sorted
// once when the wheel reaches it, so a push costs an append and a pop the next entry of a sorted array; the
// buckets in use are found through a bitmap. A bucket's entries live in an array taken from a pool when the
// bucket gets its first entry and returned when it has drained, the most recently returned first (its lines
// are still in the cache). Entries due past the wheel's reach (about 1 us ahead: long cables, pause timers)
// wait in a heap and move onto the wheel as it turns. Plain C++ (no SystemC): the calendar wraps it, the unit
// test checks it against a plain heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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

  // Adds an entry due at `at`. An entry at or before the bucket being drained joins the drain in (time, key,
  // push order). Inline for the common case, a bucket on the wheel that already holds entries: one append.
  void push(picoseconds at, uint64_t key, void* client, const void* head, opaque_fn call = nullptr) {
    ++m_size;
    const uint64_t b = bucket_of(at);
    if (b >= m_cursor && b - m_cursor < wheel_size - 1) {
      if (bucket* k = m_wheel[b & wheel_mask]) {
        append(*k, entry{at, key, m_seq++, client, head, call});
        return;
      }
    }
    place(entry{at, key, m_seq++, client, head, call});
  }

  // The least entry in (time, key, push order) with time <= t; false when there is none. The common case
  // inline (the bucket being drained has an entry left and nothing joined it), the rest in pop_due_rest.
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
  // Entries that joined the drain are not counted.
  const entry* upcoming(size_t i) const {
    return m_open_pos + i < m_open_count ? &m_open_items[m_open_pos + i] : nullptr;
  }

 private:
  static constexpr unsigned bucket_bits = 10;  // a bucket spans 1,024 ps
  static constexpr unsigned wheel_bits = 10;   // 1,024 buckets
  static constexpr uint64_t wheel_size = uint64_t(1) << wheel_bits;
  static constexpr uint64_t wheel_mask = wheel_size - 1;
  static constexpr uint64_t no_bucket = ~uint64_t(0);
  static uint64_t bucket_of(picoseconds at) { return at.value >> bucket_bits; }

  bool pop_due_rest(picoseconds t, entry& out);
  // The first bucket (absolute number) at or after m_cursor holding entries, on the wheel or in m_far.
  uint64_t next_bucket() const;
  bool open_next(picoseconds t);
  void close_open();
  void place(const entry& e);  // onto the wheel, into m_late or into m_far, by its bucket

  // Bucket b (absolute: time >> bucket_bits) lives in slot b & wheel_mask while m_cursor <= b <
  // m_cursor + wheel_size - 1; later ones wait in m_far, earlier ones (the bucket being drained and any before
  // it) in m_late. The bucket being drained has left its slot: it is m_open.
  struct bucket {
    std::vector<entry> items;
    uint64_t first = 0;  // its earliest time (next_at reads this, not the array)
  };
  static void append(bucket& k, const entry& e) {  // onto a bucket of the wheel (first set when it was taken)
    k.items.push_back(e);
    if (e.at.value < k.first) k.first = e.at.value;
  }
  std::vector<bucket*> m_wheel;                    // per slot: its bucket, or null
  std::vector<uint64_t> m_used;                    // bit per slot: holds entries
  std::vector<std::unique_ptr<bucket>> m_buckets;  // every bucket made, each taken by a slot or free
  std::vector<bucket*> m_free;                     // empty buckets, the last returned at the back
  uint64_t m_cursor = 0;                           // the first bucket not yet opened
  std::vector<entry> m_far;                        // a heap on (at, key, seq)
  std::vector<entry> m_late;                       // a heap on (at, key, seq)
  // The bucket being drained (null: none is open), its sorted entries and the next of them.
  bucket* m_open = nullptr;
  size_t m_open_pos = 0;
  const entry* m_open_items = nullptr;
  size_t m_open_count = 0;
  uint64_t m_seq = 0;
  size_t m_size = 0;
};

}  // namespace fabricsim::core
