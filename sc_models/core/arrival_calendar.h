// The arrival calendar: the heads of every link's in-flight ring, in one heap ordered by arrival time
// (then by the order they were scheduled), behind a single SystemC event. The kernel is woken once per
// distinct arrival time rather than once per link, and the order of simultaneous arrivals is fixed by the
// model, not by the kernel's run queue. One calendar per simulation kernel (per MPI rank later).
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

#include "sc_models/core/units.h"

namespace fabricsim::core {

class link;

class arrival_calendar : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(arrival_calendar);
  arrival_calendar(sc_core::sc_module_name name, uint64_t& wakeups);
  arrival_calendar(const arrival_calendar&) = delete;
  arrival_calendar& operator=(const arrival_calendar&) = delete;

  // `l`'s next packet, `head`, arrives at `at` (> now). A link has at most one entry at a time.
  void schedule(link* l, picoseconds at, const void* head);

 private:
  struct entry {
    picoseconds at;
    uint64_t seq;
    link* l;
    const void* head;  // the descriptor due, kept here so it can be prefetched without touching the link
    bool operator>(const entry& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  void fire();
  void wake(picoseconds at);

  std::vector<entry> m_heap;
  uint64_t m_seq = 0;
  uint64_t& m_wakeups;
  sc_core::sc_event m_event;
  picoseconds m_wake_at{UINT64_MAX};
  bool m_firing = false;
};

}  // namespace fabricsim::core
