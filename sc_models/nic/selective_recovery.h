// Selective loss recovery (IBTA RC with a selective requester): each PSN a NAK names is resent alone, once,
// behind earlier resends; a timeout resends una and, as a tail probe, the highest PSN sent. sack
// (sack_recovery.h) extends it with a scoreboard.
#pragma once

#include "sc_models/nic/loss_recovery.h"

namespace fabricsim::nic {

class selective_recovery : public loss_recovery {
 public:
  selective_recovery(const supernic_params& params, recovery_host& host, const std::string& instance,
                     core::stats_registry* stats)
      : loss_recovery(params, host, instance, stats) {}
  bool next_resend(size_t q, uint32_t* psn, size_t* wr) override;
  bool resend_queued(size_t q) const override { return !m_resend[q].empty(); }
  const char* name() const override { return "selective"; }

 protected:
  void on_add_qp() override { m_resend.emplace_back(size_t(8)); }
  void resend_nak(size_t q, send_queue&, uint32_t psn) override { queue(q, psn); }
  // A lost LAST (whose loss no later packet can reveal) or a lost final ACK is settled by one timeout, since
  // whatever the responder answers to the two tells the requester where it stands.
  void resend_timeout(size_t q, send_queue& s, core::picoseconds) override {
    queue(q, s.una);
    queue(q, (s.snd_max - 1) & core::psn_mask);  // tail probe
  }
  void resend_read(size_t q, send_queue& s) override { queue(q, s.una); }
  void drop_resends(size_t q) override { m_resend[q].clear(); }
  // The responder holds `psn` already (sack): it is not resent.
  virtual bool held(size_t /*q*/, uint32_t /*psn*/) const { return false; }
  void queue(size_t q, uint32_t psn);  // once, behind earlier requests

  std::vector<core::ring<uint32_t>> m_resend;  // per QP: PSNs to send again, in the order they were asked for
};

// nic.retransmission selective (make_loss_recovery).
std::unique_ptr<loss_recovery> make_selective_recovery(const supernic_params& params, recovery_host& host,
                                                       const std::string& instance, core::stats_registry* stats);

}  // namespace fabricsim::nic
