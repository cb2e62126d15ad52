// The SuperNIC requester: work-request ring, segmentation, PSNs, READ requests, and the ACKs and READ responses.
#include "sc_models/nic/requester.h"

#include <algorithm>

#include "sc_models/nic/ack_engine.h"
#include "sc_models/nic/congestion_control.h"
#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {

using core::bth_opcode;
using core::packet;
using core::picoseconds;

namespace {
constexpr uint32_t infinite_rnr_retry = 7;  // rnr_retry 7: retry for ever
}  // namespace

requester::requester(const supernic_params& params, loss_recovery& lr, congestion_control& cc, requester_host& host,
                     core::packet_pool& pool, shared_counters& shared, const std::string& instance,
                     core::stats_registry* stats)
    : m_lr(lr),
      m_cc(cc),
      m_host(host),
      m_pool(pool),
      m_shared(shared),
      m_place_data(params.place_data),
      m_wqe_latency(picoseconds::from_ns(params.wqe_latency_ns)),
      m_rnr_timer(picoseconds::from_ns(params.rnr_timer_us * 1e3)),
      m_send_window(params.send_window_packets),
      m_sq_depth(params.sq_depth),
      m_max_rd_atomic(params.max_rd_atomic),
      m_rnr_retry_count(params.rnr_retry_count) {
  if (stats == nullptr) return;
  auto& s = *stats;
  const std::string& inst = instance;
  s.counter(inst, "tx_data_packets", "packets", "request packets transmitted (WRITE, SEND, READ request)",
            &m_tx_data_packets);
  s.counter(inst, "tx_read_requests", "packets", "READ request packets transmitted (re-issues included)",
            &m_tx_read_requests);
  s.counter(inst, "rx_duplicate_responses", "packets", "READ responses received again or for no outstanding READ",
            &m_rx_duplicate_responses);
  s.counter(inst, "read_reissues", "requests",
            "READ requests re-issued for the missing part (timeout, NAK or a response far beyond a gap)",
            &m_read_reissues);
  s.counter(inst, "rx_rnr_nak", "packets", "RNR NAKs received", &m_rx_rnr_nak);
  s.counter(inst, "tx_retransmitted", "packets", "data packets sent again (NAK or timeout)", &m_tx_retransmitted);
  s.counter(inst, "rx_nak", "packets", "NAKs (PSN sequence error) received", &m_rx_nak);
  s.counter(inst, "qp_errors", "QPs", "queue pairs moved to the error state (retry count exhausted)", &m_qp_errors);
}

void requester::add_qp(uint32_t qpn) {
  auto qp = std::make_unique<tx_qp>();
  qp->qpn = qpn;
  m_qps.push_back(std::move(qp));
}

void requester::connect(size_t q, uint32_t sq_psn, uint64_t mtu) {
  tx_qp& qp = *m_qps[q];
  qp.mtu = mtu;
  qp.next_psn = qp.snd_max = qp.una = qp.post_psn = qp.acked = qp.rd_max = sq_psn & core::psn_mask;
}

void requester::post(size_t q, work_request wr, picoseconds t) {
  tx_qp& qp = *m_qps[q];
  if (qp.error) {  // a QP in the error state flushes what is posted to it
    m_completions.push_back(
        {wr.wr_id, qp.qpn, wr.length, wr.post_at, max(wr.post_at, t), completion_status::flushed, 0, wr.op});
    return;
  }
  wr.first_psn = qp.post_psn;
  // A READ reserves one PSN per response packet (a zero-length READ one, for its single response).
  wr.packets = uint32_t(std::max<uint64_t>(1, (wr.length + qp.mtu - 1) / qp.mtu));
  if (wr.op == rdma_op::read) wr.got.assign(wr.packets, 0);
  qp.post_psn = core::psn_add(qp.post_psn, wr.packets);
  if (wr.op != rdma_op::read && wr.length > 0) wr.staged_at = m_host.staged_at(q, wr.local_addr, wr.length, wr.post_at);
  const picoseconds post_at = wr.post_at;
  qp.wqes.push_back(wr);  // the ring copies
  m_host.requester_wake(max(post_at + m_wqe_latency, t));
}

