// The NIC's clocked receive block: busy-until edge, FIFO of waiting packets, one calendar entry per result.
#include "sc_models/nic/block_clock.h"

#include <algorithm>

namespace fabricsim::nic {

block_clock::block_clock(const std::string& instance, const std::string& block, double clock_mhz,
                         core::arrival_calendar& cal, core::stats_registry& stats)
    : m_timing(instance, block, clock_mhz, &stats, "packets"), m_cal(cal) {
  stats.counter(instance, block + "_peak_queue_packets", "packets",
                "most packets held by the block at once (waiting, or in their transaction)", &m_peak_queue);
}

void block_clock::arrive(core::packet* p) {
  m_fifo.push_back({p, core::now()});
  m_waiting_bytes += p->payload_bytes;
  m_peak_queue = std::max<uint64_t>(m_peak_queue, m_fifo.size());
  if (m_fifo.size() == 1) set_up_front();
}

// The front packet's transaction starts at the first edge at or after its arrival at which the block is free;
// its result is due one cycle later.
void block_clock::set_up_front() {
  const waiting& w = m_fifo.front();
  m_front_edge = m_timing.accept(w.arrived);
  m_front_set = true;
  m_cal.schedule(this, std::max(edge_time(m_front_edge + 1), core::now()));
}

core::packet* block_clock::take_waiting() {
  if (m_fifo.empty()) return nullptr;
  core::packet* p = m_fifo.front().p;
  m_fifo.pop_front();
  m_waiting_bytes -= p->payload_bytes;
  m_front_set = false;
  return p;
}

void block_clock::on_due(core::picoseconds t) {
  if (!m_front_set || t < edge_time(m_front_edge + 1)) return;  // nothing due (a stale entry)
  const waiting w = m_fifo.front();
  m_fifo.pop_front();
  m_front_set = false;
  m_waiting_bytes -= w.p->payload_bytes;
  m_timing.hold_until(m_front_edge + 1);  // provisional: serving may look at the block's state
  m_timing.occupy(m_front_edge, m_serve(w.p));
  if (m_on_served) m_on_served();
  if (!m_fifo.empty()) set_up_front();
}

}  // namespace fabricsim::nic
