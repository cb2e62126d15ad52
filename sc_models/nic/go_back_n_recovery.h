// Go-back-N loss recovery (IBTA RC): a NAK or a timeout rewinds the requester's segmentation path, and
// everything from the lost PSN on is sent again, in order.
#pragma once

#include "sc_models/nic/loss_recovery.h"

namespace fabricsim::nic {

// nic.retransmission go_back_n (make_loss_recovery).
std::unique_ptr<loss_recovery> make_go_back_n_recovery(const supernic_params& params, recovery_host& host,
                                                       const std::string& instance, core::stats_registry* stats);

}  // namespace fabricsim::nic
