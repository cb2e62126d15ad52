// The NIC's receive-side RTL block (the reorder tracker, one per NIC serving every QP's context) as clocked
// hardware: a transaction per packet starts at a clock edge when the block is free, its result is taken one
// cycle later (the RTL's response latency), and the block then stays busy for the cycles the RTL reported,
// holding the packets behind it in arrival order. Stepping stays per transaction; the only kernel work is one
// calendar entry per packet, at its result cycle.
//
// Timing (all at clock edges k of nic.clock_mhz, edge k at ceil(k * 1e6 / clock_mhz) ps):
//   arrival at t       the packet joins the FIFO; if it is the only one there, its transaction is set up:
//   start              S = max(first edge at or after t, the edge the block frees at)
//   result at S + 1    the packet is served (the NIC's processing: tracker step, placement, ACK, CNP);
//                      serving reports the cycles c the RTL took (at least 1)
//   free at S + c      the next packet's transaction may start at this edge
// A packet that releases m stored PSNs costs 1 + m cycles (rtl/reorder_tracker.sv: one per retired PSN), so
// the packet behind it starts m cycles later than behind an in-order one. The processing of the released
// PSNs is taken at the result cycle (the head moves at once, not one PSN per cycle): early by at most m cycles.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "sc_models/core/arrival_calendar.h"
#include "sc_models/core/packet.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"
#include "sc_models/nic/block_timing.h"

namespace fabricsim::nic {

// Laid out by use (alignas(64)): the calendar's header and the FIFO in the first line, what an arrival and a
// receive-buffer check read in the next two, the server calls last (docs/performance.md, "The NIC's per-hop
// cost again").
class alignas(64) block_clock final : public core::calendar_client {
 public:
  // Serves one packet at its result cycle; returns the clock cycles the block took for it (0 counts as 1).
  using server = std::function<uint64_t(core::packet*)>;

  // clock_mhz > 0 (config_error naming `instance` and nic.clock_mhz otherwise). Statistics are registered
  // under `instance` with the prefix `block` (e.g. "rx_block_busy_ns").
  block_clock(const std::string& instance, const std::string& block, double clock_mhz, core::arrival_calendar& cal,
              core::stats_registry& stats);
  block_clock(const block_clock&) = delete;
  block_clock& operator=(const block_clock&) = delete;

  void set_server(server s) { m_serve = std::move(s); }
  // A packet for the block, now; it is served at its result cycle (perhaps in this same instant's calendar
  // pass, never before now).
  void arrive(core::packet* p);
  // Called (by the owner) whenever a served packet left the receive buffer: the owner may send XON.
  void set_on_served(std::function<void()> f) { m_on_served = std::move(f); }

  // Payload bytes of the packets waiting for the block (or being processed): receive-buffer occupancy.
  uint64_t waiting_payload_bytes() const { return m_waiting_bytes; }
  // Bytes held in the same receive buffer besides the waiting packets (nic.placement pcie: writes that have not
  // landed), asked only when set: without it the occupancy is read from this block's lines alone.
  void set_also_held(std::function<uint64_t()> f) { m_also_held = std::move(f); }
  uint64_t buffer_occupancy() const { return m_waiting_bytes + (m_also_held ? m_also_held() : 0); }
  size_t waiting_packets() const { return m_fifo.size(); }
  uint64_t clock_khz() const { return m_timing.clock_khz(); }
  // Removes and returns the oldest packet held (nullptr when none): the owner releases them at the end.
  core::packet* take_waiting();

  // Edge arithmetic, exposed for tests: the first edge at or after `t`, and the time of edge `k`.
  uint64_t edge_at_or_after(core::picoseconds t) const { return m_timing.edge_at_or_after(t); }
  core::picoseconds edge_time(uint64_t k) const { return m_timing.edge_time(k); }

  void on_due(core::picoseconds t) override;

 private:
  struct waiting {
    core::packet* p;
    core::picoseconds arrived;
  };
  void set_up_front();

  core::ring<waiting> m_fifo{64};  // line 0, after the calendar's header
  uint64_t m_waiting_bytes = 0;
  uint64_t m_front_edge = 0;  // the front packet's accepting edge (valid while m_front_set)
  block_timing m_timing;      // edges and the edge the block frees at; the block's statistics but the peak queue
  core::arrival_calendar& m_cal;
  uint64_t m_peak_queue = 0;  // statistic
  bool m_front_set = false;   // the front packet's result is on the calendar
  std::function<uint64_t()> m_also_held;
  server m_serve;
  std::function<void()> m_on_served;
};

}  // namespace fabricsim::nic
