// The SuperNIC's MAC transmit side: the frame FIFO between the transmit scheduler and the wire, the PFC pause
// the switch port above sets on the priority the NIC's frames travel on, and (nic.link_layer infiniband) the
// credits of the one data VL. The scheduler asks it whether a frame may be built and tells it each frame
// committed; it holds no packets, only when each committed frame leaves the wire.
#pragma once

#include <cstdint>

#include "sc_models/core/ring.h"
#include "sc_models/core/units.h"
#include "sc_models/ib/credit_link.h"

namespace fabricsim::nic {

class mac_transmit {
 public:
  // `fifo_frames`: nic.tx_fifo_frames; `priority`: the PFC priority of data and ACKs (DSCP / 8);
  // `infiniband`: credits are checked for `max_packet_blocks` (the largest packet) before a frame is built.
  mac_transmit(uint64_t fifo_frames, unsigned priority, bool infiniband, uint64_t max_packet_blocks);
  mac_transmit(const mac_transmit&) = delete;
  mac_transmit& operator=(const mac_transmit&) = delete;

  // FIFO. Each frame starts when the one before it has left, so the wire stays busy while the scheduler sleeps.
  void drain(core::picoseconds t);  // frames whose last bit has left by `t` free their slots
  bool has_room() const { return m_fifo.size() < m_fifo_frames; }
  bool empty() const { return m_fifo.empty(); }
  void committed(core::picoseconds leaves) { m_fifo.push_back(leaves); }  // a frame that leaves the wire then
  core::picoseconds last_leaves() const { return m_fifo[m_fifo.size() - 1]; }
  // When the scheduler refills: once one frame is left in the FIFO (at once for a FIFO of one frame).
  core::picoseconds refill_at() const;

  // PFC from the switch port above: a frame enabling the classes in `class_enable`, with `quanta` (512-bit
  // times at `rate`; 0 resumes) for our priority, arrived at `t`. False when it does not pause our priority.
  bool pause(uint8_t class_enable, uint64_t quanta, core::bits_per_second rate, core::picoseconds t);
  unsigned priority() const { return m_priority; }
  bool paused(core::picoseconds t) const { return t < m_paused_until; }
  core::picoseconds paused_until() const { return m_paused_until; }
  double paused_us(core::picoseconds now) const;  // time paused so far

  // InfiniBand: true (and the stall's start noted) when the data VL has no credit for the largest packet.
  bool credit_blocked(core::picoseconds t);
  void sent(uint64_t wire_bytes, core::picoseconds t);  // a frame of `wire_bytes` is committed at `t`
  sw::ib::credit_sender& credits() { return m_credits; }
  const sw::ib::credit_sender& credits() const { return m_credits; }

 private:
  core::ring<core::picoseconds> m_fifo;  // when each frame committed to the MAC leaves the wire
  const uint64_t m_fifo_frames;
  const unsigned m_priority;
  const bool m_ib;
  const uint64_t m_max_blocks;
  core::picoseconds m_paused_until{};
  core::picoseconds m_paused_from{};
  uint64_t m_paused_ps = 0;
  sw::ib::credit_sender m_credits;
};

}  // namespace fabricsim::nic
