// The SuperNIC responder: tracker, stash, placement, the receive queue, SEND and READ serving.
#include "sc_models/nic/responder.h"

#include <algorithm>

#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {

using core::bth_opcode;
using core::packet;
using core::picoseconds;

namespace {
bool is_send(bth_opcode op) { return uint8_t(op) <= uint8_t(bth_opcode::rc_send_only_imm); }
bool starts_message(bth_opcode op) {
  return op == bth_opcode::rc_send_first || op == bth_opcode::rc_send_only || op == bth_opcode::rc_send_only_imm;
}
bool ends_message(bth_opcode op) {
  return op == bth_opcode::rc_send_last || op == bth_opcode::rc_send_last_imm || op == bth_opcode::rc_send_only ||
         op == bth_opcode::rc_send_only_imm;
}
uint32_t packets_of(uint64_t length, uint64_t mtu) { return uint32_t(std::max<uint64_t>(1, (length + mtu - 1) / mtu)); }
}  // namespace

responder::responder(const supernic_params& params, ack_engine& acks, bool sacks, responder_host& host,
                     core::packet_pool& pool, shared_counters& shared, const std::string& instance,
                     core::stats_registry* stats)
    : m_ack(acks),
      m_host(host),
      m_pool(pool),
      m_shared(shared),
      m_sacks(sacks),
      m_place_data(params.place_data),
      m_window(params.reorder_window),
      m_rx_latency(picoseconds::from_ns(params.rx_latency_ns)) {
  if (stats == nullptr) return;
  auto& s = *stats;
  const std::string& inst = instance;
  s.counter(inst, "recv_consumed", "WRs", "posted receives consumed by SENDs and WRITEs with immediate",
            &m_recv_consumed);
  s.counter(inst, "reorder_peak_packets", "PSNs",
            "peak reorder-window occupancy: most PSNs one QP's tracker held beyond its head at once", &m_reorder_peak);
  s.counter(inst, "rx_in_order", "packets", "data packets at the expected PSN", &m_rx_in_order);
  s.counter(inst, "rx_out_of_order", "packets", "data packets ahead of the expected PSN, inside the window",
            &m_rx_out_of_order);
  s.counter(inst, "rx_duplicate", "packets", "data packets already received", &m_rx_duplicate);
  s.counter(inst, "rx_out_of_window", "packets", "data packets beyond the reorder window, dropped",
            &m_rx_out_of_window);
  s.counter(inst, "rx_deferred", "packets", "packets held until their message's FIRST packet arrived", &m_rx_deferred);
  s.counter(inst, "rx_read_already_queued", "packets",
            "re-issued READ requests not answered again: every response they ask for is still queued here",
            &m_rx_read_already_queued);
  s.counter(inst, "rx_read_deferred", "packets",
            "READ requests that arrived ahead of a gap with more responses than nic.reorder_window: answered when "
            "the head reached them",
            &m_rx_read_deferred);
  s.counter(inst, "tracker_cycles", "cycles", "clock cycles the reorder tracker was stepped", &m_tracker_cycles);
  s.hist(inst, "ooo_distance", "PSNs", "distance of out-of-order arrivals ahead of the expected PSN", &m_ooo_distance);
}

responder::~responder() {
  for (auto& qp : m_qps)
    for (packet* p : qp->stash)
      if (p) m_pool.release(p);
}

uint32_t responder::register_region(uint64_t addr, uint64_t length) {
  m_regions.push_back({addr, length});
  return uint32_t(m_regions.size());
}

void responder::add_qp(uint32_t qpn, std::unique_ptr<reorder_tracker> tracker) {
  auto qp = std::make_unique<rx_qp>();
  qp->qpn = qpn;
  qp->tracker = std::move(tracker);
  qp->stash.assign(m_window, nullptr);
  qp->window_mask = uint32_t(m_window - 1);
  qp->messages.reserve(16);
  m_qps.push_back(std::move(qp));
}

void responder::connect(size_t q, uint32_t rq_psn, uint64_t mtu) {
  rx_qp& qp = *m_qps[q];
  qp.mtu = mtu;
  qp.tracker->reset(rq_psn & core::psn_mask);
  qp.head = rq_psn & core::psn_mask;
}

