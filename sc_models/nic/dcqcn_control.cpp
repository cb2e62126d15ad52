// nic.cc dcqcn: the notification point (cnp_gen) and one DCQCN reaction point (dcqcn_rp) per queue pair.
#include "sc_models/nic/dcqcn_control.h"

#include <cmath>

#include "sc_models/nic/block_lockstep.h"
#include "sc_models/nic/block_recording.h"

namespace fabricsim::nic {

namespace {

// The preset nic.dcqcn_preset names, with each knob set over it (-1 keeps the preset's value).
dcqcn_params reaction_point_params(const supernic_params& params) {
  dcqcn_params d = dcqcn_preset(params.dcqcn_preset);
  auto over = [](double v, uint64_t& knob) {
    if (v >= 0) knob = uint64_t(std::llround(v));
  };
  over(params.dcqcn_rpg_time_reset_us, d.rpg_time_reset_us);
  over(params.dcqcn_rpg_byte_reset, d.rpg_byte_reset);
  over(params.dcqcn_rpg_threshold, d.rpg_threshold);
  over(params.dcqcn_rpg_ai_rate_mbps, d.rpg_ai_rate_mbps);
  over(params.dcqcn_rpg_hai_rate_mbps, d.rpg_hai_rate_mbps);
  over(params.dcqcn_rpg_min_rate_mbps, d.rpg_min_rate_mbps);
  over(params.dcqcn_rpg_gd, d.rpg_gd);
  over(params.dcqcn_rpg_min_dec_fac, d.rpg_min_dec_fac);
  over(params.dcqcn_dce_tcp_g, d.dce_tcp_g);
  over(params.dcqcn_dce_tcp_rtt_us, d.dce_tcp_rtt_us);
  over(params.dcqcn_initial_alpha, d.initial_alpha);
  over(params.dcqcn_rate_reduce_monitor_period_us, d.rate_reduce_monitor_period_us);
  return d;
}

}  // namespace

dcqcn_control::dcqcn_control(const supernic_params& params, const cc_context& ctx, const char* label)
    : congestion_control(true, false),
      m_ctx(ctx),
      m_model(params.dcqcn_model),
      m_np_origin(params.cnp_time_origin_cycles),
      m_rp_block(ctx.instance, "dcqcn_rp", ctx.clock_mhz, ctx.stats) {
  try {
    m_params = reaction_point_params(params);
    m_np = std::make_unique<notification_point>(params, ctx);
    m_mutant = parse_rtl_mutant(params.rtl_mutant, "nic.rtl_mutant").of("dcqcn_rp");
    make_nic_dcqcn_rate_engine(m_model, m_params, m_mutant, {ctx.instance, "", nullptr});  // fail here, naming this NIC
  } catch (const core::config_error& e) {
    throw core::config_error(ctx.instance + ": nic.cc " + label + ": " + e.what());
  }
}

core::picoseconds dcqcn_control::timers(size_t q, core::picoseconds t) {
  dcqcn_rate_engine& rp = *m_rp[q];
  const uint64_t now = cycles(t);
  if (rp.next_deadline() <= now) {
    rp.advance(now);
    occupy(rp, t);
    repace(q);
  }
  const uint64_t d = rp.next_deadline();
  if (d == dcqcn_never) return never;
  // Cycles of clock_mhz to picoseconds, rounded up so that the wake-up finds the timer due.
  const uint64_t mhz = m_params.clock_mhz;
  return core::picoseconds(uint64_t(((unsigned __int128)d * 1'000'000 + mhz - 1) / mhz));
}

void dcqcn_control::on_cnp(size_t q, core::picoseconds t) {
  m_rp[q]->cnp(cycles(t));
  occupy(*m_rp[q], t);
  repace(q);  // the gap after the last packet stretches to the cut rate
}

core::picoseconds dcqcn_control::marked_arrival(uint32_t qpn, core::picoseconds t) {
  // One CNP per interval per flow (or port); its counter started at nic.cnp_time_origin_cycles.
  return m_np->arrival(qpn, t, m_np_origin + cycles(t));
}

void dcqcn_control::status(size_t q, qp_status& st) const {
  const dcqcn_rate_engine& rp = *m_rp[q];
  st.paced = true;
  st.rate_mbps = rp.rate_mbps();
  st.target_mbps = rp.target_mbps();
  st.alpha = double(rp.alpha()) / 65536.0;
}

void dcqcn_control::on_add_qp(const std::string& qp_name, uint64_t line_rate_bps, core::picoseconds t) {
  core::require(line_rate_bps > 0, m_ctx.instance,
                "create_qp: connect the NIC's link first (DCQCN needs its line rate)");
  dcqcn_params rp = m_params;
  rp.line_rate_mbps = line_rate_bps / 1'000'000;  // the port's rate, whatever the preset's testbed
  // The QP's number: this is the qps()-th create_qp() of the NIC (add_qp counts it after this call).
  const std::string qp = "qp " + std::to_string(supernic::qpn_of(qps()));
  std::unique_ptr<dcqcn_rate_engine> e =
      make_nic_dcqcn_rate_engine(m_model, rp, m_mutant, {m_ctx.instance, qp, m_ctx.lockstep});
  if (m_ctx.rtl_log) e = record_dcqcn_rate_engine(std::move(e), rp, *m_ctx.rtl_log, qp_name + ".dcqcn_rp");
  e->reset(rp, cycles(t));
  m_rp.push_back(std::move(e));
  m_line_mbps.push_back(rp.line_rate_mbps);
}

void dcqcn_control::on_sent(size_t q, uint64_t wire_bytes, core::picoseconds t) {
  // The reaction point's byte counter (its bytes input is 16 bits wide).
  m_rp[q]->sent(uint32_t(std::min<uint64_t>(wire_bytes, 65535)), cycles(t));
  occupy(*m_rp[q], t);
}

void dcqcn_control::retune(size_t q, const dcqcn_params& p, core::picoseconds t) {
  dcqcn_params rp = p;
  rp.line_rate_mbps = m_line_mbps[q];
  m_rp[q]->reset(rp, cycles(t));
  occupy(*m_rp[q], t);
  repace(q);
}

// The NIC's one reaction-point datapath (per-QP state, one transaction at a time, as the reorder tracker)
// took the transaction just made at `t` for the cycles the block reported (rtl/dcqcn_rp.sv: k + 2 for a
// request that finds k timers due); no paced packet of this NIC starts while it is busy. The transaction's
// result is applied at once (early by those cycles).
void dcqcn_control::occupy(const dcqcn_rate_engine& rp, core::picoseconds t) {
  m_rp_block.take(t, rp.last_cycles());
  hold_sends_until(m_rp_block.free_at());
}

std::unique_ptr<congestion_control> make_dcqcn_control(const supernic_params& params, const cc_context& ctx) {
  return std::make_unique<dcqcn_control>(params, ctx);
}

}  // namespace fabricsim::nic
