// HPCC-style window control from in-band telemetry (specification in hpcc.h).
#include "sc_models/nic/hpcc.h"

#include <algorithm>
#include <string>

namespace fabricsim::nic {

void hpcc_params::visit(core::param_visitor& v) {
  v.field({"eta", "", "target utilization of the most loaded hop (HPCC eta)", 0.5, 1.0}, eta);
  v.field({"max_stage", "steps", "additive steps before a multiplicative update is forced (HPCC maxStage)", 0, 100},
          max_stage);
  v.field({"w_ai_bytes", "bytes", "additive window step W_AI", 1, 1e7}, w_ai_bytes);
  v.field({"base_rtt_us", "us", "base RTT T of the longest path; the line-rate window is B T", 0.1, 1e4}, base_rtt_us);
  v.field({"line_rate_mbps", "Mb/s", "the NIC's port rate (window ceiling line rate x T)", 1, 4e6}, line_rate_mbps);
  v.field({"min_window_bytes", "bytes", "floor of the window", 1, 1e9}, min_window_bytes);
}

hpcc_cc::hpcc_cc(const hpcc_params& p) : m_p(p) {
  core::check_ranges(m_p, "hpcc");
  m_t_s = m_p.base_rtt_us * 1e-6;
  m_w_max = double(m_p.line_rate_mbps) * 1e6 / 8.0 * m_t_s;
  core::require(double(m_p.min_window_bytes) <= m_w_max, "hpcc",
                "min_window_bytes " + std::to_string(m_p.min_window_bytes) + " exceeds line rate x base RTT (" +
                    std::to_string(uint64_t(m_w_max)) + " bytes)");
  reset();
}

void hpcc_cc::reset() {
  m_w = m_wc = m_w_max;  // a new flow starts at line rate
  m_u = 0;
  m_stage = m_updates = 0;
  m_have_last = m_have_update_psn = false;
  m_hops = 0;
}

double hpcc_cc::compute_window(double u, bool update_wc) {
  double w;
  if (u >= m_p.eta || m_stage >= m_p.max_stage) {
    w = m_wc / (u / m_p.eta) + double(m_p.w_ai_bytes);
    if (update_wc) {
      m_stage = 0;
      m_wc = std::clamp(w, double(m_p.min_window_bytes), m_w_max);
    }
  } else {
    w = m_wc + double(m_p.w_ai_bytes);
    if (update_wc) {
      ++m_stage;
      m_wc = std::clamp(w, double(m_p.min_window_bytes), m_w_max);
    }
  }
  return std::clamp(w, double(m_p.min_window_bytes), m_w_max);
}

void hpcc_cc::on_ack(const core::int_record* records, unsigned hops, uint32_t ack_psn, uint32_t next_psn) {
  hops = std::min<unsigned>(hops, core::max_int_hops);
  if (hops == 0) return;
  if (!m_have_last || hops != m_hops) {  // a rate needs two records of the same path
    std::copy(records, records + hops, m_last.begin());
    m_hops = hops;
    m_have_last = true;
    return;
  }
  double u = -1.0, tau_s = 0.0;
  for (unsigned i = 0; i < hops; ++i) {
    const core::int_record& now = records[i];
    const core::int_record& last = m_last[i];
    if (!(last.at < now.at)) continue;  // no newer record for this hop (a re-echo): nothing to measure
    if (now.tx_bytes < last.tx_bytes || now.rate_mbps != last.rate_mbps) {
      // Another port answered at this hop: the path changed (records carry no port id). Start over on it.
      std::copy(records, records + hops, m_last.begin());
      return;
    }
    const double dt_s = double((now.at - last.at).value) * 1e-12;
    const double b = double(now.rate_mbps) * 1e6 / 8.0;  // bytes/s
    const double tx_rate = double(now.tx_bytes - last.tx_bytes) / dt_s;
    const double ui = double(std::min(now.qlen_bytes, last.qlen_bytes)) / (b * m_t_s) + tx_rate / b;
    if (ui > u) {
      u = ui;
      tau_s = dt_s;
    }
  }
  if (u < 0) return;
  std::copy(records, records + hops, m_last.begin());
  tau_s = std::min(tau_s, m_t_s);
  m_u = (1.0 - tau_s / m_t_s) * m_u + tau_s / m_t_s * u;
  const bool update_wc = !m_have_update_psn || core::psn_before(m_last_update_psn, ack_psn) ||
                         m_last_update_psn == ack_psn;
  if (update_wc) {
    m_last_update_psn = next_psn;
    m_have_update_psn = true;
  }
  m_w = compute_window(m_u, update_wc);
  ++m_updates;
}

}  // namespace fabricsim::nic
