// The SuperNIC's payload DMA: DMI or PCIe placement, transmit reads ahead of the wire, bounce buffers.
#include "sc_models/nic/payload_dma.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "sc_models/core/params.h"

namespace fabricsim::nic {

using core::packet;
using core::picoseconds;

namespace {
constexpr uint64_t seq_mask = (uint64_t(1) << 40) - 1;
}  // namespace

payload_dma::payload_dma(payload_dma_host& host, bool pcie, uint64_t read_ahead, picoseconds wqe_latency,
                         bool place_data, std::string instance)
    : m_pcie(pcie),
      m_place_data(place_data),
      m_host(host),
      m_instance(std::move(instance)),
      m_read_ahead(read_ahead),
      m_wqe_latency(wqe_latency) {}

void payload_dma::set_memory(uint8_t* base, uint64_t size) {
  m_mem = base;
  m_mem_size = size;
  // The transmit buffers hold each payload at its own address: a packet's payload reference then stays valid
  // until the receiver has used it (a real NIC's buffer is a small ring whose occupancy, the read-ahead, is what
  // the model bounds), and a resend finds its bytes where the first read put them. Not value-initialised, so
  // only the pages the reads touch are ever mapped.
  if (m_pcie) m_tx_buf.reset(new uint8_t[size]);
}

void payload_dma::set_placement(placement_target& t) {
  m_placement = &t;
  t.set_on_read([this](uint64_t cookie) { read_done(cookie); });
  t.set_on_staged([this](uint64_t cookie) { staged(cookie); });
}

void payload_dma::register_stats(core::stats_registry& s, const std::string& inst) {
  if (!m_pcie) return;  // nic.placement pcie only: other runs' reports stay as they were
  s.counter(inst, "tx_pcie_reads", "reads", "placement pcie: payload reads the NIC issued over PCIe (one per packet)",
            &m_reads);
  s.counter(inst, "tx_pcie_read_bytes", "bytes", "placement pcie: payload bytes the NIC read over PCIe to send",
            &m_read_bytes);
  s.counter(inst, "tx_pcie_peak_reads", "reads", "placement pcie: most payload reads in flight at once", &m_peak_reads);
  s.counter(inst, "tx_pcie_peak_read_ahead", "packets",
            "placement pcie: most transmit buffers in use at once (reads in flight plus data waiting for the wire)",
            &m_peak_slots);
}

// ---- receive -----------------------------------------------------------------------------------------------

void payload_dma::write(uint64_t va, const packet* p) {
  const uint64_t length = p->payload_bytes;
  va += m_misplace.shift(va, length, m_mem_size);  // a planted fault (faults kind misplace); 0 unless armed
  const uint8_t* data = p->payload;
  if (data == nullptr) {       // generated: the bytes the packet names (no memory holds them), told by that name
    if (m_pattern == nullptr)  // (not a require() per packet: its message would be a std::string built each time)
      core::require(false, m_instance, "a generated payload arrived at a NIC without the payload pattern");
    if (m_landing) m_landing->landed_generated(va, *m_pattern, p->payload_host, p->payload_va, length);
    return;  // checked as it lands, not stored
  }
  if (m_landing) m_landing->landed(va, data, length);
  if (m_pattern) return;  // generated payloads: checked as they land, not stored
  if (m_placement)
    m_placement->post_write(va, data, length);
  else
    std::memcpy(m_mem + va, data, length);
}

void payload_dma::message_issued(uint64_t va, uint64_t bytes) {
  if (m_placement && m_place_data) m_placement->message_issued(va, bytes);
}

// ---- transmit ----------------------------------------------------------------------------------------------

void payload_dma::add_qp(uint64_t mtu) {
  m_qps.emplace_back();
  m_qps.back().mtu = mtu;
}

void payload_dma::connect(size_t q, uint32_t sq_psn, uint64_t mtu) {
  m_qps[q].mtu = mtu;
  m_qps[q].fetch_psn = sq_psn & core::psn_mask;
}

void payload_dma::tick(picoseconds t) {
  if (!m_pcie) return;
  while (!m_departures.empty() && m_departures.front() <= t) {  // their transmit buffers are free
    m_departures.pop_front();
    --m_slots;
  }
  prefetch();
}

picoseconds payload_dma::buffers_free_at() const {
  // All transmit buffers taken: the next one frees when its packet has left, and more can be read then.
  if (m_pcie && m_slots >= m_read_ahead && !m_departures.empty()) return m_departures.front();
  return never;
}

void payload_dma::prefetch() {
  const size_t n = m_qps.size();
  bool progress = true;
  while (progress && m_slots < m_read_ahead) {
    progress = false;
    const size_t from = m_rr;
    for (size_t i = 0; i < n && m_slots < m_read_ahead; ++i) {
      const size_t q = (from + i) % n;
      if (fetch_one(q)) {
        progress = true;
        m_rr = (q + 1) % n;
      }
    }
  }
}

bool payload_dma::fetch_one(size_t q) {
  if (!m_host.dma_qp_live(q)) return false;
  qp_fetch& qp = m_qps[q];
  const picoseconds t = core::now();
  const uint64_t mtu = qp.mtu;
  // READ responses first, as the transmitter sends them first.
  const core::ring<read_job>& responses = m_host.dma_responses(q);
  while (qp.fetch_job < responses.size()) {
    const read_job& job = responses[qp.fetch_job];
    if (job.ready == never || t < job.ready) break;
    const uint64_t offset = uint64_t(qp.fetch_k) * mtu;
    const uint64_t len = std::min(mtu, job.length - std::min(job.length, offset));
    if (++qp.fetch_k == job.packets) {
      ++qp.fetch_job;
      qp.fetch_k = 0;
    }
    if (len == 0) continue;
    issue(q, true, 0, job.va + offset, len);
    return true;
  }
  const send_queue& sq = m_host.dma_send_queue(q);
  while (qp.fetch_wr < sq.wqes.size()) {
    const work_request& wr = sq.wqes[qp.fetch_wr];
    if (wr.staged_at == never || t < wr.staged_at + m_wqe_latency) return false;  // not visible to the NIC yet
    const uint32_t k = (qp.fetch_psn - wr.first_psn) & core::psn_mask;
    if (wr.op == rdma_op::read || k >= wr.packets) {  // a READ request carries no payload
      qp.fetch_psn = core::psn_add(wr.last_psn(), 1);
      ++qp.fetch_wr;
      continue;
    }
    const uint64_t offset = uint64_t(k) * mtu;
    const uint64_t len = std::min(mtu, wr.length - offset);
    const uint32_t psn = qp.fetch_psn;
    qp.fetch_psn = core::psn_add(psn, 1);
    if (k + 1 == wr.packets) ++qp.fetch_wr;
    if (len == 0) continue;
    issue(q, false, psn, wr.local_addr + offset, len);
    return true;
  }
  return false;
}

void payload_dma::issue(size_t q, bool response, uint32_t psn, uint64_t va, uint64_t length) {
  const uint64_t seq = m_read_seq++ & seq_mask;
  qp_fetch& qp = m_qps[q];
  (response ? qp.resp : qp.data).push_back({psn, seq, false});
  ++m_slots;
  ++m_reads_outstanding;
  ++m_reads;
  m_read_bytes += length;
  m_peak_slots = std::max(m_peak_slots, m_slots);
  m_peak_reads = std::max(m_peak_reads, m_reads_outstanding);
  m_placement->post_read(va, m_tx_buf.get() + va, length, (uint64_t(q) << 41) | (uint64_t(response) << 40) | seq);
}

bool payload_dma::data_ready(size_t q, uint32_t psn, const work_request& wr) const {
  if (!m_pcie || wr.op == rdma_op::read) return true;
  const qp_fetch& qp = m_qps[q];
  const uint32_t k = (psn - wr.first_psn) & core::psn_mask;
  if (uint64_t(k) * qp.mtu >= wr.length) return true;  // no payload to read
  return !qp.data.empty() && qp.data.front().psn == psn && qp.data.front().done;
}

bool payload_dma::response_ready(size_t q, const read_job& job) const {
  // nic.placement pcie: only once the response's payload is in its transmit buffer (the read's completion
  // wakes the transmitter).
  const qp_fetch& qp = m_qps[q];
  return !m_pcie || job.k * qp.mtu >= job.length || (!qp.resp.empty() && qp.resp.front().done);
}

void payload_dma::read_done(uint64_t cookie) {
  qp_fetch& qp = m_qps[cookie >> 41];
  core::ring<tx_fetch>& ring = (cookie >> 40) & 1 ? qp.resp : qp.data;
  const uint64_t seq = cookie & seq_mask;
  --m_reads_outstanding;
  for (size_t i = 0; i < ring.size(); ++i)
    if (ring[i].seq == seq) {
      ring[i].done = true;
      m_host.dma_wake(core::now());
      return;
    }
  --m_slots;  // its QP failed meanwhile (qp_failed): the buffer is free now
  m_host.dma_wake(core::now());
}

void payload_dma::attach(size_t q, packet* p, uint64_t va, uint64_t bytes, bool fresh, bool response) {
  if (!m_pcie) {
    refer(p, va);  // a reference: the bytes are read where they lie
    return;
  }
  // What the NIC's reads brought in; a new packet gives back its buffer when it has left the wire.
  p->payload = m_tx_buf.get() + va;
  if (bytes > 0 && fresh) {
    (response ? m_qps[q].resp : m_qps[q].data).pop_front();
    m_took_slot = true;
  }
}

void payload_dma::refer(packet* p, uint64_t va) const {
  if (m_pattern) {
    p->payload = nullptr;
    p->payload_host = m_pattern_host;
    p->payload_va = va;
  } else {
    p->payload = m_mem + va;
  }
}

void payload_dma::response_done(size_t q) {
  qp_fetch& qp = m_qps[q];
  if (qp.fetch_job > 0)
    --qp.fetch_job;
  else
    qp.fetch_k = 0;
}

void payload_dma::committed(picoseconds leaves) {
  if (!m_took_slot) return;
  m_took_slot = false;
  m_departures.push_back(leaves);
}

// ---- bounce buffers ----------------------------------------------------------------------------------------

picoseconds payload_dma::staged_at(size_t q, uint64_t va, uint64_t length, picoseconds post_at) {
  // The payload is copied from GPU to host memory first; the NIC sees the work request once the host has
  // posted it after the copy (staged).
  if (m_pcie && m_placement && m_placement->stage_send(va, length, post_at, uint64_t(q) << 1)) return never;
  return post_at;
}

picoseconds payload_dma::response_staged(size_t q, uint64_t va, uint64_t length, picoseconds ready) {
  // The responder's data goes through host memory too (a GPU-to-host copy the host runs before the NIC may
  // read it). An approximation: a one-sided READ involves no host, so a real application would have staged
  // the buffer beforehand.
  if (m_pcie && m_placement && length > 0 && m_placement->stage_send(va, length, ready, (uint64_t(q) << 1) | 1))
    return never;
  return ready;
}

void payload_dma::staged(uint64_t cookie) {
  const size_t q = cookie >> 1;
  if (cookie & 1) {  // a READ response's data is in host memory
    core::ring<read_job>& responses = m_host.dma_responses(q);
    for (size_t i = 0; i < responses.size(); ++i)
      if (responses[i].ready == never) {
        responses[i].ready = core::now();
        m_host.dma_wake(core::now());
        return;
      }
    return;
  }
  // Copies finish in the order they were asked for: the oldest work request still waiting is this one.
  qp_fetch& qp = m_qps[q];
  send_queue& sq = m_host.dma_send_queue(q);
  while (qp.stage_index < sq.wqes.size() && sq.wqes[qp.stage_index].staged_at != never) ++qp.stage_index;
  if (qp.stage_index == sq.wqes.size()) return;  // flushed (the QP failed)
  sq.wqes[qp.stage_index++].staged_at = core::now();
  m_host.dma_wake(core::now() + m_wqe_latency);
}

void payload_dma::work_retired(size_t q, const work_request& wr) {
  if (wr.op == rdma_op::read) message_issued(wr.local_addr, wr.length);
  qp_fetch& qp = m_qps[q];
  if (qp.fetch_wr > 0)
    --qp.fetch_wr;
  else if (!core::psn_before(wr.last_psn(), qp.fetch_psn))
    qp.fetch_psn = core::psn_add(wr.last_psn(), 1);  // a payload-less packet sent before the fetch passed it
  if (qp.stage_index > 0) --qp.stage_index;
}

void payload_dma::qp_failed(size_t q) {
  qp_fetch& qp = m_qps[q];
  for (core::ring<tx_fetch>* ring : {&qp.data, &qp.resp}) {
    for (size_t i = 0; i < ring->size(); ++i)
      if ((*ring)[i].done) --m_slots;  // reads still in flight free theirs when they complete
    ring->clear();
  }
  qp.fetch_wr = 0;
  qp.fetch_psn = m_host.dma_send_queue(q).post_psn;
  qp.fetch_job = m_host.dma_responses(q).size();
  qp.fetch_k = 0;
  qp.stage_index = 0;
}

}  // namespace fabricsim::nic