// ---- segmentation -----------------------------------------------------------------------------------------

packet* requester::next_packet(size_t q, picoseconds t, picoseconds* next_ready) {
  tx_qp& qp = *m_qps[q];
  if (t < qp.rnr_until) {  // after an RNR NAK the requester waits before it resends
    if (qp.tx_index < qp.wqes.size() && qp.rnr_until < *next_ready) *next_ready = qp.rnr_until;
    return nullptr;
  }
  // Selective resends go before new packets.
  uint32_t resend_psn = 0;
  size_t resend_wr = 0;
  if (m_lr.next_resend(q, &resend_psn, &resend_wr)) return build(q, resend_wr, resend_psn, t);
  if (qp.tx_index >= qp.wqes.size()) return nullptr;
  const work_request& next = qp.wqes[qp.tx_index];
  if (next.staged_at == never) return nullptr;  // bounce: its copy to host memory is not done (it wakes us)
  const picoseconds ready = next.staged_at + m_wqe_latency;
  if (t < ready) {
    if (ready < *next_ready) *next_ready = ready;
    return nullptr;
  }
  const uint32_t psn = qp.next_psn;
  // nic.placement pcie: a new packet waits for its payload's read (resends find it in the buffer).
  if (psn == qp.snd_max && !m_host.payload_ready(q, psn, next)) return nullptr;
  if (psn == qp.snd_max && !admits_new(q, next, psn)) return nullptr;
  packet* p = build(q, qp.tx_index, psn, t);
  // A READ request stands for all its PSNs from `psn` on: the next PSN sent is the next work request's.
  qp.next_psn = next.op == rdma_op::read ? core::psn_add(next.last_psn(), 1) : core::psn_add(psn, 1);
  if (next.op == rdma_op::read || psn == next.last_psn()) ++qp.tx_index;
  if (!core::psn_before(qp.next_psn, qp.snd_max)) qp.snd_max = qp.next_psn;
  return p;
}

// New PSNs: the send window, and for new work the send queue and READ limits.
bool requester::admits_new(size_t q, const work_request& next, uint32_t psn) {
  tx_qp& qp = *m_qps[q];
  // PSNs the responder has not acknowledged (its ACKs cover a READ once its request is in: the READ's
  // responses are not what the responder's window holds).
  const uint32_t base = core::psn_before(qp.acked, qp.una) ? qp.una : qp.acked;
  const uint64_t in_flight = (qp.snd_max - base) & core::psn_mask;
  const uint64_t span = next.op == rdma_op::read ? next.packets : 1;  // a READ takes all its PSNs at once
  const bool first = psn == next.first_psn;
  if ((m_send_window > 0 && in_flight > 0 && in_flight + span > m_send_window) ||
      (first && qp.tx_index >= m_sq_depth) ||
      (first && next.op == rdma_op::read && qp.reads_in_flight >= m_max_rd_atomic)) {
    qp.stalled = true;  // progress (una moving, a completion) wakes the transmitter
    return false;
  }
  // HPCC: a new packet only while the window has room (resends are not held back); an ACK wakes it.
  if (m_cc.window_full(q, uint64_t((qp.snd_max - qp.una) & core::psn_mask) * qp.mtu)) return false;
  if (first && next.op == rdma_op::read) ++qp.reads_in_flight;
  return true;
}

// The packet of PSN `psn` of work request `index` from the work request alone: the payload is a reference to
// source memory at the PSN's offset, nothing is copied.
packet* requester::build(size_t q, size_t index, uint32_t psn, picoseconds t) {
  tx_qp& qp = *m_qps[q];
  work_request& wr = qp.wqes[index];
  const uint32_t k = (psn - wr.first_psn) & core::psn_mask;  // packet k of the message
  packet* p = m_host.data_packet(q, t);
  p->bth.psn = psn;
  if (wr.op == rdma_op::read)
    build_read_request(qp, wr, k, p);
  else
    build_payload(q, wr, k, p);
  if (core::psn_before(psn, qp.snd_max)) {  // sent before: a retransmission
    ++wr.retransmitted;
    ++m_tx_retransmitted;
  }
  // The policy counts the bytes and sets the pace: the next packet may start once this one's wire bytes
  // have gone at the current rate.
  m_cc.sent(q, p->wire().value, t);
  m_lr.sent(q, t);  // the timer runs while anything is unacked
  return p;
}

