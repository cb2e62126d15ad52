// DCQCN reaction point of a RoCEv2 NIC: C++ reference model, written from the specification in
// sc_models/nic/dcqcn_rp.h. Each transaction is resolved completely at once; last_cycles() is what
// rtl/dcqcn_rp.sv's cycle timing rule gives for it (1 for an init, k + 2 for a request that finds k timers due).
#pragma once

#include <cstdint>

#include "sc_models/nic/dcqcn_rp.h"

namespace fabricsim::nic {

class dcqcn_rp_ref final : public dcqcn_rate_engine {
 public:
  explicit dcqcn_rp_ref(const dcqcn_params& params, uint64_t now_cycles = 0) { reset(params, now_cycles); }
  dcqcn_rp_ref(const dcqcn_rp_ref&) = delete;
  dcqcn_rp_ref& operator=(const dcqcn_rp_ref&) = delete;

  void reset(const dcqcn_params& params, uint64_t now_cycles = 0) override;
  void cnp(uint64_t now_cycles) override;
  void sent(uint32_t bytes, uint64_t now_cycles) override;
  void advance(uint64_t now_cycles) override;

  const dcqcn_outputs& outputs() const override { return m_out; }
  const char* kind() const override { return "ref"; }
  uint64_t last_cycles() const override { return m_last_cycles; }

  const dcqcn_config& config() const { return m_cfg; }

 private:
  void begin(uint64_t now);  // checks time, clears the events, fires every timer due by now
  void increase_event();     // fast recovery / additive / hyper, from the current counts
  void publish();            // state -> m_out

  dcqcn_config m_cfg;
  uint64_t m_now = 0;
  uint32_t m_rate = 0;    // kb/s
  uint32_t m_target = 0;  // kb/s
  uint32_t m_alpha = 0;   // Q0.16
  bool m_alpha_armed = false;
  uint64_t m_alpha_deadline = 0;
  bool m_increase_armed = false;
  uint64_t m_increase_deadline = 0;
  uint32_t m_timer_count = 0;
  uint32_t m_byte_count = 0;
  uint32_t m_byte_acc = 0;
  uint64_t m_last_cut = 0;
  uint32_t m_events = 0;
  uint64_t m_last_cycles = 1;
  dcqcn_outputs m_out;
};

}  // namespace fabricsim::nic
