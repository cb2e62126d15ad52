// The wake-up calendar: the timed wake-ups of the blocks that transmit (the NICs' transmit schedulers) in one
// binary heap behind one SystemC event, so that the kernel is woken once per distinct wake-up time rather
// than once per NIC. Each client holds at most one wake-up, as a kernel event holds one notification: asking
// for an earlier time moves it, a later one is ignored, so no stale entry keeps the kernel running. The pass
// is not deferred by a delta cycle: it runs in the time's first delta, where each NIC's own timed event ran
// before, ahead of the arrival calendar's pass (core/arrival_calendar.h); a wake-up for "now" asked from
// outside a pass (an arrival) runs in the next delta, after that pass, as a delta notification did.
// Simultaneous wake-ups run in the order they were last asked for. One per simulation kernel.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "sc_models/core/units.h"

namespace fabricsim::core {

class wakeup_client {
 public:
  virtual ~wakeup_client() = default;
  virtual void on_wake(picoseconds t) = 0;

 private:
  friend class wakeup_calendar;
  uint32_t m_wakeup_slot = UINT32_MAX;  // its wake-up's place in the calendar's heap; UINT32_MAX: none
};

class wakeup_calendar : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(wakeup_calendar);
  explicit wakeup_calendar(sc_core::sc_module_name name);
  wakeup_calendar(const wakeup_calendar&) = delete;
  wakeup_calendar& operator=(const wakeup_calendar&) = delete;

  // Wakes `c` at `at` (>= now) unless it already waits for an earlier or the same time; a client waiting for a
  // later time is moved to `at`. Inside a pass, a client asking for now runs later in the same pass.
  void schedule(wakeup_client* c, picoseconds at);
  bool pending(const wakeup_client* c) const { return c->m_wakeup_slot != UINT32_MAX; }

  uint64_t kernel_wakeups() const { return m_kernel_wakeups; }  // passes run (tests)

 private:
  struct entry {
    picoseconds at;
    uint64_t seq;  // ties at one time in the order they were asked for
    wakeup_client* client;
  };
  static bool before(const entry& a, const entry& b) { return a.at < b.at || (a.at == b.at && a.seq < b.seq); }
  void sift_up(uint32_t i);
  void sift_down(uint32_t i);
  void place(uint32_t i, const entry& e) {
    m_heap[i] = e;
    e.client->m_wakeup_slot = i;
  }
  void fire();
  void wake(picoseconds at);

  std::vector<entry> m_heap;  // a min-heap on (at, seq)
  uint64_t m_seq = 0;
  sc_core::sc_event m_event;
  picoseconds m_wake_at{UINT64_MAX};
  bool m_firing = false;
  uint64_t m_kernel_wakeups = 0;
};

}  // namespace fabricsim::core