// A READ request for the responses from PSN k on: go-back-N asks for the rest of the message, selective only
// for the run of missing responses that starts at k.
void requester::build_read_request(tx_qp& qp, const work_request& wr, uint32_t k, packet* p) {
  const uint64_t offset = uint64_t(k) * qp.mtu;
  uint32_t end = wr.packets;
  const bool whole = m_lr.whole_read();
  for (uint32_t j = k + 1; j < wr.packets && !whole; ++j)
    if (wr.got[j]) {
      end = j;
      break;
    }
  const uint64_t length = std::min(wr.length, uint64_t(end) * qp.mtu) - std::min(wr.length, offset);
  p->bth.opcode = bth_opcode::rc_rdma_read_request;
  p->has_reth = true;
  p->reth = {wr.remote_addr + offset, wr.rkey, uint32_t(length)};
  p->payload_bytes = 0;
  p->seal();
  ++m_tx_data_packets;
  ++m_tx_read_requests;
  if (k > 0 || core::psn_before(p->bth.psn, qp.snd_max)) ++m_read_reissues;
}

void requester::build_payload(size_t q, const work_request& wr, uint32_t k, packet* p) {
  const tx_qp& qp = *m_qps[q];
  const uint64_t offset = uint64_t(k) * qp.mtu;
  const uint64_t payload = std::min(qp.mtu, wr.length - offset);
  const bool first = k == 0;
  const bool last = k + 1 == wr.packets;
  const bool imm = wr.op == rdma_op::write_imm || wr.op == rdma_op::send_imm;
  if (wr.op == rdma_op::send || wr.op == rdma_op::send_imm) {
    p->bth.opcode = first && last ? (imm ? bth_opcode::rc_send_only_imm : bth_opcode::rc_send_only)
                    : first       ? bth_opcode::rc_send_first
                    : last        ? (imm ? bth_opcode::rc_send_last_imm : bth_opcode::rc_send_last)
                                  : bth_opcode::rc_send_middle;
  } else {
    p->bth.opcode = first && last ? (imm ? bth_opcode::rc_rdma_write_only_imm : bth_opcode::rc_rdma_write_only)
                    : first       ? bth_opcode::rc_rdma_write_first
                    : last        ? (imm ? bth_opcode::rc_rdma_write_last_imm : bth_opcode::rc_rdma_write_last)
                                  : bth_opcode::rc_rdma_write_middle;
    if (first) {  // the RETH rides on the FIRST (or ONLY) packet, resent or not
      p->has_reth = true;
      p->reth = {wr.remote_addr, wr.rkey, uint32_t(wr.length)};
    }
  }
  if (last && imm) {  // the immediate rides on the LAST (or ONLY) packet
    p->has_immediate = true;
    p->immediate = wr.imm;
  }
  p->bth.ack_req = last || m_cc.telemetry();  // HPCC acts per ACK: every packet asks for one (Li et al.)
  p->bth.pad_count = uint8_t((4 - payload % 4) % 4);
  // What the NIC's reads brought in (a new packet gives back its buffer when it has left), or a reference.
  m_host.attach_payload(q, p, wr.local_addr + offset, payload, !core::psn_before(p->bth.psn, qp.snd_max));
  p->payload_bytes = uint32_t(payload);
  p->int_requested = m_cc.telemetry();  // HPCC: every switch egress on the way appends its record
  p->seal();
  ++m_tx_data_packets;
  m_shared.tx_payload_bytes += payload;
}

