// Loss recovery of the SuperNIC requester: the timers and the retry count every scheme shares, and the factory.
#include "sc_models/nic/loss_recovery.h"

#include "sc_models/nic/go_back_n_recovery.h"
#include "sc_models/nic/policy_table.h"
#include "sc_models/nic/sack_recovery.h"
#include "sc_models/nic/selective_recovery.h"
#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {

loss_recovery::loss_recovery(const supernic_params& params, recovery_host& host, const std::string& instance,
                             core::stats_registry* stats)
    : m_host(host), m_rto(core::picoseconds::from_ns(params.rto_us * 1e3)), m_retry_count(params.retry_count) {
  if (stats == nullptr) return;
  stats->counter(instance, "timeouts", "events", "local ACK timeouts (retransmission timer expiries)", &m_timeouts);
  stats->counter(instance, "rx_sacks", "packets", "retransmission sack: SACKs received", &m_rx_sacks);
  stats->counter(instance, "sack_lost", "packets",
                 "retransmission sack: PSNs taken as lost from SACKs (each resent once)", &m_sack_lost);
}

void loss_recovery::add_qp() {
  m_qps.push_back({});
  on_add_qp();
}

void loss_recovery::arm(size_t q, core::picoseconds at) {
  qp_timer& r = m_qps[q];
  if (r.deadline == never) ++m_running;
  r.deadline = at;
  if (at < m_wake) {
    m_wake = at;
    m_host.recovery_wake(at);
  }
}

void loss_recovery::disarm(size_t q) {
  qp_timer& r = m_qps[q];
  if (r.deadline == never) return;
  r.deadline = never;
  if (--m_running > 0) return;
  // The last timer stopped: the NIC withdraws its pending timer wake-up, so that an idle NIC leaves no event
  // behind (a run ends at its last real event, not one RTO later).
  m_wake = never;
  m_host.recovery_idle();
}

bool loss_recovery::retry(size_t q) {
  if (++m_qps[q].retries <= m_retry_count) return true;
  m_host.recovery_failed(q);
  return false;
}

void loss_recovery::expire(core::picoseconds t) {
  m_wake = never;
  for (size_t q = 0; q < m_qps.size(); ++q) {
    qp_timer& r = m_qps[q];
    if (r.deadline <= t) {
      ++m_timeouts;
      if (retry(q)) {
        resend_timeout(q, m_host.recovery_sender(q), t);
        r.deadline = t + m_rto;
      }
    }
    if (r.deadline < m_wake) m_wake = r.deadline;
  }
}

void loss_recovery::sent(size_t q, core::picoseconds t) {
  if (m_qps[q].deadline == never) arm(q, t + m_rto);
}

void loss_recovery::progress(size_t q, uint32_t una, core::picoseconds t) {
  const send_queue& s = m_host.recovery_sender(q);
  on_progress(q, s, una);
  m_qps[q].retries = 0;
  if (una == s.snd_max)
    disarm(q);
  else
    arm(q, t + m_rto);
}

void loss_recovery::answered(size_t q, core::picoseconds t) {
  m_qps[q].retries = 0;
  if (m_qps[q].deadline != never) arm(q, t + m_rto);
}

void loss_recovery::hold(size_t q, core::picoseconds until) {
  drop_resends(q);
  arm(q, until + m_rto);
}

void loss_recovery::forget(size_t q) {
  disarm(q);
  drop_resends(q);
}

void loss_recovery::on_nak(size_t q, uint32_t psn, core::picoseconds t) {
  send_queue& s = m_host.recovery_sender(q);
  // Only a NAK for an outstanding PSN asks for anything (a stale one names a PSN already acknowledged). It
  // may lie beyond una when una waits on an earlier READ's responses.
  if (core::psn_before(psn, s.una) || !core::psn_before(psn, s.snd_max)) return;
  if (!retry(q)) return;
  resend_nak(q, s, psn);
  m_host.recovery_wake(t);
}

void loss_recovery::reissue_read(size_t q, core::picoseconds t) {
  send_queue& s = m_host.recovery_sender(q);
  qp_timer& r = m_qps[q];
  if (r.reissued && r.reissued_psn == s.una) return;
  r.reissued = true;
  r.reissued_psn = s.una;
  if (!retry(q)) return;
  resend_read(q, s);
  m_host.recovery_wake(t);
}

namespace {

struct scheme {
  const char* name;
  std::unique_ptr<loss_recovery> (*make)(const supernic_params&, recovery_host&, const std::string&,
                                         core::stats_registry*);
};
// One line per scheme: its nic.retransmission name and its maker.
constexpr scheme schemes[] = {
    {"go_back_n", make_go_back_n_recovery},
    {"selective", make_selective_recovery},
    {"sack", make_sack_recovery},
};

}  // namespace

const std::vector<std::string>& loss_recovery_names() {
  static const std::vector<std::string> names = policy_names(schemes);
  return names;
}

std::unique_ptr<loss_recovery> make_loss_recovery(const std::string& name, const supernic_params& params,
                                                  recovery_host& host, const std::string& instance,
                                                  core::stats_registry* stats) {
  return find_policy(schemes, name, instance, "nic.retransmission").make(params, host, instance, stats);
}

}  // namespace fabricsim::nic
