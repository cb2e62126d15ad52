// The SuperNIC responder's acknowledgements and owed CNPs.
#include "sc_models/nic/ack_engine.h"

#include <algorithm>

#include "sc_models/core/packet.h"
#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {

using core::picoseconds;

ack_engine::ack_engine(const supernic_params& params, bool sacks, ack_host& host, const std::string& instance,
                       core::stats_registry* stats)
    : m_host(host),
      m_rx_latency(picoseconds::from_ns(params.rx_latency_ns)),
      m_ack_every(params.ack_every_packets),
      m_nak_threshold(uint32_t(std::min(params.nak_threshold_packets, params.reorder_window / 2))),
      m_sacks(sacks) {
  if (stats == nullptr) return;
  stats->counter(instance, "tx_acks", "packets", "ACKs transmitted", &m_tx_acks);
  stats->counter(instance, "tx_nak", "packets", "NAKs (PSN sequence error) sent", &m_tx_nak);
  stats->counter(instance, "tx_rnr_nak", "packets",
                 "RNR NAKs sent: a SEND or WRITE with immediate found no receive posted", &m_tx_rnr_nak);
  stats->counter(instance, "tx_sacks", "packets", "retransmission sack: ACKs sent naming an out-of-order arrival",
                 &m_tx_sacks);
  stats->counter(instance, "tx_cnps", "packets", "CNPs sent (notification point)", &m_tx_cnps);
}

void ack_engine::add_qp() { m_qps.emplace_back(); }

void ack_engine::connect(size_t q, uint32_t psn) { m_qps[q].rx_max = m_qps[q].placed_head = psn; }

uint32_t ack_engine::placed_by(qp_acks& a, picoseconds t) {
  while (!a.placing.empty() && a.placing.front().placed_at <= t) {
    a.placed_head = a.placing.front().head;
    a.placing.pop_front();
  }
  return a.placed_head;
}

void ack_engine::head_moved(size_t q, picoseconds t) {
  qp_acks& a = m_qps[q];
  placed_by(a, t);
  const uint32_t head = m_host.ack_head(q);
  if (!a.placing.empty() && a.placing.back().placed_at == t + m_rx_latency)
    a.placing.back().head = head;  // several moves in one instant: one mark
  else
    a.placing.push_back({t + m_rx_latency, head});
}

void ack_engine::arrival(size_t q, uint32_t psn, picoseconds t) {
  qp_acks& a = m_qps[q];
  const uint32_t head = m_host.ack_head(q);
  const uint32_t next = core::psn_add(psn, 1);
  if (core::psn_before(a.rx_max, next)) a.rx_max = next;
  if (core::psn_before(a.rx_max, head)) a.rx_max = head;
  if (!core::psn_before(head, a.rx_max)) {  // no gap
    a.recovering = false;
    return;
  }
  if (m_sacks) return;                                             // the requester finds the holes from SACKs
  const uint32_t beyond = (a.rx_max - 1 - head) & core::psn_mask;  // furthest PSN seen past the head
  if ((beyond < m_nak_threshold && !a.recovering) || (a.nak_sent && a.nak_psn == head)) return;
  a.recovering = true;
  a.nak_sent = true;
  a.nak_psn = head;
  a.nak_pending = true;
  request(q, t);
}

void ack_engine::duplicate(size_t q, uint32_t head_before, picoseconds t) {
  // Reordering never duplicates: the requester is resending, so a gap at the head is a loss.
  if (core::psn_before(m_host.ack_head(q), m_qps[q].rx_max)) m_qps[q].recovering = true;
  arrival(q, (head_before - 1) & core::psn_mask, t);
}

void ack_engine::advanced(size_t q, uint64_t packets, bool now, picoseconds t) {
  qp_acks& a = m_qps[q];
  a.since_ack += packets;
  if (now || a.since_ack >= m_ack_every) {
    a.since_ack = 0;
    request(q, t);
  }
}

