// A clocked block's edges and occupancy (block_timing.h).
#include "sc_models/nic/block_timing.h"

#include <algorithm>
#include <cmath>

#include "sc_models/core/params.h"

namespace fabricsim::nic {

namespace {
constexpr uint64_t ps_per_ms = 1'000'000'000;  // edge k of a clock of f kHz is at k * 1e9 / f ps
}

block_timing::block_timing(const std::string& instance, const std::string& block, double clock_mhz,
                           core::stats_registry* stats, const char* unit) {
  core::require(std::isfinite(clock_mhz) && clock_mhz > 0, instance,
                "nic.clock_mhz " + std::to_string(clock_mhz) + " must be above 0 (MHz)");
  m_khz = uint64_t(std::llround(clock_mhz * 1000.0));
  core::require(m_khz >= 1, instance, "nic.clock_mhz " + std::to_string(clock_mhz) + " is below 1 kHz");
  m_fits_64 = UINT64_MAX / m_khz;
  core::require(m_khz <= ps_per_ms, instance,
                "nic.clock_mhz " + std::to_string(clock_mhz) + " is above 1 THz (edges closer than 1 ps)");
  if (stats == nullptr) return;
  stats->counter(instance, block + "_transactions", "transactions",
                 "transactions the clocked block took (nic.clock_mhz)", &m_transactions);
  stats->counter(instance, block + "_busy_cycles", "cycles",
                 "clock cycles the block was busy (each transaction's RTL cycles, nic.clock_mhz)", &m_busy_cycles);
  stats->gauge(instance, block + "_busy_ns", "ns", "time the block was busy: busy cycles at nic.clock_mhz",
               [this] { return double(m_busy_cycles) * 1e6 / double(m_khz); });
  stats->counter(instance, block + "_waited_" + unit, unit,
                 "arrivals whose transaction could not start at the first edge after them (block busy)", &m_waited);
  stats->counter(instance, block + "_wait_ps", "ps", "total time arrivals waited for the busy block", &m_wait_ps);
}

// The smallest k with edge_time(k) >= t, edge_time rounding up to whole ps: ceil(k x 1e9 / f) >= t exactly when
// k x 1e9 > (t - 1) x f. (Rounding t x f / 1e9 up instead would put a time already rounded up to edge k at k + 1
// whenever the edge does not fall on a whole picosecond, so a block woken at its own free edge lost a cycle.)
// Both in 64 bits while the products fit (up to 12 s of simulated time at 1.5 GHz: a 64-bit division by a
// constant is a multiplication and by a variable one instruction, a 128-bit one a library call), in 128 bits
// after; the same integers either way.
uint64_t block_timing::edge_at_or_after(core::picoseconds t) const {
  if (t.value == 0) return 0;
  const uint64_t x = t.value - 1;
  if (x <= m_fits_64) return x * m_khz / ps_per_ms + 1;
  return uint64_t((unsigned __int128)x * m_khz / ps_per_ms) + 1;
}

core::picoseconds block_timing::edge_time(uint64_t k) const {
  if (k <= (UINT64_MAX - ps_per_ms) / ps_per_ms) return core::picoseconds((k * ps_per_ms + m_khz - 1) / m_khz);
  const unsigned __int128 num = (unsigned __int128)k * ps_per_ms;
  return core::picoseconds(uint64_t((num + m_khz - 1) / m_khz));
}

uint64_t block_timing::accept(core::picoseconds t) {
  const uint64_t first = edge_at_or_after(t);
  const uint64_t start = std::max(first, m_free_edge);
  if (start > first) {
    ++m_waited;
    m_wait_ps += (edge_time(start) - t).value;
  }
  return start;
}

void block_timing::occupy(uint64_t start, uint64_t cycles) {
  cycles = std::max<uint64_t>(1, cycles);
  m_free_edge = std::max(m_free_edge, start + cycles);
  ++m_transactions;
  m_busy_cycles += cycles;
}

}  // namespace fabricsim::nic