// ---- tracker use --------------------------------------------------------------------------------------------

void responder::receive(size_t q, packet* p, picoseconds t) {
  rx_qp& qp = *m_qps[q];
  const uint32_t head_before = qp.head;
  const bth_opcode op = p->bth.opcode;
  const bool read = op == bth_opcode::rc_rdma_read_request;
  // A READ request stands for one PSN per response (IBTA 9.7.4: the responder's expected PSN moves past them
  // all). In order, its PSNs are retired one per tracker transaction, so any size up to 2^31 bytes is served;
  // ahead of a gap, its PSNs are marked at once when they all fit the window, otherwise the request waits in
  // the stash until the head reaches it (serve_deferred_read).
  const uint32_t read_psns = read ? packets_of(p->reth.dma_length, qp.mtu) : 1;
  const psn_result r = qp.tracker->arrive(p->bth.psn);
  note_held(qp, r);
  qp.head = r.head_psn;
  switch (r.verdict) {
    case psn_verdict::duplicate:
      on_duplicate(q, p, head_before, t);
      return;
    case psn_verdict::out_of_window:
      ++m_rx_out_of_window;
      m_ack.arrival(q, p->bth.psn, t);  // dropped, and answered: the gap at the head keeps it out
      m_pool.release(p);
      return;
    case psn_verdict::in_order:
      ++m_rx_in_order;
      break;
    case psn_verdict::out_of_order:
      ++m_rx_out_of_order;
      m_ooo_distance.add((p->bth.psn - head_before) & core::psn_mask);
      // sack: SACKed by an ACK of its own (sent at most sack_queue_depth behind)
      if (m_sacks && !m_ack.sack(q, p->bth.psn, t)) ++m_shared.sack_overflow;
      break;
  }
  uint32_t psn = p->bth.psn;  // `p` may be released below
  uint32_t advanced = r.advanced;
  const bool ack_req = p->bth.ack_req;  // HPCC asks for an ACK per packet
  if (read && r.verdict == psn_verdict::out_of_order &&
      ((psn + read_psns - 1 - head_before) & core::psn_mask) >= m_window) {
    ++m_rx_read_deferred;  // its responses' PSNs reach beyond the window: served when the head gets here
    qp.stash[psn & qp.window_mask] = p;
  } else if (read) {
    advanced += retire_read_psns(qp, psn, read_psns);
    on_read_request(q, p, false, t);
    psn = core::psn_add(psn, read_psns - 1);
  } else if (is_send(op)) {
    ++m_rx_deferred;  // placed when the head passes it: only then is its receive buffer certain
    qp.stash[psn & qp.window_mask] = p;
  } else if (op == bth_opcode::rc_rdma_write_first || op == bth_opcode::rc_rdma_write_only ||
             op == bth_opcode::rc_rdma_write_only_imm) {
    learn_message(qp, p, t);
  } else if (!try_place(qp, p)) {
    ++m_rx_deferred;  // its FIRST (with the RETH) is still on the way: hold the descriptor, not the bytes
    qp.stash[p->bth.psn & qp.window_mask] = p;
  }
  if (advanced > 0) {
    m_ack.head_moved(q, t);
    bool message_done = false;
    if (!walk_head(q, head_before, qp.head, &message_done, t)) return;  // RNR: the head went back
    advanced = (qp.head - head_before) & core::psn_mask;                // with any READ served on the way
    m_ack.advanced(q, advanced, message_done || ack_req, t);
  }
  m_ack.arrival(q, psn, t);
}

void responder::note_held(rx_qp& qp, const psn_result& r) {
  m_tracker_cycles += r.cycles;
  if (r.verdict == psn_verdict::out_of_order) {
    ++qp.held;
    if (qp.held > m_reorder_peak) m_reorder_peak = qp.held;
  } else if (r.verdict == psn_verdict::in_order && r.advanced > 1) {
    qp.held -= std::min<uint64_t>(qp.held, r.advanced - 1);  // the head swept over PSNs held beyond it
  }
}

