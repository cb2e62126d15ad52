// Counters the SuperNIC's requester and responder both add to: one statistic each, owned and registered by the
// NIC (sc_models/nic/supernic.cpp), handed to the units by reference.
#pragma once

#include <cstdint>

namespace fabricsim::nic {

struct shared_counters {
  uint64_t access_errors = 0;     // rx_access_errors: a packet for an unregistered or out-of-range address
  uint64_t placed_bytes = 0;      // placed_bytes: payload placed (WRITEs and SENDs at the responder, READ responses)
  uint64_t sack_overflow = 0;     // sack_overflow: out-of-order arrivals not SACKed, or SACKs beyond the scoreboard
  uint64_t tx_payload_bytes = 0;  // tx_payload_bytes: payload sent (WRITEs, SENDs, READ responses)
};

}  // namespace fabricsim::nic
