// The ports of a Verilated CNP generator (rtl/cnp_gen.sv, or a user's block meeting docs/rtl_contract.md)
// bound to the cycle-level port bundle, for verilated_block (sc_models/nic/verilated_block.h). Shared by the
// shipped adapter (cnp_gen_rtl.cpp) and the run-time compiled user block (rtl/user_rtl_shim.cpp). Templates
// only: no Verilator header needed here.
#pragma once

#include "sc_models/nic/cnp_gen.h"

namespace fabricsim::nic {

struct cnp_gen_binding {
  using inputs = cnp_gen_inputs;
  using outputs = cnp_gen_outputs;
  static constexpr const char* name = "cnp_gen";

  template <class V>
  static void drive(V& top, const inputs& in) {
    top.rst_ni = in.rst_n;
    top.init_valid_i = in.init_valid;
    top.init_interval_i = in.init_interval;
    top.init_per_port_i = in.init_per_port;
    top.req_valid_i = in.in_valid;
    top.req_flow_i = in.in_flow & qpn_mask;
    top.req_now_i = in.in_now;
  }

  template <class V>
  static outputs sample(const V& top) {
    outputs out;
    out.in_ready = top.req_ready_o;
    out.res_valid = top.rsp_valid_o;
    out.res_emit = top.rsp_emit_o;
    out.res_flow = top.rsp_flow_o;
    out.cnp_count = top.cnp_count_o;
    out.suppressed_count = top.suppressed_count_o;
    out.busy = top.busy_o;
    return out;
  }
};

}  // namespace fabricsim::nic
