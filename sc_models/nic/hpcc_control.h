// nic.cc hpcc: data packets ask for in-band telemetry, the responder echoes the records in its ACK and each
// QP's HPCC-style window (sc_models/nic/hpcc.h) limits its inflight bytes and paces it at W / T.
#pragma once

#include <memory>

#include "sc_models/nic/congestion_control.h"

namespace fabricsim::nic {

std::unique_ptr<congestion_control> make_hpcc_control(const supernic_params& params, const cc_context& ctx);

}  // namespace fabricsim::nic