// The PSNs from `psn` + 1 on that a READ request of `packets` responses stands for, retired through the
// tracker one transaction each (the head is at `psn` + 1 or, past PSNs a re-issued request marked, beyond).
// Returns how far the head moved.
uint32_t responder::retire_read_psns(rx_qp& qp, uint32_t psn, uint32_t packets) {
  uint32_t advanced = 0;
  for (uint32_t k = 1; k < packets; ++k) {
    const psn_result rk = qp.tracker->arrive(core::psn_add(psn, k));
    note_held(qp, rk);
    qp.head = rk.head_psn;
    advanced += rk.advanced;
  }
  return advanced;
}

// A request packet whose PSN the head has passed, or already marked: the requester is resending.
void responder::on_duplicate(size_t q, packet* p, uint32_t head_before, picoseconds t) {
  rx_qp& qp = *m_qps[q];
  ++m_rx_duplicate;
  const bool read = p->bth.opcode == bth_opcode::rc_rdma_read_request;
  const packet* held = qp.stash[p->bth.psn & qp.window_mask];
  if (read && held != nullptr && held->bth.psn == p->bth.psn) {
    ++m_rx_read_already_queued;  // the first copy waits for the head: it will be answered then
    m_pool.release(p);
  } else if (read) {
    on_read_request(q, p, true, t);  // a re-issued READ: answered again, from its PSN on
  } else {
    m_ack.request(q, t);  // the first ACK may have been lost: acknowledge again
    m_pool.release(p);
  }
  m_ack.duplicate(q, head_before, t);  // the requester is resending
}

// ---- placement of WRITEs ------------------------------------------------------------------------------------

bool responder::region_valid(uint32_t key, uint64_t va, uint64_t length) const {
  return key >= 1 && key <= m_regions.size() && va >= m_regions[key - 1].addr &&
         va - m_regions[key - 1].addr <= m_regions[key - 1].length &&
         length <= m_regions[key - 1].length - (va - m_regions[key - 1].addr) && va + length <= m_mem_size;
}

// Keep messages in PSN order (FIRSTs may arrive out of order). The key is the distance from half the PSN space
// behind the head: every known message lies after that, including one the head is inside of.
responder::known_message& responder::insert_message(rx_qp& qp, const known_message& m) {
  const uint32_t base = (qp.head - core::psn_modulus / 2) & core::psn_mask;
  auto pos = std::find_if(qp.messages.begin(), qp.messages.end(), [&](const known_message& k) {
    return ((k.first_psn - base) & core::psn_mask) > ((m.first_psn - base) & core::psn_mask);
  });
  return *qp.messages.insert(pos, m);
}

void responder::learn_message(rx_qp& qp, packet* p, picoseconds t) {
  const uint64_t length = p->reth.dma_length;
  known_message m{};
  m.first_psn = p->bth.psn;
  m.packets = packets_of(length, qp.mtu);
  m.va = p->reth.va;
  m.length = length;
  m.first_arrival = t;
  m.valid = region_valid(p->reth.rkey, m.va, length);
  known_message& placed = insert_message(qp, m);
  place(qp, placed, p);
  m_pool.release(p);
  // Packets of this message that overtook its FIRST wait in the stash: place them now.
  for (uint32_t k = 1; k < placed.packets; ++k) {
    const uint32_t psn = core::psn_add(placed.first_psn, k);
    packet*& slot = qp.stash[psn & qp.window_mask];
    if (slot != nullptr && slot->bth.psn == psn) {
      place(qp, placed, slot);
      m_pool.release(slot);
      slot = nullptr;
    }
  }
}

bool responder::try_place(rx_qp& qp, packet* p) {
  for (auto it = qp.messages.rbegin(); it != qp.messages.rend(); ++it) {
    if (((p->bth.psn - it->first_psn) & core::psn_mask) < it->packets) {
      place(qp, *it, p);
      m_pool.release(p);
      return true;
    }
  }
  return false;
}

void responder::place(rx_qp& qp, known_message& m, const packet* p) {
  const uint64_t offset = uint64_t((p->bth.psn - m.first_psn) & core::psn_mask) * qp.mtu;
  if (!m.valid || offset + p->payload_bytes > m.length) {
    ++m_shared.access_errors;
    return;
  }
  if (m_place_data) m_host.place_payload(m.va + offset, p);  // direct data placement
  if (p->bth.opcode == bth_opcode::rc_rdma_write_last_imm || p->bth.opcode == bth_opcode::rc_rdma_write_only_imm) {
    m.imm = true;  // it consumes a receive when the head passes it
    m.imm_value = p->immediate;
  }
  m.placed_bytes += p->payload_bytes;
  qp.placed_bytes += p->payload_bytes;
  m_shared.placed_bytes += p->payload_bytes;
}

