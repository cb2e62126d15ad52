// The arrival calendar of a simulation kernel.
#include "sc_models/core/arrival_calendar.h"

#include <string>
#include <vector>

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
  ++detail::kernel_notifications;
  m_event.notify(to_sc_time(at - kernel_now()));
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
    ++detail::kernel_notifications;
    m_event.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  const picoseconds kt = kernel_now();
  m_wake_at = picoseconds(UINT64_MAX);
  m_firing = true;
  serve(kt, !m_queue.empty() && !(kt < m_queue.next_at()));
  // Later times in the same activation, while the kernel has nothing else to run before them: the model's
  // clock (core::now) runs ahead of the kernel's; every notification is timed against the kernel's own.
  // The kernel is asked what it holds only after a calendar notified it (detail::kernel_notifications), the
  // first time included: otherwise its answer is the one before.
  picoseconds last = kt;
  uint64_t asked_at = detail::kernel_notifications - 1;
  bool busy_now = false;   // something else runs in this delta
  uint64_t kernel_in = 0;  // the kernel's next event, in ps after kt
  while (m_ahead_allowed && !m_queue.empty()) {
    const picoseconds t2 = m_queue.next_at();
    if (!(t2.value < detail::kernel_run_limit)) break;  // the sc_start's end, or no window open
    if (asked_at != detail::kernel_notifications) {
      asked_at = detail::kernel_notifications;
      busy_now = sc_core::sc_pending_activity_at_current_time();
      if (!busy_now) kernel_in = sc_core::sc_time_to_pending_activity().value();
    }
    if (busy_now) break;
    // Another event at or before t2 (a transmit wake-up asked during the last time served, say): the kernel
    // runs it first, at its own time.
    if (kernel_in <= t2.value - kt.value) break;
    detail::model_time_ahead = t2.value;
    ++m_passes_ahead;
    serve(t2, true);
    last = t2;
  }
  detail::model_time_ahead = UINT64_MAX;
  m_firing = false;
  if (!m_queue.empty()) {
    wake(m_queue.next_at());
  } else if (kt < last) {  // bring the kernel's clock to the last time served (a starving run ends there):
    wake(last);            // an activation that finds nothing due and counts no pass
  }
}

void arrival_calendar::serve(picoseconds t, bool due) {
  // A pass counts when it serves an entry (`due`: the queue's head is due by t): every wake-up is for an
  // entry's time (an earlier notification replaces a later one), except the one that only brings the
  // kernel's clock to the last time served.
  if (due) ++m_wakeups;
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
}

namespace {
// Counts the processes under `objs` other than `a`, `b` and the NICs' initial_transmit.
void count_processes(const std::vector<sc_core::sc_object*>& objs, size_t& other, const std::string& a,
                     const std::string& b) {
  for (sc_core::sc_object* o : objs) {
    const std::string kind = o->kind();
    if (kind == "sc_method_process" || kind == "sc_thread_process" || kind == "sc_cthread_process") {
      const std::string n = o->name();
      const bool initial = n.size() > 17 && n.compare(n.size() - 17, 17, ".initial_transmit") == 0;
      if (n != a && n != b && !initial) ++other;
    }
    count_processes(o->get_child_objects(), other, a, b);
  }
}
}  // namespace

void arrival_calendar::start_of_simulation() {
  // Times are served ahead of the kernel's only where no other process could be notified meanwhile (one that
  // timed a notification against now() rather than kernel_now() would be woken early): the kernel holds this
  // calendar's pass, the transmit calendar's and the NICs' one-off initial_transmit, nothing else.
  size_t other = 0;
  count_processes(sc_core::sc_get_top_level_objects(), other, std::string(name()) + ".fire", m_companion);
  m_ahead_allowed = other == 0;
}

}  // namespace fabricsim::core
