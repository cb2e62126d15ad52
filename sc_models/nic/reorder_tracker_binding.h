// The ports of a Verilated reorder tracker (rtl/reorder_tracker.sv, or a user's block meeting
// docs/rtl_contract.md) bound to the cycle-level port bundle, for verilated_block (sc_models/nic/verilated_block.h).
// Shared by the shipped adapter (reorder_tracker_rtl.cpp) and the run-time compiled user block
// (rtl/user_rtl_shim.cpp), so both are stepped the same way. Templates only: no Verilator header needed here.
#pragma once

#include "sc_models/nic/reorder_tracker.h"

namespace fabricsim::nic {

struct reorder_tracker_binding {
  using inputs = reorder_tracker_inputs;
  using outputs = reorder_tracker_outputs;
  static constexpr const char* name = "reorder_tracker";

  template <class V>
  static void drive(V& top, const inputs& in) {
    top.rst_ni = in.rst_n;
    top.init_valid_i = in.init_valid;
    top.init_psn_i = in.init_psn & psn_mask;
    top.req_valid_i = in.in_valid;
    top.req_psn_i = in.in_psn & psn_mask;
  }

  template <class V>
  static outputs sample(const V& top) {
    outputs out;
    out.in_ready = top.req_ready_o;
    out.res_valid = top.rsp_valid_o;
    out.res_verdict = top.rsp_verdict_o;
    out.res_psn = top.rsp_psn_o;
    out.head_psn = top.head_psn_o;
    out.adv_valid = top.adv_valid_o;
    out.adv_psn = top.adv_psn_o;
    out.busy = top.busy_o;
    return out;
  }
};

}  // namespace fabricsim::nic
