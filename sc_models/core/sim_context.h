// What every block of one simulation shares: the packet pool, the statistics registry, the arrival
// calendar and the run's seed. Passed by reference at construction; there is no global simulator state.
// Create it at the top level of elaboration (not inside a module's constructor): it owns a module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "sc_models/core/arrival_calendar.h"
#include "sc_models/core/fine_histogram.h"
#include "sc_models/core/packet_pool.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/wakeup_calendar.h"

namespace fabricsim::core {

class transaction_log;

// Lockstep RTL checking (nic.reorder, nic.cnp_model, nic.dcqcn_model lockstep; docs/verification.md, "RTL
// in the loop"): where a diverging pair writes its waveform and the first divergence's message, which the
// pair sets before it stops the run (the kernel reports the exception as its own).
struct lockstep_sink {
  std::string wave_dir;    // run.rtl_wave_dir (--wave); empty: no waveform
  std::string divergence;  // empty: none
};

struct sim_context {
  sim_context() { calendar.run_ahead_beside(transmit_calendar); }
  sim_context(const sim_context&) = delete;
  sim_context& operator=(const sim_context&) = delete;

  packet_pool pool;
  stats_registry stats;
  uint64_t seed = 1;
  uint64_t packet_hops = 0;  // packets delivered across any link: the speed figure's numerator
  uint64_t events = 0;       // timed kernel wake-ups of the models (arrival calendar, NIC transmitters)
  // Links with a fault injector attached (link::set_fault). While none is, no link is ever known down, and
  // routing skips asking each port's link (a cache line per port of an adaptive scan).
  uint64_t links_with_fault = 0;
  // One-way latency of every payload-carrying packet a NIC receives, in ps: from the start of its
  // serialization onto the sender's first link to its arrival at the receiving NIC (queueing, serialization
  // and propagation of every hop). Run-wide (one histogram, not one per NIC); the run registers it as
  // `fabric.data_packet_latency` and clears it when the measurement window opens.
  fine_histogram data_latency;
  arrival_calendar calendar{"arrival_calendar", events};
  // The NIC transmitters' timed wake-ups (their own count is `events`'s share; the calendar's passes are not).
  wakeup_calendar transmit_calendar{"transmit_calendar"};
  // RTL transaction recording (run.record_rtl_dir), owned by the run; null: off, and the blocks are not wrapped.
  transaction_log* rtl_log = nullptr;
  lockstep_sink lockstep;
  // Called by the fabric builder after each host it builds, with the count so far; the run's memory guard
  // (testbench/memory_guard.h) may throw from it to stop a build that will not fit. Empty: not called.
  std::function<void(size_t built)> host_built;
};

}  // namespace fabricsim::core
