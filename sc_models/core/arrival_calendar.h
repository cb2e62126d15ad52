// The arrival calendar: the heads of every link's in-flight ring, ordered by arrival time (then by the
// client's key and the order they were scheduled) in a calendar_queue, behind a single SystemC event. The
// kernel is woken once per distinct arrival time rather than once per link, and the order of simultaneous
// arrivals is fixed by the model, not by the kernel's run queue. One calendar per simulation kernel (per MPI
// rank).
#pragma once

#include <cstdint>
#include <string>
#include <systemc>

#include "sc_models/core/calendar_queue.h"
#include "sc_models/core/units.h"

namespace fabricsim::core {

// Anything the calendar can call back when its time comes: a link whose head packet has arrived, a port
// whose transmit FIFO needs refilling or whose pause has expired.
class calendar_client {
 public:
  // What the calendar calls when the client is due: on_due() by default. The calendar keeps it beside the
  // client's pointer in its entry, so a client that names its own (a link) is called without the calendar
  // reading the client's vtable pointer, a cache line the call would not otherwise touch.
  using due_fn = void (*)(calendar_client& c, picoseconds t);

  calendar_client() = default;
  virtual ~calendar_client() = default;
  virtual void on_due(picoseconds t) = 0;
  due_fn due() const { return m_due; }

  // Clients due at the same time are served in order of this key, then in scheduling order. The fabric gives
  // every link its global index + 1, so simultaneous arrivals are ordered the same however the fabric is cut
  // across processes (docs/scale_out.md); ports keep 0 (served first, in scheduling order: they are only
  // scheduled by their own device, so that order is the same in every partition).
  // Virtual so that a client keeping a copy where its hot fields are (a link) hears of a change.
  virtual void set_calendar_key(uint64_t k) { m_calendar_key = k; }
  uint64_t calendar_key() const { return m_calendar_key; }

 protected:
  explicit calendar_client(due_fn f) : m_due(f) {}

 private:
  static void call_on_due(calendar_client& c, picoseconds t) { c.on_due(t); }
  uint64_t m_calendar_key = 0;
  due_fn m_due = &call_on_due;
};

class arrival_calendar : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(arrival_calendar);
  arrival_calendar(sc_core::sc_module_name name, uint64_t& wakeups);
  arrival_calendar(const arrival_calendar&) = delete;
  arrival_calendar& operator=(const arrival_calendar&) = delete;

  // `c` is due at `at` (>= now); `head` is memory it will touch then (a link's next packet), prefetched
  // shortly before, or null. A link keeps at most one entry; a port may leave a stale one behind, so a
  // client must tolerate being called when it has nothing to do.
  void schedule(calendar_client* c, picoseconds at, const void* head = nullptr) {
    schedule(c, at, head, c->calendar_key(), c->due());
  }
  // The same, for a client that passes its key and call itself (from a line it has just read, rather than
  // the calendar reading its header: a link's header shares a line with nothing its delivery touches).
  // Inline: a link's arrival and a port's wake-up push here once per frame.
  void schedule(calendar_client* c, picoseconds at, const void* head, uint64_t key, calendar_client::due_fn call) {
    m_queue.push(at, key, c, head, reinterpret_cast<calendar_queue::opaque_fn>(call));
    if (!m_firing) wake(at);  // inside fire() one notification at the end covers everything scheduled
  }

  // The one other process a pass may run ahead of the kernel beside (the transmit calendar's: sim_context
  // names it). A pass serves later times in the same activation only when the kernel holds no process but
  // these two and the NICs' one-off initial_transmit, inside a window that link_exchange opens for one
  // process (kernel_run_window), and while the kernel has nothing due at or before the next time.
  void run_ahead_beside(const sc_core::sc_module& companion) { m_companion = std::string(companion.name()) + ".fire"; }
  uint64_t passes_ahead() const { return m_passes_ahead; }  // times served ahead of the kernel's clock (tests)

 private:
  void fire();
  void serve(picoseconds t, bool due);  // `due`: an entry is due by t (counts the pass)
  void wake(picoseconds at);
  void start_of_simulation() override;

  calendar_queue m_queue;
  uint64_t& m_wakeups;
  sc_core::sc_event m_event;
  picoseconds m_wake_at{UINT64_MAX};
  bool m_firing = false;
  bool m_ahead_allowed = false;  // start_of_simulation: no process but the calendars' and initial_transmit
  std::string m_companion;
  uint64_t m_passes_ahead = 0;
};

}  // namespace fabricsim::core
