// What every block of one simulation shares: the packet pool, the statistics registry and the run's seed.
// Passed by reference at construction; there is no global simulator state.
#pragma once

#include <cstdint>

#include "sc_models/core/packet_pool.h"
#include "sc_models/core/stats.h"

namespace fabricsim::core {

struct sim_context {
  packet_pool pool;
  stats_registry stats;
  uint64_t seed = 1;
  uint64_t packet_hops = 0;  // packets delivered across any link: the speed figure's numerator
  uint64_t events = 0;       // timed kernel events the models were woken by (link deliveries, NIC transmits)
};

}  // namespace fabricsim::core
