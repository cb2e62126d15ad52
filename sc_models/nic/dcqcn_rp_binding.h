// The ports of a Verilated DCQCN reaction point (rtl/dcqcn_rp.sv, or a user's block meeting
// docs/rtl_contract.md) bound to the cycle-level port bundle, for verilated_block
// (sc_models/nic/verilated_block.h). Shared by the shipped adapter (dcqcn_rp_rtl.cpp) and the run-time compiled
// user block (rtl/user_rtl_shim.cpp). Templates only: no Verilator header needed here.
#pragma once

#include "sc_models/nic/dcqcn_rp_rtl.h"

namespace fabricsim::nic {

// The ports of rtl/dcqcn_rp.sv, for verilated_block.
struct dcqcn_rp_binding {
  using inputs = dcqcn_rp_inputs;
  using outputs = dcqcn_rp_ports;
  static constexpr const char* name = "dcqcn_rp";

  template <class V>
  static void drive(V& top, const inputs& in) {
    const dcqcn_config& c = in.cfg;
    top.rst_ni = in.rst_n;
    top.cfg_line_rate_i = c.line_rate_kbps;
    top.cfg_min_rate_i = c.min_rate_kbps;
    top.cfg_ai_rate_i = c.ai_rate_kbps;
    top.cfg_hai_rate_i = c.hai_rate_kbps;
    top.cfg_min_dec_i = c.min_dec_q10;
    top.cfg_cut_shift_i = c.cut_shift;
    top.cfg_alpha_keep_i = c.alpha_keep_q10;
    top.cfg_initial_alpha_i = c.initial_alpha_q16;
    top.cfg_threshold_i = c.threshold;
    top.cfg_byte_reset_i = c.byte_reset;
    top.cfg_alpha_period_i = c.alpha_period;
    top.cfg_increase_period_i = c.increase_period;
    top.cfg_monitor_period_i = c.monitor_period;
    top.req_valid_i = in.req_valid;
    top.req_kind_i = in.req_kind;
    top.req_now_i = in.req_now;
    top.req_bytes_i = in.req_bytes;
  }

  template <class V>
  static outputs sample(const V& top) {
    outputs p;
    p.req_ready = top.req_ready_o;
    p.rsp_valid = top.rsp_valid_o;
    p.busy = top.busy_o;
    p.out.rate_kbps = top.rate_o;
    p.out.target_kbps = top.target_o;
    p.out.alpha_q16 = top.alpha_o;
    p.out.next_deadline = top.deadline_valid_o ? top.deadline_o : dcqcn_never;
    p.out.timer_count = top.timer_count_o;
    p.out.byte_count = top.byte_count_o;
    p.out.events = top.events_o;
    return p;
  }
};

}  // namespace fabricsim::nic
