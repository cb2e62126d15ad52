// nic.cc ecn_only (toy): multiplicative cut per CNP, additive recovery per quiet CNP interval.
#include "sc_models/nic/ecn_only_control.h"

#include <algorithm>
#include <cmath>

namespace fabricsim::nic {

namespace {

class ecn_only_control final : public congestion_control {
 public:
  ecn_only_control(const supernic_params& params, const cc_context& ctx)
      : congestion_control(true, false),
        m_instance(ctx.instance),
        m_cut(params.ecn_only_cut_factor),
        m_ai_kbps(uint64_t(std::llround(params.ecn_only_ai_mbps * 1000.0))),
        m_period(core::picoseconds::from_ns(double(params.cnp_interval_ns))),
        m_np_origin(params.cnp_time_origin_cycles) {
    core::require(params.cnp_interval_ns > 0, m_instance,
                  "nic.cc ecn_only: nic.cnp_interval_ns must be above 0 (it is the rate-recovery period)");
    try {
      m_np = std::make_unique<notification_point>(params, ctx);
    } catch (const core::config_error& e) {
      throw core::config_error(m_instance + ": nic.cc ecn_only: " + e.what());
    }
  }
  const char* name() const override { return "ecn_only"; }

  core::picoseconds timers(size_t q, core::picoseconds t) override {
    if (recover(q, t)) repace(q);
    return m_qp[q].deadline;
  }
  void on_cnp(size_t q, core::picoseconds t) override {
    recover(q, t);
    rate& r = m_qp[q];
    r.kbps = std::max<uint64_t>(1, uint64_t(double(r.kbps) * m_cut));
    r.deadline = t + m_period;  // the recovery period restarts at each cut
    repace(q);
  }
  core::picoseconds marked_arrival(uint32_t qpn, core::picoseconds t) override {
    // cnp_gen's default time stamp: 1 GHz, one cycle per ns, counted from nic.cnp_time_origin_cycles.
    return m_np->arrival(qpn, t, m_np_origin + t.value / 1000);
  }
  void status(size_t q, qp_status& st) const override {
    st.paced = true;
    st.rate_mbps = double(m_qp[q].kbps) / 1000.0;
    st.target_mbps = double(m_qp[q].line_kbps) / 1000.0;
  }

 protected:
  void on_add_qp(const std::string&, uint64_t line_rate_bps, core::picoseconds) override {
    core::require(line_rate_bps > 0, m_instance,
                  "create_qp: connect the NIC's link first (ecn_only needs its line rate)");
    m_qp.push_back({line_rate_bps / 1000, line_rate_bps / 1000, never});
  }
  uint64_t rate_kbps(size_t q) const override { return m_qp[q].kbps; }
  void on_sent(size_t q, uint64_t, core::picoseconds t) override { recover(q, t); }

 private:
  struct rate {
    uint64_t kbps;               // the current rate
    uint64_t line_kbps;          // the ceiling
    core::picoseconds deadline;  // the next recovery step (never: at line rate)
  };
  // Every recovery step due by `t`; true if the rate changed.
  bool recover(size_t q, core::picoseconds t) {
    rate& r = m_qp[q];
    bool changed = false;
    while (r.deadline <= t) {
      r.kbps = std::min(r.line_kbps, r.kbps + m_ai_kbps);
      r.deadline = r.kbps == r.line_kbps ? never : r.deadline + m_period;
      changed = true;
    }
    return changed;
  }

  const std::string m_instance;
  const double m_cut;                // nic.ecn_only_cut_factor
  const uint64_t m_ai_kbps;          // nic.ecn_only_ai_mbps
  const core::picoseconds m_period;  // nic.cnp_interval_ns
  const uint64_t m_np_origin;        // nic.cnp_time_origin_cycles
  std::unique_ptr<notification_point> m_np;
  std::vector<rate> m_qp;
};

}  // namespace

std::unique_ptr<congestion_control> make_ecn_only_control(const supernic_params& params, const cc_context& ctx) {
  return std::make_unique<ecn_only_control>(params, ctx);
}

}  // namespace fabricsim::nic