// ---- acknowledgements -------------------------------------------------------------------------------------
//
// Cumulative ACK for PSN a: every PSN up to a is acknowledged (una = a + 1), the work requests whose last
// PSN is below una complete, the retry count restarts and so does the timer (stopped if nothing is left).
// NAK "PSN sequence error" for PSN p: acknowledges every PSN before p, then the scheme (nic.retransmission,
// loss_recovery.h) resends: go-back-N rewinds the segmentation path to p, selective queues p alone, sack
// finds the holes from SACKs. Each NAK and timeout counts a retry; retry_count + 1 without progress moves
// the QP to the error state. A READ's PSNs are acknowledged by its responses, not by ACKs: una stops at its
// first missing response, and "resending" one of its PSNs re-issues the READ request from there. An RNR NAK
// for PSN p acknowledges everything before p; the requester resends from p, in order, after
// nic.rnr_timer_us.

void requester::on_ack(size_t q, packet* p, picoseconds t) {
  tx_qp& qp = *m_qps[q];
  if (qp.error) return;
  const uint8_t syndrome = p->aeth.syndrome;
  if ((syndrome & nak_syndrome_mask) == nak_syndrome) {
    if ((syndrome & 0x1f) == nak_psn_sequence_error) on_nak(q, p->bth.psn, t);
  } else if ((syndrome & nak_syndrome_mask) == rnr_syndrome) {
    on_rnr(q, p->bth.psn, t);
  } else {
    acknowledge(q, p->bth.psn, t);  // every PSN up to and including this one
    if (p->aeth.sack && !m_lr.on_sack(q, p->aeth.sack_psn, t)) ++m_shared.sack_overflow;  // beyond the scoreboard
  }
  // Telemetry echoed from the data packet (HPCC): a new window and pace, and room in the window again.
  const core::int_record* records = p->int_hops > 0 ? m_pool.telemetry(p).data() : nullptr;
  if (m_cc.on_ack(q, records, p->int_hops, p->bth.psn, qp.snd_max, t)) m_host.requester_wake(t);
}

void requester::acknowledge(size_t q, uint32_t psn, picoseconds t) {
  tx_qp& qp = *m_qps[q];
  const uint32_t to = core::psn_add(psn, 1);
  // News only if it moves forward and stays within what was sent (an ACK beyond it is bogus).
  if (!core::psn_before(qp.acked, to) || core::psn_before(qp.snd_max, to)) return;
  qp.acked = to;
  advance(q, t);
}

void requester::advance(size_t q, picoseconds t) {
  tx_qp& qp = *m_qps[q];
  bool completed = false;
  while (!qp.wqes.empty()) {
    work_request& wr = qp.wqes.front();
    if (wr.op == rdma_op::read) {
      while (wr.rd_done < wr.packets && wr.got[wr.rd_done]) ++wr.rd_done;
      if (wr.rd_done < wr.packets) break;
      --qp.reads_in_flight;
    } else if (!core::psn_before(wr.last_psn(), qp.acked)) {
      break;
    }
    m_completions.push_back(
        {wr.wr_id, qp.qpn, wr.length, wr.post_at, t, completion_status::success, wr.retransmitted, wr.op});
    m_host.work_retired(q, wr);
    qp.wqes.pop_front();
    if (qp.tx_index > 0) --qp.tx_index;
    completed = true;
  }
  uint32_t una = qp.snd_max;
  if (!qp.wqes.empty()) {
    const work_request& wr = qp.wqes.front();
    if (wr.op == rdma_op::read)
      una = core::psn_add(wr.first_psn, wr.rd_done);
    else if (core::psn_before(wr.first_psn, qp.acked))
      una = qp.acked;
    else
      una = wr.first_psn;
    if (core::psn_before(qp.snd_max, una)) una = qp.snd_max;  // nothing of it sent yet
  }
  if (qp.stalled && (completed || core::psn_before(qp.una, una))) {  // a slot of a limit came free
    qp.stalled = false;
    m_host.requester_wake(t);
  }
  if (!core::psn_before(qp.una, una)) return;  // no progress
  m_lr.progress(q, una, t);                    // the retry count restarts, and so does the timer
  qp.una = una;
  qp.rnr_retries = 0;
  if (core::psn_before(qp.next_psn, una)) qp.seek(una);  // go-back-N was resending what is now acknowledged
}