// ---- the head's walk ----------------------------------------------------------------------------------------

bool responder::walk_head(size_t q, uint32_t from, uint32_t to, bool* message_done, picoseconds t) {
  rx_qp& qp = *m_qps[q];
  for (uint32_t psn = from; psn != to; psn = core::psn_add(psn, 1)) {
    packet*& slot = qp.stash[psn & qp.window_mask];
    if (slot != nullptr && slot->bth.psn == psn && slot->bth.opcode == bth_opcode::rc_rdma_read_request) {
      packet* p = slot;
      slot = nullptr;
      to = serve_deferred_read(q, p, t);
    }
    // A SEND packet: its receive buffer is bound at its FIRST, in PSN order with the other receivers.
    if (slot != nullptr && slot->bth.psn == psn && is_send(slot->bth.opcode)) {
      if (starts_message(slot->bth.opcode) && !bind_recv(qp, &qp.send_buf)) {
        rnr_reset(q, psn, t);
        return false;
      }
      packet* p = slot;
      slot = nullptr;
      *message_done = *message_done || ends_message(p->bth.opcode);
      process_send(qp, p, t);
    }
    if (!retire_messages(q, psn, message_done, t)) return false;
  }
  return true;
}

// Messages known from their RETH whose last PSN the head has now passed.
bool responder::retire_messages(size_t q, uint32_t psn, bool* message_done, picoseconds t) {
  rx_qp& qp = *m_qps[q];
  while (!qp.messages.empty()) {
    known_message& m = qp.messages.front();
    const uint32_t last = core::psn_add(m.first_psn, m.packets - 1);
    if (core::psn_before(psn, last)) break;
    if (m.imm) {  // a WRITE with immediate consumes a receive at its LAST
      recv_wqe rwqe{};
      if (!bind_recv(qp, &rwqe)) {
        // Its LAST is to come again: take its bytes off and the head back to it.
        const uint64_t tail = m.length - std::min<uint64_t>(m.length, uint64_t(m.packets - 1) * qp.mtu);
        m.placed_bytes -= std::min(m.placed_bytes, tail);
        qp.placed_bytes -= std::min(qp.placed_bytes, tail);
        m.imm = false;
        rnr_reset(q, last, t);
        return false;
      }
      m_recv_completions.push_back(
          {rwqe.wr_id, qp.qpn, m.length, rdma_op::write_imm, m.imm_value, t, completion_status::success});
    }
    if (!m.read && m.valid && m.placed_bytes == m.length)
      m_host.message_placed({qp.qpn, m.va, m.length, m.first_arrival, t});
    qp.msn = (qp.msn + 1) & core::psn_mask;
    *message_done = true;  // a READ's PSNs too: the requester's send window moves on
    qp.messages.erase(qp.messages.begin());
  }
  return true;
}

// Receiver not ready at `psn` (a SEND's FIRST or a WRITE with immediate's LAST found no receive): nothing
// from `psn` on is accepted. The tracker goes back to `psn` and forgets what it held beyond it, the held
// packets and the messages from there on are dropped (the requester resends them all, in order), and an RNR
// NAK naming `psn` goes out.
void responder::rnr_reset(size_t q, uint32_t psn, picoseconds t) {
  rx_qp& qp = *m_qps[q];
  qp.tracker->reset(psn);
  qp.head = psn;
  qp.held = 0;
  for (packet*& slot : qp.stash)
    if (slot) {
      m_pool.release(slot);
      slot = nullptr;
    }
  while (!qp.messages.empty() && !core::psn_before(qp.messages.back().first_psn, psn)) qp.messages.pop_back();
  m_ack.rnr(q, psn, t);  // nothing owed but the RNR NAK
}

// ---- the receive queue and SEND -----------------------------------------------------------------------------

bool responder::bind_recv(rx_qp& qp, recv_wqe* out) {
  if (qp.rq.empty()) return false;
  *out = qp.rq.front();
  qp.rq.pop_front();
  ++m_recv_consumed;
  return true;
}

