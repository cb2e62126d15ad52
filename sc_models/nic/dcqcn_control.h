// nic.cc dcqcn: the receiver's notification point sends CNPs for CE-marked arrivals and each QP's reaction
// point (rtl/dcqcn_rp.sv Verilated, or its C++ model, by nic.dcqcn_model) sets the QP's rate.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sc_models/nic/block_timing.h"
#include "sc_models/nic/congestion_control.h"
#include "sc_models/nic/dcqcn_rp.h"

namespace fabricsim::nic {

std::unique_ptr<congestion_control> make_dcqcn_control(const supernic_params& params, const cc_context& ctx);

// The policy, open to variants that retune a QP's reaction point (nic.cc dcqcn_distance,
// dcqcn_distance_control.h). `label` names the policy in errors ("nic.cc <label>: ...").
class dcqcn_control : public congestion_control {
 public:
  dcqcn_control(const supernic_params& params, const cc_context& ctx, const char* label = "dcqcn");
  const char* name() const override { return "dcqcn"; }
  core::picoseconds timers(size_t q, core::picoseconds t) override;
  void on_cnp(size_t q, core::picoseconds t) override;
  core::picoseconds marked_arrival(uint32_t qpn, core::picoseconds t) override;
  void status(size_t q, qp_status& st) const override;

 protected:
  void on_add_qp(const std::string& qp_name, uint64_t line_rate_bps, core::picoseconds t) override;
  uint64_t rate_kbps(size_t q) const override { return m_rp[q]->outputs().rate_kbps; }
  void on_sent(size_t q, uint64_t wire_bytes, core::picoseconds t) override;

  // The reaction-point knobs every QP starts with (the preset and the nic.dcqcn_* knobs), its line rate aside.
  const dcqcn_params& reaction_point() const { return m_params; }
  const dcqcn_rate_engine& engine(size_t q) const { return *m_rp[q]; }
  // Restarts q's reaction point at `t` with `p` at q's line rate (rate, alpha and counters as at reset) and
  // repaces q.
  void retune(size_t q, const dcqcn_params& p, core::picoseconds t);
  const cc_context& context() const { return m_ctx; }

 private:
  // Both blocks count cycles of the NIC's timestamp clock (1 GHz in their defaults: one cycle per ns).
  uint64_t cycles(core::picoseconds t) const { return cycles_at(t, m_params.clock_mhz); }
  void occupy(const dcqcn_rate_engine& rp, core::picoseconds t);

  const cc_context m_ctx;
  const std::string m_model;   // nic.dcqcn_model
  uint32_t m_mutant = 0;       // nic.rtl_mutant dcqcn_rp:N
  const uint64_t m_np_origin;  // nic.cnp_time_origin_cycles
  dcqcn_params m_params;
  std::unique_ptr<notification_point> m_np;
  std::vector<std::unique_ptr<dcqcn_rate_engine>> m_rp;  // per QP
  std::vector<uint64_t> m_line_mbps;                     // per QP: its port's rate
  block_timing m_rp_block;                               // at nic.clock_mhz
};

}  // namespace fabricsim::nic
