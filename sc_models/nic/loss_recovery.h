// Loss recovery of the SuperNIC requester (IBTA RC, plus SACK after IRN): one scheme per NIC, chosen by
// nic.retransmission through make_loss_recovery, owning each queue pair's local ACK timer, its retry count
// and what it has to resend (the selective queue, the SACK scoreboard). The NIC tells it what happens (a data
// packet left, the oldest unacknowledged PSN moved, a NAK, a SACK, a READ response came) and asks it which
// PSN to send again; the go-back-N scheme rewinds the send queue instead (send_queue::seek).
//
// The timers: each QP has a deadline while anything is unacknowledged; the NIC keeps one wake-up for the
// earliest (wake_at) and runs expire() when it is due. QP deadlines only move later on progress; a wake-up
// that finds none expired re-arms for the new earliest, so there is never more than one timer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/ring.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"
#include "sc_models/nic/work_request.h"

namespace fabricsim::nic {

struct supernic_params;

// What a scheme asks of its NIC.
class recovery_host {
 public:
  virtual ~recovery_host() = default;
  virtual send_queue& recovery_sender(size_t q) = 0;  // QP q's requester
  // QP q's retries are exhausted: the NIC moves it to the error state (and calls loss_recovery::forget).
  virtual void recovery_failed(size_t q) = 0;
  virtual void recovery_wake(core::picoseconds at) = 0;  // a timer is armed, or a resend waits, for `at`
  virtual void recovery_idle() = 0;  // the last running timer stopped: its pending wake-up may be withdrawn
};

class loss_recovery {
 public:
  static constexpr core::picoseconds never{UINT64_MAX};
  virtual ~loss_recovery() = default;
  loss_recovery(const loss_recovery&) = delete;
  loss_recovery& operator=(const loss_recovery&) = delete;

  // A new queue pair, index `q` = the number added before it (create_qp order).
  void add_qp();
  size_t qps() const { return m_qps.size(); }

  // The local ACK timeout (nic.rto_us).
  core::picoseconds rto() const { return m_rto; }
  core::picoseconds deadline(size_t q) const { return m_qps[q].deadline; }
  uint64_t retries(size_t q) const { return m_qps[q].retries; }
  // When the NIC's one timer wake-up is due (the earliest deadline as of the last arm or expire), or never.
  core::picoseconds wake_at() const { return m_wake; }
  // Every QP whose deadline is at or before `t`: a timeout, counted as a retry, after which the scheme
  // resends (and the deadline is `t` + rto) or the QP fails.
  void expire(core::picoseconds t);

  // A data packet of q was sent at `t`: the timer runs while anything is unacknowledged.
  void sent(size_t q, core::picoseconds t);
  // q's oldest unacknowledged PSN moves forward to `una` at `t` (called before the send queue's una moves):
  // the retry count restarts, and the timer with it (stopped once `una` is the send queue's snd_max).
  void progress(size_t q, uint32_t una, core::picoseconds t);
  // A READ response came for q: the responder is answering, so the retry count and a running timer restart.
  void answered(size_t q, core::picoseconds t);
  // After an RNR NAK, q waits until `until`: nothing queued is resent, and no timeout comes before
  // `until` + rto.
  void hold(size_t q, core::picoseconds until);
  // q failed: its timer stops and nothing is resent.
  void forget(size_t q);

  // A NAK (PSN sequence error) for `psn` at `t`, after its implicit ACK of the PSNs before it. A NAK for an
  // outstanding PSN counts a retry, then the scheme resends.
  void on_nak(size_t q, uint32_t psn, core::picoseconds t);
  // An ACK at `t` also says the responder holds `psn` out of order (sack only; the others ignore it). False:
  // `psn` lies beyond the scoreboard (the NIC counts it as sack_overflow).
  virtual bool on_sack(size_t /*q*/, uint32_t /*psn*/, core::picoseconds /*t*/) { return true; }
  // q's READ at the front misses the response at una while later ones came: re-issue it from there (once per
  // missing PSN, a retry).
  void reissue_read(size_t q, core::picoseconds t);

  // The next PSN of q to send again before new packets and the work request holding it; false when none is
  // queued (go-back-N never queues: it rewinds the send queue). PSNs acknowledged, SACKed or answered since
  // they were queued are skipped.
  virtual bool next_resend(size_t /*q*/, uint32_t* /*psn*/, size_t* /*wr*/) { return false; }
  virtual bool resend_queued(size_t /*q*/) const { return false; }
  // A READ request sent again asks for the rest of the message (go-back-N), not only for the run of missing
  // responses that starts at its PSN.
  virtual bool whole_read() const { return false; }
  // The responder's side of the scheme: SACK every out-of-order arrival (sack), or NAK gaps (the others).
  virtual bool sacks() const { return false; }
  virtual const char* name() const = 0;

 protected:
  // `instance`: the NIC (its statistics: timeouts, and a scheme's own); `stats` null: not registered.
  loss_recovery(const supernic_params& params, recovery_host& host, const std::string& instance,
                core::stats_registry* stats);
  virtual void on_add_qp() {}
  // The scheme's answer to a NAK for the outstanding `psn`, to a timeout at `t`, and to a missing READ response at
  // the send queue's una (the retry is counted already).
  virtual void resend_nak(size_t q, send_queue& s, uint32_t psn) = 0;
  virtual void resend_timeout(size_t q, send_queue& s, core::picoseconds t) = 0;
  virtual void resend_read(size_t q, send_queue& s) = 0;
  // q's una moves from the send queue's una to `una` (the scoreboard forgets what is acknowledged).
  virtual void on_progress(size_t /*q*/, const send_queue& /*s*/, uint32_t /*una*/) {}
  virtual void drop_resends(size_t /*q*/) {}  // nothing queued is resent (RNR wait, failure)
  recovery_host& m_host;
  // sack's counters, registered (zero) with every scheme so that every report has the same fields.
  uint64_t m_rx_sacks = 0, m_sack_lost = 0;

 private:
  struct qp_timer {
    core::picoseconds deadline{UINT64_MAX};  // local ACK timeout, while anything is unacknowledged
    uint64_t retries = 0;                    // since the last progress
    uint32_t reissued_psn = 0;               // the missing response a READ was last re-issued for (once per gap)
    bool reissued = false;
  };
  void arm(size_t q, core::picoseconds at);
  void disarm(size_t q);
  bool retry(size_t q);  // counts a retry; false (and the QP failed) when nic.retry_count is exhausted

  std::vector<qp_timer> m_qps;
  const core::picoseconds m_rto;
  const uint64_t m_retry_count;
  core::picoseconds m_wake{UINT64_MAX};
  uint64_t m_running = 0;  // QPs with a deadline
  uint64_t m_timeouts = 0;
};

// The scheme named `name` (nic.retransmission): "go_back_n", "selective" or "sack", for the NIC `instance`,
// asking `host` (which must outlive it); config_error naming nic.retransmission and the choices for an unknown
// name.
std::unique_ptr<loss_recovery> make_loss_recovery(const std::string& name, const supernic_params& params,
                                                  recovery_host& host, const std::string& instance,
                                                  core::stats_registry* stats);
// The names make_loss_recovery knows, in the order nic.retransmission lists them.
const std::vector<std::string>& loss_recovery_names();

}  // namespace fabricsim::nic
