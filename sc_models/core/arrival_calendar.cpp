// The arrival calendar of a simulation kernel.
#include "sc_models/core/arrival_calendar.h"

namespace fabricsim::core {

arrival_calendar::arrival_calendar(sc_core::sc_module_name name, uint64_t& wakeups)
    : sc_core::sc_module(name), m_wakeups(wakeups) {
  SC_METHOD(fire);
  sensitive << m_event;
  dont_initialize();
}

void arrival_calendar::wake(picoseconds at) {
  if (!(at < m_wake_at)) return;  // an earlier wake-up is pending and will look again
  m_wake_at = at;
  m_event.notify(to_sc_time(at - now()));
}

void arrival_calendar::schedule(calendar_client* c, picoseconds at, const void* head, uint64_t key,
                                calendar_client::due_fn call) {
  m_queue.push(at, key, c, head, reinterpret_cast<calendar_queue::opaque_fn>(call));
  if (!m_firing) wake(at);  // inside fire() one notification at the end covers everything scheduled
}

void arrival_calendar::fire() {
  // Serve the arrivals one delta cycle after the time's own timed processes (the NIC transmitters' wake-ups
  // due at the same picosecond): the kernel orders simultaneous timed events by its own heap, which holds
  // different events when the fabric is cut across processes, so "calendar first" or "transmitter first"
  // would depend on the partition (docs/scale_out.md). m_firing marks the deferral: schedule() then leaves
  // the wake-up to the end of the deferred pass, exactly as during it.
  // When nothing else is due in this delta (no other process runnable, no delta notification or channel
  // update pending) the deferred pass would run alone in the next one, so it runs now: the same order for
  // one kernel activation instead of two (most arrival times have no transmitter wake-up of their own).
  if (!m_firing && sc_core::sc_pending_activity_at_current_time()) {
    m_firing = true;
    m_event.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  ++m_wakeups;
  const picoseconds t = now();
  m_wake_at = picoseconds(UINT64_MAX);
  m_firing = true;
  // Deliveries schedule arrivals strictly later than now (every frame takes time to serialize); a client
  // scheduled at now is served in this same loop, which ends with the queue's head in the future.
  calendar_queue::entry e;
  while (m_queue.pop_due(t, e)) {
    // Descriptors are cold by the time they arrive (a packet spends microseconds on a link): start
    // fetching the next ones due while this one is processed.
    // The client's own fields start after its calendar_client header (a link's: the line after it).
    for (size_t i = 0; i < 2; ++i) {
      const calendar_queue::entry* n = m_queue.upcoming(i);
      if (n == nullptr) break;
      if (n->head) __builtin_prefetch(n->head);
      __builtin_prefetch(static_cast<const char*>(n->client) + sizeof(calendar_client));
    }
    reinterpret_cast<calendar_client::due_fn>(e.call)(*static_cast<calendar_client*>(e.client), t);
  }
  m_firing = false;
  if (!m_queue.empty()) wake(m_queue.next_at());
}

}  // namespace fabricsim::core
