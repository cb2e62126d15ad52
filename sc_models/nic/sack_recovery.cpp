// SACK loss recovery: once a PSN sack_reorder_packets beyond an unmarked one has been SACKed, the unmarked
// one is lost (reordering alone does not go that deep) and is resent, once: all the holes of a burst of
// losses are known within one round trip, where a NAK names only the hole the responder's head stands at.
// A lost resend is found by the timeout, which resends una and the tail probe (as selective does) and
// searches every hole again.
#include "sc_models/nic/sack_recovery.h"

#include "sc_models/nic/selective_recovery.h"
#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {
namespace {

class sack_recovery final : public selective_recovery {
 public:
  sack_recovery(const supernic_params& params, recovery_host& host, const std::string& instance,
                core::stats_registry* stats)
      : selective_recovery(params, host, instance, stats),
        m_board_psns(2 * params.reorder_window),
        m_reorder(uint32_t(params.sack_reorder_packets)) {}
  bool on_sack(size_t q, uint32_t psn, core::picoseconds t) override;
  bool sacks() const override { return true; }
  const char* name() const override { return "sack"; }

 private:
  // Which PSNs the responder holds (slot PSN mod size, cleared as una passes), the highest SACKed PSN, and the
  // PSN the search for holes goes on from (every hole before it has been queued once).
  struct scoreboard {
    std::vector<uint8_t> sacked;
    uint32_t high = 0;
    bool any = false;
    uint32_t scan = 0;
    uint8_t& slot(uint32_t psn) { return sacked[psn & (sacked.size() - 1)]; }
    uint8_t slot(uint32_t psn) const { return sacked[psn & (sacked.size() - 1)]; }
  };
  void on_add_qp() override {
    selective_recovery::on_add_qp();
    m_boards.push_back({std::vector<uint8_t>(m_board_psns, 0)});
  }
  bool held(size_t q, uint32_t psn) const override { return m_boards[q].slot(psn) != 0; }
  void resend_timeout(size_t q, send_queue& s, core::picoseconds t) override {
    selective_recovery::resend_timeout(q, s, t);
    m_boards[q].scan = s.una;  // resends may have been lost too: every hole again
    losses(q, t);
  }
  void on_progress(size_t q, const send_queue& s, uint32_t una) override {
    scoreboard& b = m_boards[q];  // the scoreboard forgets what is acknowledged
    for (uint32_t psn = s.una; psn != una; psn = core::psn_add(psn, 1)) b.slot(psn) = 0;
    if (b.any && !core::psn_before(b.high, una)) b.any = false;
  }
  void losses(size_t q, core::picoseconds t);  // queue the holes far enough below the highest SACK

  // The responder holds at most reorder_window PSNs beyond its head, and its head is at most one window of
  // ACKs ahead of una, so a SACK lies within two windows of una (one beyond is ignored, counted).
  const size_t m_board_psns;
  const uint32_t m_reorder;  // nic.sack_reorder_packets
  std::vector<scoreboard> m_boards;
};

bool sack_recovery::on_sack(size_t q, uint32_t psn, core::picoseconds t) {
  ++m_rx_sacks;
  const send_queue& s = m_host.recovery_sender(q);
  if (core::psn_before(psn, s.una) || !core::psn_before(psn, s.snd_max)) return true;  // stale or bogus
  scoreboard& b = m_boards[q];
  if (((psn - s.una) & core::psn_mask) >= b.sacked.size()) return false;
  b.slot(psn) = 1;
  if (!b.any || core::psn_before(b.high, psn)) b.high = psn;
  b.any = true;
  losses(q, t);
  return true;
}

void sack_recovery::losses(size_t q, core::picoseconds t) {
  scoreboard& b = m_boards[q];
  const send_queue& s = m_host.recovery_sender(q);
  if (!b.any || ((b.high - s.una) & core::psn_mask) < m_reorder) return;
  const uint32_t end = (b.high - m_reorder + 1) & core::psn_mask;  // data PSNs before it are lost if unmarked
  uint32_t psn = core::psn_before(b.scan, s.una) ? s.una : b.scan;
  if (!core::psn_before(psn, end)) return;
  core::ring<uint32_t>& resend = m_resend[q];
  bool queued = false;
  for (size_t i = s.find_wr(psn); i < s.wqes.size() && core::psn_before(psn, end); ++i) {
    const work_request& wr = s.wqes[i];
    const uint32_t after = core::psn_add(wr.last_psn(), 1);
    if (wr.op == rdma_op::read) {
      // Its responses are the READ re-issue rule's business; but its request is one packet standing for all
      // its PSNs, so when a later PSN has been SACKed while the request is neither SACKed nor cumulatively
      // acknowledged (and nothing has answered it), the request was lost: issue it again, once.
      if (core::psn_before(wr.last_psn(), b.high) && !b.slot(wr.first_psn) &&
          !core::psn_before(wr.first_psn, s.acked) && !wr.got[0] && wr.retransmitted == 0) {
        resend.push_back(wr.first_psn);
        ++m_sack_lost;
        queued = true;
      }
      psn = after;
      continue;
    }
    for (; psn != after && core::psn_before(psn, end); psn = core::psn_add(psn, 1)) {
      if (b.slot(psn)) continue;
      resend.push_back(psn);
      ++m_sack_lost;
      queued = true;
    }
  }
  b.scan = end;
  if (queued) m_host.recovery_wake(t);
}

}  // namespace

std::unique_ptr<loss_recovery> make_sack_recovery(const supernic_params& params, recovery_host& host,
                                                  const std::string& instance, core::stats_registry* stats) {
  return std::make_unique<sack_recovery>(params, host, instance, stats);
}

}  // namespace fabricsim::nic