void responder::process_send(rx_qp& qp, packet* p, picoseconds t) {
  const bth_opcode op = p->bth.opcode;
  const uint32_t psn = p->bth.psn;
  if (starts_message(op)) {
    qp.in_send = true;
    qp.send_first = psn;
    qp.send_bytes = 0;
    qp.send_error = false;
    qp.send_first_arrival = t;
  }
  if (!qp.in_send) {  // a MIDDLE or LAST with no FIRST before it: an invalid request, counted and dropped
    ++m_shared.access_errors;
    m_pool.release(p);
    return;
  }
  const uint64_t offset = uint64_t((psn - qp.send_first) & core::psn_mask) * qp.mtu;
  if (offset + p->payload_bytes > qp.send_buf.length) {
    qp.send_error = true;
  } else {
    if (m_place_data && p->payload_bytes > 0) m_host.place_payload(qp.send_buf.addr + offset, p);
    qp.send_bytes += p->payload_bytes;
    qp.placed_bytes += p->payload_bytes;
    m_shared.placed_bytes += p->payload_bytes;
  }
  if (ends_message(op)) {
    const bool imm = op == bth_opcode::rc_send_last_imm || op == bth_opcode::rc_send_only_imm;
    m_recv_completions.push_back({qp.send_buf.wr_id, qp.qpn, qp.send_bytes, imm ? rdma_op::send_imm : rdma_op::send,
                                  imm ? p->immediate : 0, t,
                                  qp.send_error ? completion_status::length_error : completion_status::success});
    if (!qp.send_error) m_host.message_placed({qp.qpn, qp.send_buf.addr, qp.send_bytes, qp.send_first_arrival, t});
    qp.msn = (qp.msn + 1) & core::psn_mask;
    qp.in_send = false;
  }
  m_pool.release(p);
}

// ---- READ serving -------------------------------------------------------------------------------------------

void responder::on_read_request(size_t q, packet* p, bool duplicate, picoseconds t) {
  rx_qp& qp = *m_qps[q];
  const uint64_t va = p->reth.va, length = p->reth.dma_length;
  const uint32_t packets = packets_of(length, qp.mtu);
  const bool valid = region_valid(p->reth.rkey, va, length);
  if (!duplicate) {  // a message for the MSN, retired when the head passes its last PSN
    known_message m{};
    m.first_psn = p->bth.psn;
    m.packets = packets;
    m.va = va;
    m.length = length;
    m.valid = valid;
    m.read = true;
    m.first_arrival = t;
    insert_message(qp, m);
  }
  if (duplicate && valid) {
    // A re-issued READ whose responses are all still queued here, not sent yet (the requester timed out
    // behind this responder's backlog): they are about to go, so a second copy would only lengthen the
    // backlog that made the requester time out.
    const uint32_t end = core::psn_add(p->bth.psn, packets);
    for (size_t i = 0; i < qp.responses.size(); ++i) {
      const read_job& job = qp.responses[i];
      const uint32_t from = core::psn_add(job.first_psn, job.k), to = core::psn_add(job.first_psn, job.packets);
      if (!core::psn_before(p->bth.psn, from) && !core::psn_before(to, end)) {
        ++m_rx_read_already_queued;
        m_pool.release(p);
        return;
      }
    }
  }
  if (valid) {
    const picoseconds ready = m_host.response_ready(q, va, length, t + m_rx_latency);
    qp.responses.push_back({p->bth.psn, packets, 0, va, length, ready});
    m_host.response_queued(ready);
  } else {
    ++m_shared.access_errors;  // not answered: the requester's retries run out
  }
  m_pool.release(p);
}

// A READ request that arrived ahead of a gap with more responses than the window holds, now at the head: its
// PSN was marked when it arrived, so the head stands just past it; its responses' PSNs are retired now and it
// is answered. Returns the new head.
uint32_t responder::serve_deferred_read(size_t q, packet* p, picoseconds t) {
  rx_qp& qp = *m_qps[q];
  retire_read_psns(qp, p->bth.psn, packets_of(p->reth.dma_length, qp.mtu));
  m_ack.head_moved(q, t);
  on_read_request(q, p, false, t);
  return qp.head;
}

}  // namespace fabricsim::nic
