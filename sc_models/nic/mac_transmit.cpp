// The SuperNIC's MAC transmit side: FIFO, PFC pause state and InfiniBand credits.
#include "sc_models/nic/mac_transmit.h"

#include <algorithm>

namespace fabricsim::nic {

using core::picoseconds;

mac_transmit::mac_transmit(uint64_t fifo_frames, unsigned priority, bool infiniband, uint64_t max_packet_blocks)
    : m_fifo_frames(fifo_frames), m_priority(priority), m_ib(infiniband), m_max_blocks(max_packet_blocks) {}

void mac_transmit::drain(picoseconds t) {
  while (!m_fifo.empty() && m_fifo.front() <= t) m_fifo.pop_front();
}

picoseconds mac_transmit::refill_at() const {
  const size_t n = m_fifo.size();
  return n >= 2 ? m_fifo[n - 2] : m_fifo[n - 1];
}

bool mac_transmit::pause(uint8_t class_enable, uint64_t quanta, core::bits_per_second rate, picoseconds t) {
  if (!(class_enable >> m_priority & 1)) return false;
  const picoseconds end = std::min(m_paused_until, t);
  if (end > m_paused_from) m_paused_ps += (end - m_paused_from).value;
  m_paused_from = t;
  m_paused_until = t + core::pause_duration(quanta, rate);
  return true;
}

double mac_transmit::paused_us(picoseconds now) const {
  const picoseconds end = std::min(m_paused_until, now);
  return double(m_paused_ps + (end > m_paused_from ? (end - m_paused_from).value : 0)) / 1e6;
}

bool mac_transmit::credit_blocked(picoseconds t) {
  if (!m_ib || m_credits.can_send(0, m_max_blocks)) return false;
  m_credits.stall(0, true, t);
  return true;
}

void mac_transmit::sent(uint64_t wire_bytes, picoseconds t) {
  if (!m_ib) return;
  m_credits.stall(0, false, t);
  m_credits.sent(0, sw::ib::blocks_of(wire_bytes));
}

}  // namespace fabricsim::nic