void requester::on_nak(size_t q, uint32_t psn, picoseconds t) {
  ++m_rx_nak;
  acknowledge(q, (psn - 1) & core::psn_mask, t);
  m_lr.on_nak(q, psn, t);
}

void requester::on_rnr(size_t q, uint32_t psn, picoseconds t) {
  tx_qp& qp = *m_qps[q];
  ++m_rx_rnr_nak;
  acknowledge(q, (psn - 1) & core::psn_mask, t);
  if (core::psn_before(psn, qp.una) || !core::psn_before(psn, qp.snd_max)) return;
  if (m_rnr_retry_count != infinite_rnr_retry && ++qp.rnr_retries > m_rnr_retry_count) {
    fail(q, completion_status::rnr_retry_exceeded, t);
    return;
  }
  // IBTA: resend from the PSN the RNR NAK names, in order, once the responder's timer has run.
  qp.rnr_until = t + m_rnr_timer;
  m_lr.hold(q, qp.rnr_until);  // no timeout while the requester is told to wait
  qp.seek(psn);
  m_host.requester_wake(qp.rnr_until);
}

void requester::fail(size_t q, completion_status why, picoseconds t) {
  tx_qp& qp = *m_qps[q];
  ++m_qp_errors;
  qp.error = true;
  m_lr.forget(q);  // the timer stops, nothing is resent
  for (size_t i = 0; i < qp.wqes.size(); ++i) {
    const work_request& wr = qp.wqes[i];
    m_completions.push_back({wr.wr_id, qp.qpn, wr.length, wr.post_at, max(wr.post_at, t),
                             i == 0 ? why : completion_status::flushed, wr.retransmitted, wr.op});
  }
  qp.wqes.clear();
  qp.tx_index = 0;
  qp.reads_in_flight = 0;
  m_host.qp_failed(q);
}

// ---- READ responses ---------------------------------------------------------------------------------------

void requester::on_read_response(size_t q, packet* p, uint32_t nak_threshold, picoseconds t) {
  tx_qp& qp = *m_qps[q];
  const uint32_t psn = p->bth.psn;
  const size_t index = qp.error ? qp.wqes.size() : qp.find_wr(psn);
  if (index == qp.wqes.size() || qp.wqes[index].op != rdma_op::read ||
      qp.wqes[index].got[(psn - qp.wqes[index].first_psn) & core::psn_mask]) {
    ++m_rx_duplicate_responses;  // a re-issued READ answered twice, or a READ already complete
    m_pool.release(p);
    return;
  }
  work_request& wr = qp.wqes[index];
  const uint32_t k = (psn - wr.first_psn) & core::psn_mask;
  const uint64_t offset = uint64_t(k) * qp.mtu;
  if (offset + p->payload_bytes <= wr.length) {
    if (m_place_data && p->payload_bytes > 0) m_host.place_response(wr.local_addr + offset, p);  // any order
    m_shared.placed_bytes += p->payload_bytes;
  } else {
    ++m_shared.access_errors;
  }
  wr.got[k] = 1;
  m_pool.release(p);
  // A new response is progress even when una cannot move (an earlier one is missing): the responder is
  // answering, and a re-issued request waits behind the responses already queued there. The retry count and
  // the timer restart, as for an ACK.
  m_lr.answered(q, t);
  const uint32_t next = core::psn_add(psn, 1);
  if (core::psn_before(qp.rd_max, next)) qp.rd_max = next;
  // Not an implicit ACK of the requests before the READ (as it is with IBTA's in-order responder): this
  // responder answers a READ as soon as it arrives, possibly ahead of a gap, so only ACKs acknowledge.
  advance(q, t);
  // A response far beyond the first missing one: that one is lost (the responder sends in order; only the
  // fabric reorders), so re-issue the READ from there at once, once per gap, rather than wait for the timer.
  if (qp.error || qp.wqes.empty() || qp.wqes.front().op != rdma_op::read) return;
  if (!core::psn_before(qp.una, qp.rd_max) || ((qp.rd_max - 1 - qp.una) & core::psn_mask) < nak_threshold) return;
  m_lr.reissue_read(q, t);
}

}  // namespace fabricsim::nic