void ack_engine::request(size_t q, picoseconds t) {
  qp_acks& a = m_qps[q];
  const picoseconds ready = t + m_rx_latency;
  a.due = std::max(a.due, ready);
  if (a.queued) return;  // the queued ACK carries the newest placed PSN when it is built
  requeue(q, ready);
}

void ack_engine::requeue(size_t q, picoseconds ready) {
  m_qps[q].queued = true;
  // The queue stays in time order (its front is the next due): a later entry is never due earlier.
  if (!m_acks.empty()) ready = std::max(ready, m_acks.back().ready);
  m_acks.push_back({ready, q});
  m_host.ack_wake(ready);
}

bool ack_engine::sack(size_t q, uint32_t psn, picoseconds t) {
  qp_acks& a = m_qps[q];
  bool kept = true;
  if (a.sacks.size() == sack_queue_depth) {
    a.sacks.pop_front();
    kept = false;
  }
  a.sacks.push_back(psn);
  request(q, t);
  return kept;
}

void ack_engine::rnr(size_t q, uint32_t psn, picoseconds t) {
  qp_acks& a = m_qps[q];
  a.rx_max = psn;
  // Marks beyond `psn` are void: the head is back at it (PSNs before it, passed by now, are placed by the
  // time the RNR NAK may leave).
  for (size_t i = 0; i < a.placing.size(); ++i)
    if (core::psn_before(psn, a.placing[i].head)) a.placing[i].head = psn;
  head_moved(q, t);
  a.recovering = a.nak_sent = a.nak_pending = false;
  a.sacks.clear();
  a.since_ack = 0;
  a.rnr_pending = true;
  a.rnr_psn = psn;
  request(q, t);
}

bool ack_engine::next(picoseconds t, ack_frame* out) {
  while (!m_acks.empty() && m_acks.front().ready <= t) {
    const size_t q = m_acks.front().q;
    qp_acks& a = m_qps[q];
    m_acks.pop_front();
    a.queued = false;
    const uint32_t placed = placed_by(a, t);
    const uint32_t head = m_host.ack_head(q);
    // A NAK or an RNR NAK acknowledges every PSN before the one it names (the head): it waits until the
    // head's last move is placed.
    const bool nak = a.nak_pending && core::psn_before(head, a.rx_max);
    if ((a.rnr_pending || nak) && !a.placing.empty()) {
      requeue(q, a.placing.back().placed_at);
      continue;
    }
    *out = ack_frame{};
    out->q = q;
    // Built when it leaves, so it carries the newest placed PSN (coalescing for free). A NAK names the
    // expected PSN and acknowledges everything before it; if the gap closed meanwhile, a plain ACK goes instead.
    if (a.rnr_pending) {  // receiver not ready at rnr_psn: everything before it is acknowledged
      out->psn = a.rnr_psn;
      out->syndrome = rnr_syndrome | rnr_timer_code_10us;
      ++m_tx_rnr_nak;
    } else if (nak) {
      out->psn = head;
      out->syndrome = nak_syndrome | nak_psn_sequence_error;
      a.nak_psn = head;
      ++m_tx_nak;
    } else {
      out->psn = (placed - 1) & core::psn_mask;
      out->syndrome = ack_syndrome;
      ++m_tx_acks;
      if (!a.sacks.empty()) {  // sack: one out-of-order arrival per ACK, the oldest first
        out->sack = true;
        out->sack_psn = a.sacks.front();
        a.sacks.pop_front();
        ++m_tx_sacks;
      }
    }
    a.nak_pending = false;
    a.rnr_pending = false;
    // A trigger coalesced into this ACK whose PSNs are not placed yet: another ACK once they are. More SACKs
    // to send: the next ACK at once.
    if (!a.sacks.empty())
      requeue(q, t);
    else if (t < a.due)
      requeue(q, a.due);
    return true;
  }
  return false;
}

bool ack_engine::next_cnp(picoseconds t, size_t* q) {
  if (m_cnps.empty() || t < m_cnps.front().ready) return false;
  *q = m_cnps.front().q;
  m_cnps.pop_front();
  ++m_tx_cnps;
  return true;
}

}  // namespace fabricsim::nic
