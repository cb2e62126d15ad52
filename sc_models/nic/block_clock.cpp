// The NIC's clocked receive block: busy-until edge, FIFO of waiting packets, one calendar entry per result.
#include "sc_models/nic/block_clock.h"

#include <algorithm>
#include <cmath>

#include "sc_models/core/params.h"

namespace fabricsim::nic {

namespace {
constexpr uint64_t ps_per_ms = 1'000'000'000;  // edge k of a clock of f kHz is at k * 1e9 / f ps
}

block_clock::block_clock(const std::string& instance, const std::string& block, double clock_mhz,
                         core::arrival_calendar& cal, core::stats_registry& stats)
    : m_khz(0), m_cal(cal) {
  core::require(std::isfinite(clock_mhz) && clock_mhz > 0, instance,
                "nic.clock_mhz " + std::to_string(clock_mhz) + " must be above 0 (MHz)");
  m_khz = uint64_t(std::llround(clock_mhz * 1000.0));
  core::require(m_khz >= 1, instance, "nic.clock_mhz " + std::to_string(clock_mhz) + " is below 1 kHz");
  stats.counter(instance, block + "_transactions", "transactions", "packets the clocked block took, one each",
                &m_transactions);
  stats.counter(instance, block + "_busy_cycles", "cycles",
                "clock cycles the block was busy (each packet's RTL cycles, nic.clock_mhz)", &m_busy_cycles);
  stats.gauge(instance, block + "_busy_ns", "ns", "time the block was busy: busy cycles at nic.clock_mhz",
              [this] { return double(m_busy_cycles) * 1e6 / double(m_khz); });
  stats.counter(instance, block + "_waited_packets", "packets",
                "packets whose transaction could not start at the first edge after they arrived (block busy)",
                &m_waited);
  stats.counter(instance, block + "_peak_queue_packets", "packets",
                "most packets held by the block at once (waiting, or in their transaction)", &m_peak_queue);
  stats.counter(instance, block + "_wait_ps", "ps", "total time packets waited for the busy block", &m_wait_ps);
}

uint64_t block_clock::edge_at_or_after(core::picoseconds t) const {
  const unsigned __int128 num = (unsigned __int128)t.value * m_khz;
  return uint64_t((num + ps_per_ms - 1) / ps_per_ms);
}

core::picoseconds block_clock::edge_time(uint64_t k) const {
  const unsigned __int128 num = (unsigned __int128)k * ps_per_ms;
  return core::picoseconds(uint64_t((num + m_khz - 1) / m_khz));
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
  const uint64_t first = edge_at_or_after(w.arrived);
  m_front_edge = std::max(first, m_free_edge);
  if (m_front_edge > first) {
    ++m_waited;
    m_wait_ps += (edge_time(m_front_edge) - w.arrived).value;
  }
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
  m_free_edge = m_front_edge + 1;  // provisional: serving may look at the block's state
  const uint64_t cycles = std::max<uint64_t>(1, m_serve(w.p));
  m_free_edge = m_front_edge + cycles;
  ++m_transactions;
  m_busy_cycles += cycles;
  if (m_on_served) m_on_served();
  if (!m_fifo.empty()) set_up_front();
}

}  // namespace fabricsim::nic
