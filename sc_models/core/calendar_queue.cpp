// The arrival calendar's queue: a timing wheel of sorted buckets.
#include "sc_models/core/calendar_queue.h"

#include <algorithm>

namespace fabricsim::core {

namespace {
// Comparators as function objects, not functions: std::sort, std::is_sorted and the heap algorithms are
// instantiated for the object's type and inline its comparison, where a function's address is called
// through at every step (1.3 million calls in a 30 us run of the 256-host permutation).
struct before_fn {
  bool operator()(const calendar_queue::entry& a, const calendar_queue::entry& b) const {
    if (a.at != b.at) return a.at < b.at;
    return a.key != b.key ? a.key < b.key : a.seq < b.seq;
  }
};
constexpr before_fn before{};
struct later_fn {
  bool operator()(const calendar_queue::entry& a, const calendar_queue::entry& b) const { return before(b, a); }
};
constexpr later_fn later{};

// A bucket's entries were pushed in time order but for ties at one time (in the previous hop's key order)
// and the spread of cable and serialization times, so few are out of place: an insertion sort from the first
// entry out of order costs the entries plus their displacements, where std::sort partitions every bucket
// of more than 16. Past a budget of moves (a bucket far from sorted) it hands over to std::sort. The order
// (time, key, push order) is total, so either gives the one sorted sequence.
void sort_bucket(std::vector<calendar_queue::entry>& items) {
  using iter = std::vector<calendar_queue::entry>::iterator;
  const iter first = items.begin(), last = items.end();
  iter from = std::is_sorted_until(first, last, before);
  size_t budget = 4 * items.size() + 16;
  for (iter it = from; it != last; ++it) {
    if (!before(*it, *(it - 1))) continue;
    const calendar_queue::entry v = *it;
    iter hole = it;
    do {
      *hole = *(hole - 1);
      --hole;
    } while (hole != first && before(v, *(hole - 1)) && --budget != 0);
    *hole = v;  // a permutation again, sorted up to `it` unless the budget ran out
    if (budget == 0) {
      std::sort(first, last, before);
      return;
    }
  }
}
}  // namespace

calendar_queue::calendar_queue() : m_wheel(wheel_size, nullptr), m_used(wheel_size / 64, 0) { m_late.reserve(64); }

void calendar_queue::place(const entry& e) {
  const uint64_t b = bucket_of(e.at);
  if (b < m_cursor) {  // the bucket being drained, or before it: joins the drain
    m_late.push_back(e);
    std::push_heap(m_late.begin(), m_late.end(), later);
  } else if (b - m_cursor < wheel_size - 1) {
    const uint64_t slot = b & wheel_mask;
    bucket* k = m_wheel[slot];
    if (k == nullptr) {
      if (m_free.empty()) {
        m_buckets.push_back(std::make_unique<bucket>());
        m_free.push_back(m_buckets.back().get());
      }
      k = m_free.back();
      m_free.pop_back();
      m_wheel[slot] = k;
      m_used[slot >> 6] |= uint64_t(1) << (slot & 63);
      k->first = e.at.value;
    }
    append(*k, e);
  } else {
    m_far.push_back(e);
    std::push_heap(m_far.begin(), m_far.end(), later);
  }
}

uint64_t calendar_queue::next_bucket() const {
  const uint64_t start = m_cursor & wheel_mask;
  uint64_t found = wheel_size;
  // The slots from the cursor's to the end of the bitmap, then from its beginning (the wheel wraps).
  for (uint64_t pass = 0; pass < 2 && found == wheel_size; ++pass) {
    const uint64_t from = pass == 0 ? start : 0, to = pass == 0 ? wheel_size : start;
    for (uint64_t w = from >> 6; w < ((to + 63) >> 6) && found == wheel_size; ++w) {
      uint64_t bits = m_used[w];
      if (w == (from >> 6)) bits &= ~uint64_t(0) << (from & 63);
      if (bits != 0) {
        const uint64_t slot = (w << 6) + uint64_t(__builtin_ctzll(bits));
        if (slot < to) found = slot;
      }
    }
  }
  const uint64_t on_wheel = found == wheel_size ? no_bucket : m_cursor + ((found - start) & wheel_mask);
  const uint64_t far = m_far.empty() ? no_bucket : bucket_of(m_far.front().at);
  return std::min(on_wheel, far);
}

picoseconds calendar_queue::next_at() const {
  // The bucket being drained and the entries that joined it come before everything on the wheel or beyond.
  uint64_t t = UINT64_MAX;
  if (m_open_pos < m_open_count) t = m_open_items[m_open_pos].at.value;
  if (!m_late.empty()) t = std::min(t, m_late.front().at.value);
  if (t != UINT64_MAX) return picoseconds(t);
  const uint64_t b = next_bucket();
  if (!m_far.empty() && bucket_of(m_far.front().at) == b) t = m_far.front().at.value;
  if (b - m_cursor < wheel_size - 1) t = std::min(t, m_wheel[b & wheel_mask]->first);
  return picoseconds(t);
}

bool calendar_queue::open_next(picoseconds t) {
  const uint64_t b = next_bucket();
  if (b == no_bucket || (b << bucket_bits) > t.value) return false;  // nothing in it can be due yet
  // Turn the wheel to b: what waited beyond its reach and now falls within it moves on (b's own entries
  // first, so that they are sorted with the rest of b), then b opens and one more bucket comes in reach.
  for (int step = 0; step < 2; ++step) {
    m_cursor = b + uint64_t(step);
    while (!m_far.empty() && bucket_of(m_far.front().at) - m_cursor < wheel_size - 1) {
      const entry e = m_far.front();
      std::pop_heap(m_far.begin(), m_far.end(), later);
      m_far.pop_back();
      place(e);
    }
    if (step == 1) break;
    const uint64_t slot = b & wheel_mask;
    bucket* const k = m_wheel[slot];
    std::vector<entry>& items = k->items;
    m_wheel[slot] = nullptr;
    m_used[slot >> 6] &= ~(uint64_t(1) << (slot & 63));
    // Pushed in seq order: a bucket holding one time and one key (or keys already in order) sorts in one pass.
    sort_bucket(items);
    m_open = k;
    m_open_pos = 0;
    m_open_items = items.data();
    m_open_count = items.size();
  }
  return true;
}

void calendar_queue::close_open() {
  m_open->items.clear();  // keeps its capacity for the next slot that takes it
  m_free.push_back(m_open);
  m_open = nullptr;
  m_open_items = nullptr;
  m_open_count = 0;
  m_open_pos = 0;
}

bool calendar_queue::pop_due_rest(picoseconds t, entry& out) {
  for (;;) {
    // The next of the bucket being drained and of the entries that joined it (pop_due's inline case
    // included, for a bucket opened in this call).
    const bool have_bucket = m_open_pos < m_open_count;
    const bool have_late = !m_late.empty();
    if (have_bucket || have_late) {
      const entry* b = have_bucket ? &m_open_items[m_open_pos] : nullptr;
      if (have_late && (b == nullptr || before(m_late.front(), *b))) {
        if (t < m_late.front().at) return false;
        out = m_late.front();
        std::pop_heap(m_late.begin(), m_late.end(), later);
        m_late.pop_back();
      } else {
        if (t < b->at) return false;
        out = *b;
        ++m_open_pos;
      }
      --m_size;
      return true;
    }
    if (m_open != nullptr) close_open();
    if (!open_next(t)) return false;
  }
}

}  // namespace fabricsim::core
