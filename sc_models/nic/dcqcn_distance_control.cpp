// nic.cc dcqcn_distance: DCQCN with each QP's time constants and window scaled by its measured base RTT
// (dcqcn_distance_control.h; our model, not NVIDIA's algorithm).
#include "sc_models/nic/dcqcn_distance_control.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sc_models/nic/dcqcn_control.h"

namespace fabricsim::nic {

double distance_scale(uint64_t base_rtt_ps, double ref_rtt_us, double max_scale) {
  return std::clamp(double(base_rtt_ps) / (ref_rtt_us * 1e6), 1.0, max_scale);
}

dcqcn_params distance_scaled(const dcqcn_params& base, double scale) {
  dcqcn_params p = base;
  // Timer periods are 32-bit counts of clock_mhz cycles, the byte counter a 32-bit accumulator; each is also
  // kept within its field's range (dcqcn_params::visit: periods up to 4e6 us, the byte counter up to 2^30),
  // which the reaction point checks when it restarts with these knobs.
  const double max_us = std::min(double(UINT32_MAX) / double(std::max<uint64_t>(p.clock_mhz, 1)), k_max_period_us);
  const auto times = [&](uint64_t& v, double limit) {
    v = uint64_t(std::min(std::llround(double(v) * scale), llround(std::floor(limit))));
  };
  times(p.rpg_time_reset_us, max_us);
  times(p.dce_tcp_rtt_us, max_us);
  times(p.rate_reduce_monitor_period_us, max_us);
  times(p.rpg_byte_reset, k_max_byte_reset);
  return p;
}

namespace {

class dcqcn_distance_control final : public dcqcn_control {
 public:
  dcqcn_distance_control(const supernic_params& params, const cc_context& ctx)
      : dcqcn_control(params, ctx, "dcqcn_distance"),
        m_ref_rtt_us(params.dcqcn_distance_ref_rtt_us),
        m_max_scale(params.dcqcn_distance_max_scale),
        m_window_bdp(params.dcqcn_distance_window_bdp) {}
  const char* name() const override { return "dcqcn_distance"; }

  core::picoseconds timers(size_t q, core::picoseconds t) override {
    tune(q, t);
    return dcqcn_control::timers(q, t);
  }
  bool window_full(size_t q, uint64_t inflight_bytes) const override {
    return m_path[q].window_bytes > 0 && inflight_bytes >= m_path[q].window_bytes;
  }
  bool on_ack(size_t q, const core::int_record*, unsigned, uint32_t ack_psn, uint32_t snd_max,
              core::picoseconds t) override {
    path& p = m_path[q];
    const bool covered = p.stage == probe::first_sent || (p.stage == probe::sent && !core::psn_before(ack_psn, p.psn));
    if (covered) {
      const uint64_t sample = t.value - p.sent_at.value;
      p.base_rtt_ps = p.base_rtt_ps == 0 ? sample : std::min(p.base_rtt_ps, sample);
      if (m_window_bdp > 0.0)
        p.window_bytes = uint64_t(m_window_bdp * double(p.line_bps) * double(p.base_rtt_ps) * 1e-12 / 8.0);
      p.stage = probe::armed;  // the next new PSN is the next probe
      p.psn = snd_max;
      tune(q, t);
    }
    return p.window_bytes > 0;  // the ACK may have made room in the window
  }
  void status(size_t q, qp_status& st) const override {
    dcqcn_control::status(q, st);
    st.window_bytes = double(m_path[q].window_bytes);
  }

 protected:
  void on_add_qp(const std::string& qp_name, uint64_t line_rate_bps, core::picoseconds t) override {
    dcqcn_control::on_add_qp(qp_name, line_rate_bps, t);
    m_path.push_back({});
    m_path.back().line_bps = line_rate_bps;
  }
  void on_sent(size_t q, uint64_t wire_bytes, core::picoseconds t) override {
    dcqcn_control::on_sent(q, wire_bytes, t);
    path& p = m_path[q];
    if (p.stage == probe::first || p.stage == probe::armed) {
      p.sent_at = t;
      p.stage = p.stage == probe::first ? probe::first_sent : probe::sent;
    }
  }

 private:
  // first: nothing sent yet; first_sent: the QP's first packet is out, any ACK covers it; armed: the next
  // packet sent is the probe (PSN `psn`, snd_max when armed); sent: the probe is out.
  enum class probe { first, first_sent, armed, sent };
  struct path {
    probe stage = probe::first;
    uint32_t psn = 0;
    core::picoseconds sent_at{};
    uint64_t base_rtt_ps = 0;   // smallest sample; 0: none yet
    uint64_t window_bytes = 0;  // 0: no window (none yet, or nic.dcqcn_distance_window_bdp 0)
    uint64_t line_bps = 0;
    bool tuned = false;  // the reaction point runs with the scaled knobs
  };

  // Once the base RTT is known the reaction point restarts (at line rate) with its knobs scaled, whatever its
  // rate: a QP cut before its first sample would otherwise stay plain DCQCN for as long as the congestion
  // lasts (docs/dcqcn.md, "dcqcn_distance").
  void tune(size_t q, core::picoseconds t) {
    path& p = m_path[q];
    if (p.tuned || p.base_rtt_ps == 0) return;
    p.tuned = true;
    const double s = distance_scale(p.base_rtt_ps, m_ref_rtt_us, m_max_scale);
    if (s > 1.0) retune(q, distance_scaled(reaction_point(), s), t);
  }

  const double m_ref_rtt_us, m_max_scale, m_window_bdp;
  std::vector<path> m_path;  // per QP
};

}  // namespace

std::unique_ptr<congestion_control> make_dcqcn_distance_control(const supernic_params& params, const cc_context& ctx) {
  return std::make_unique<dcqcn_distance_control>(params, ctx);
}

}  // namespace fabricsim::nic
