// nic.cc hpcc: one HPCC-style window (hpcc_cc) per queue pair, fed by the telemetry its ACKs echo.
#include "sc_models/nic/hpcc_control.h"

#include "sc_models/nic/hpcc.h"

namespace fabricsim::nic {

namespace {

class hpcc_control final : public congestion_control {
 public:
  hpcc_control(const supernic_params& params, const cc_context& ctx)
      : congestion_control(true, true), m_instance(ctx.instance) {
    m_params.eta = params.hpcc_eta;
    m_params.max_stage = params.hpcc_max_stage;
    m_params.w_ai_bytes = params.hpcc_w_ai_bytes;
    m_params.base_rtt_us = params.hpcc_base_rtt_us;
  }
  const char* name() const override { return "hpcc"; }

  bool window_full(size_t q, uint64_t inflight_bytes) const override {
    // As HPCC's reference implementation: a packet may go while fewer than W bytes are in flight (so the
    // last one may overshoot W by less than a packet); with 16 flows into one 400G port W is ~3 packets and
    // a stricter rule would round every window down by up to one packet.
    return double(inflight_bytes) >= m_w[q].window_bytes();
  }
  bool on_ack(size_t q, const core::int_record* records, unsigned hops, uint32_t ack_psn, uint32_t snd_max,
              core::picoseconds /*t*/) override {
    // Telemetry echoed from the data packet: a new window and pace; the window may have room again.
    if (hops > 0) {
      m_w[q].on_ack(records, hops, ack_psn, snd_max);
      repace(q);
    }
    return true;
  }
  void status(size_t q, qp_status& st) const override {
    st.paced = true;
    st.rate_mbps = st.target_mbps = m_w[q].rate_mbps();
    st.window_bytes = m_w[q].window_bytes();
    st.utilization = m_w[q].utilization();
  }

 protected:
  void on_add_qp(const std::string&, uint64_t line_rate_bps, core::picoseconds) override {
    core::require(line_rate_bps > 0, m_instance, "create_qp: connect the NIC's link first (HPCC needs its line rate)");
    hpcc_params hp = m_params;
    hp.line_rate_mbps = line_rate_bps / 1'000'000;
    try {
      m_w.emplace_back(hp);
    } catch (const core::config_error& e) {
      throw core::config_error(m_instance + ": nic.cc hpcc: " + e.what());
    }
  }
  uint64_t rate_kbps(size_t q) const override { return uint64_t(m_w[q].rate_mbps() * 1000.0); }

 private:
  const std::string m_instance;
  hpcc_params m_params;
  std::vector<hpcc_cc> m_w;  // per QP
};

}  // namespace

std::unique_ptr<congestion_control> make_hpcc_control(const supernic_params& params, const cc_context& ctx) {
  return std::make_unique<hpcc_control>(params, ctx);
}

}  // namespace fabricsim::nic
