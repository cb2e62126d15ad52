// The occupancy of one of the NIC's clocked RTL blocks (nic.clock_mhz): edge arithmetic and the edge the block
// frees at. A transaction that arrives at t is accepted at S = max(first edge at or after t, the free edge),
// holds the block for the cycles the RTL takes (the next transaction is accepted `cycles` edges after S) and
// has its result `latency` edges after S. block_clock queues whole packets in front of the reorder tracker
// with it; the congestion-control blocks, whose results are decisions rather than packets, use it directly:
// the CNP generator (a CNP leaves at its result edge) and the DCQCN reaction point (the NIC sends no paced
// packet while it is busy). Statistics are registered under the NIC with the block's name as prefix.
#pragma once

#include <cstdint>
#include <string>

#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"

namespace fabricsim::nic {

class block_timing {
 public:
  // clock_mhz above 0 and at least 1 kHz (config_error naming `instance` and nic.clock_mhz otherwise). With
  // `stats`, registers <block>_transactions, _busy_cycles, _busy_ns, _waited_<unit> and _wait_ps, where `unit`
  // names what waits ("packets", "transactions").
  block_timing(const std::string& instance, const std::string& block, double clock_mhz, core::stats_registry* stats,
               const char* unit = "transactions");
  block_timing(const block_timing&) = delete;
  block_timing& operator=(const block_timing&) = delete;

  // The first edge at or after `t`, and the time of edge `k` (edge k at ceil(k * 1e6 / clock_mhz) ps).
  uint64_t edge_at_or_after(core::picoseconds t) const;
  core::picoseconds edge_time(uint64_t k) const;
  uint64_t clock_khz() const { return m_khz; }

  // The edge a transaction arriving at `t` is accepted at (counted as a wait when the block is busy then).
  uint64_t accept(core::picoseconds t);
  // The accepted transaction took `cycles` (0 counts as 1): the block takes the next one that many edges
  // after `start`.
  void occupy(uint64_t start, uint64_t cycles);
  // Both at once: the accepting edge of a transaction arriving at `t` that takes `cycles`.
  uint64_t take(core::picoseconds t, uint64_t cycles) {
    const uint64_t start = accept(t);
    occupy(start, cycles);
    return start;
  }
  // Marks the block busy up to `edge` without counting a transaction (a transaction still being served).
  void hold_until(uint64_t edge) { m_free_edge = edge > m_free_edge ? edge : m_free_edge; }
  uint64_t free_edge() const { return m_free_edge; }
  core::picoseconds free_at() const { return edge_time(m_free_edge); }

 private:
  uint64_t m_khz = 0;      // the clock in kHz (nic.clock_mhz rounded to 1 kHz): integer edge arithmetic
  uint64_t m_fits_64 = 0;  // the largest t - 1 (ps) whose product with m_khz fits in 64 bits
  uint64_t m_free_edge = 0;
  uint64_t m_transactions = 0, m_busy_cycles = 0, m_waited = 0, m_wait_ps = 0;
};

}  // namespace fabricsim::nic
