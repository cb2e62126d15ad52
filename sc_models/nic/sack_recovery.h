// SACK loss recovery (not IBTA; after IRN, Mittal et al., SIGCOMM 2018): the responder answers every
// out-of-order arrival with an ACK that also names it; the requester marks it on a scoreboard and resends
// each PSN the SACKs show missing, once.
#pragma once

#include "sc_models/nic/loss_recovery.h"

namespace fabricsim::nic {

// nic.retransmission sack (make_loss_recovery).
std::unique_ptr<loss_recovery> make_sack_recovery(const supernic_params& params, recovery_host& host,
                                                  const std::string& instance, core::stats_registry* stats);

}  // namespace fabricsim::nic
