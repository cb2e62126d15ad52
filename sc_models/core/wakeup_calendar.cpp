// The wake-up calendar of a simulation kernel.
#include "sc_models/core/wakeup_calendar.h"

namespace fabricsim::core {

wakeup_calendar::wakeup_calendar(sc_core::sc_module_name name) : sc_core::sc_module(name) {
  SC_METHOD(fire);
  sensitive << m_event;
  dont_initialize();
}

void wakeup_calendar::wake(picoseconds at) {
  if (!(at < m_wake_at)) return;  // an earlier wake-up is pending and will look again
  m_wake_at = at;
  ++detail::kernel_notifications;
  m_event.notify(to_sc_time(at - kernel_now()));
}

void wakeup_calendar::schedule(wakeup_client* c, picoseconds at) {
  const entry e{at, ++m_seq, c};
  if (c->m_wakeup_slot == UINT32_MAX) {
    m_heap.push_back(e);
    place(uint32_t(m_heap.size() - 1), e);
  } else if (at < m_heap[c->m_wakeup_slot].at) {
    place(c->m_wakeup_slot, e);  // earlier: it only rises
  } else {
    return;  // it already waits for an earlier (or the same) time
  }
  sift_up(c->m_wakeup_slot);
  if (!m_firing) wake(at);  // inside fire() one notification at the end covers everything scheduled
}

void wakeup_calendar::sift_up(uint32_t i) {
  const entry e = m_heap[i];
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (!before(e, m_heap[parent])) break;
    place(i, m_heap[parent]);
    i = parent;
  }
  place(i, e);
}

void wakeup_calendar::sift_down(uint32_t i) {
  const entry e = m_heap[i];
  const auto n = uint32_t(m_heap.size());
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(m_heap[child + 1], m_heap[child])) ++child;
    if (!before(m_heap[child], e)) break;
    place(i, m_heap[child]);
    i = child;
  }
  place(i, e);
}

void wakeup_calendar::fire() {
  ++m_kernel_wakeups;
  const picoseconds t = now();
  m_wake_at = picoseconds(UINT64_MAX);
  m_firing = true;
  while (!m_heap.empty() && m_heap.front().at <= t) {
    wakeup_client* c = m_heap.front().client;
    c->m_wakeup_slot = UINT32_MAX;
    const entry last = m_heap.back();
    m_heap.pop_back();
    if (!m_heap.empty()) {
      place(0, last);
      sift_down(0);
    }
    c->on_wake(t);  // may schedule c (or another client) again, at t or later
  }
  m_firing = false;
  if (!m_heap.empty()) wake(m_heap.front().at);
}

}  // namespace fabricsim::core
