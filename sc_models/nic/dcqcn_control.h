// nic.cc dcqcn: the receiver's notification point sends CNPs for CE-marked arrivals and each QP's reaction
// point (rtl/dcqcn_rp.sv Verilated, or its C++ model, by nic.dcqcn_model) sets the QP's rate.
#pragma once

#include <memory>

#include "sc_models/nic/congestion_control.h"

namespace fabricsim::nic {

std::unique_ptr<congestion_control> make_dcqcn_control(const supernic_params& params, const cc_context& ctx);

}  // namespace fabricsim::nic
