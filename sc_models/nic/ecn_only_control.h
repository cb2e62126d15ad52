// nic.cc ecn_only: a toy, not a product algorithm (the worked example of docs/extending_cc.md). The receiver
// sends CNPs for CE-marked arrivals as with DCQCN; each CNP multiplies the QP's rate by
// nic.ecn_only_cut_factor, and every nic.cnp_interval_ns without a CNP adds nic.ecn_only_ai_mbps back, up to
// the line rate.
#pragma once

#include <memory>

#include "sc_models/nic/congestion_control.h"

namespace fabricsim::nic {

std::unique_ptr<congestion_control> make_ecn_only_control(const supernic_params& params, const cc_context& ctx);

}  // namespace fabricsim::nic
