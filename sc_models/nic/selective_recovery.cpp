// Selective loss recovery: the resend queue of each QP.
#include "sc_models/nic/selective_recovery.h"

namespace fabricsim::nic {

void selective_recovery::queue(size_t q, uint32_t psn) {
  core::ring<uint32_t>& r = m_resend[q];
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i] == psn) return;
  r.push_back(psn);
}

bool selective_recovery::next_resend(size_t q, uint32_t* psn, size_t* wr) {
  core::ring<uint32_t>& r = m_resend[q];
  const send_queue& s = m_host.recovery_sender(q);
  while (!r.empty()) {
    const uint32_t p = r.front();
    r.pop_front();
    if (core::psn_before(p, s.una)) continue;  // acknowledged since it was asked for
    const size_t i = s.find_wr(p);
    if (i == s.wqes.size()) continue;  // cannot happen: every unacknowledged PSN has its work request
    const work_request& w = s.wqes[i];
    // SACKed since it was queued (a READ's request may be held there while a response is what is missing).
    if (w.op != rdma_op::read && held(q, p)) continue;
    // A READ response that has come since is not asked for again.
    if (w.op == rdma_op::read && w.got[(p - w.first_psn) & core::psn_mask]) continue;
    *psn = p;
    *wr = i;
    return true;
  }
  return false;
}

std::unique_ptr<loss_recovery> make_selective_recovery(const supernic_params& params, recovery_host& host,
                                                       const std::string& instance, core::stats_registry* stats) {
  return std::make_unique<selective_recovery>(params, host, instance, stats);
}

}  // namespace fabricsim::nic
