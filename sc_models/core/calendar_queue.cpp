// The arrival calendar's queue: one bucket per distinct time.
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
struct later_time_fn {
  template <class T>
  bool operator()(const T& a, const T& b) const {
    return a.at > b.at;
  }
};
constexpr later_time_fn later_time{};
constexpr unsigned initial_hash_bits = 10;
}  // namespace

calendar_queue::calendar_queue()
    : m_hash(size_t(1) << initial_hash_bits, cell{0, none}), m_shift(64 - initial_hash_bits) {
  m_times.reserve(256);
  m_late.reserve(64);
}

void calendar_queue::push(picoseconds at, uint64_t key, void* client, const void* head, opaque_fn call) {
  const entry e{at, key, m_seq++, client, head, call};
  ++m_size;
  if (m_open != none && !(m_open_at < at)) {
    m_late.push_back(e);
    std::push_heap(m_late.begin(), m_late.end(), later);
    return;
  }
  const uint32_t s = at.value == m_last_at && m_last_slot != none ? m_last_slot : find_or_add_slot(at);
  m_last_at = at.value;
  m_last_slot = s;
  m_slots[s].items.push_back(e);
}

uint32_t calendar_queue::find_or_add_slot(picoseconds at) {
  const size_t mask = m_hash.size() - 1;
  for (size_t i = home(at.value);; i = (i + 1) & mask) {
    const cell& c = m_hash[i];
    if (c.slot == none) break;
    if (c.at == at.value) return c.slot;
  }
  uint32_t s;
  if (!m_free_slots.empty()) {
    s = m_free_slots.back();
    m_free_slots.pop_back();
  } else {
    s = uint32_t(m_slots.size());
    m_slots.emplace_back();
  }
  m_slots[s].at = at;
  hash_insert(at.value, s);
  m_times.push_back({at.value, s});
  std::push_heap(m_times.begin(), m_times.end(), later_time);
  return s;
}

void calendar_queue::hash_insert(uint64_t at, uint32_t s) {
  if (2 * (m_hash_used + 1) > m_hash.size()) grow();
  const size_t mask = m_hash.size() - 1;
  size_t i = home(at);
  while (m_hash[i].slot != none) i = (i + 1) & mask;
  m_hash[i] = {at, s};
  ++m_hash_used;
}

void calendar_queue::grow() {
  std::vector<cell> old(m_hash.size() * 2, cell{0, none});
  old.swap(m_hash);
  --m_shift;
  const size_t mask = m_hash.size() - 1;
  for (const cell& c : old) {
    if (c.slot == none) continue;
    size_t i = home(c.at);
    while (m_hash[i].slot != none) i = (i + 1) & mask;
    m_hash[i] = c;
  }
}

void calendar_queue::hash_erase(uint64_t at) {
  const size_t mask = m_hash.size() - 1;
  size_t i = home(at);
  while (m_hash[i].slot == none || m_hash[i].at != at) i = (i + 1) & mask;  // present: the caller knows
  // Backward-shift deletion: move up every later cell of the run that may live at the hole, so that no
  // probe sequence crosses an empty cell before its key.
  for (size_t j = (i + 1) & mask; m_hash[j].slot != none; j = (j + 1) & mask) {
    const size_t k = home(m_hash[j].at);
    // The cell at j may fill the hole at i when its home k does not lie cyclically in (i, j].
    const bool k_in_range = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (!k_in_range) {
      m_hash[i] = m_hash[j];
      i = j;
    }
  }
  m_hash[i].slot = none;
  --m_hash_used;
}

picoseconds calendar_queue::next_at() const {
  if (m_open != none) {
    // The open time (or an earlier late entry) comes before every bucket still in the heap.
    picoseconds t = m_open_at;
    if (!m_late.empty()) t = std::min(t, m_late.front().at);
    if (m_open_pos < m_slots[m_open].items.size() || !m_late.empty()) return t;
  }
  return picoseconds(m_times.front().at);
}

bool calendar_queue::open_next(picoseconds t) {
  if (m_times.empty() || t.value < m_times.front().at) return false;
  const timed next = m_times.front();
  std::pop_heap(m_times.begin(), m_times.end(), later_time);
  m_times.pop_back();
  hash_erase(next.at);
  if (m_last_slot == next.slot) m_last_slot = none;
  std::vector<entry>& items = m_slots[next.slot].items;
  // Pushed in seq order: a bucket holding one key (or keys already in order) needs no sort.
  if (!std::is_sorted(items.begin(), items.end(), before)) std::sort(items.begin(), items.end(), before);
  m_open = next.slot;
  m_open_pos = 0;
  m_open_items = items.data();
  m_open_count = items.size();
  m_open_at = picoseconds(next.at);
  return true;
}

void calendar_queue::close_open() {
  m_slots[m_open].items.clear();  // keeps its capacity for the next time it is used
  m_free_slots.push_back(m_open);
  m_open = none;
  m_open_items = nullptr;
  m_open_count = 0;
}

bool calendar_queue::pop_due_rest(picoseconds t, entry& out) {
  for (;;) {
    if (m_open != none) {
      // The next of the open bucket and the entries that joined it (pop_due's inline case included, for a
      // time opened in this call).
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
      close_open();
    }
    if (!open_next(t)) return false;
  }
}

}  // namespace fabricsim::core
