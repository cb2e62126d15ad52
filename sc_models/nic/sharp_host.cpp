// The host end of a SHARP operation.
#include "sc_models/nic/sharp_host.h"

#include <algorithm>
#include <cstring>

namespace fabricsim::sw {

using core::packet;
using core::picoseconds;

sharp_host::sharp_host(nic::supernic& nic, uint8_t* memory, picoseconds start_latency, picoseconds rx_latency,
                       core::sim_context& ctx)
    : m_nic(nic), m_mem(memory), m_start_latency(start_latency), m_rx_latency(rx_latency), m_ctx(ctx) {
  nic.attach_port_client(this);
}

void sharp_host::start(uint32_t op, uint64_t send_addr, uint64_t recv_addr, uint64_t bytes, uint32_t chunk_bytes,
                       bool data, picoseconds at, std::function<void(picoseconds)> done) {
  core::require(m_next == m_chunks && m_in == m_chunks, m_nic.name(),
                "SHARP: a new operation before the previous one completed");
  m_op = op;
  m_send = send_addr;
  m_recv = recv_addr;
  m_bytes = bytes;
  m_chunk = chunk_bytes;
  m_chunks = uint32_t((bytes + chunk_bytes - 1) / chunk_bytes);
  m_next = 0;
  m_in = 0;
  m_data = data;
  m_ready = at + m_start_latency;
  m_have.assign(m_chunks, false);
  m_done = std::move(done);
  m_nic.wake_port_client(m_ready);
}

packet* sharp_host::next_packet(picoseconds t, picoseconds* next_ready) {
  if (m_next >= m_chunks) return nullptr;
  if (t < m_ready) {
    *next_ready = std::min(*next_ready, m_ready);
    return nullptr;
  }
  const uint64_t off = uint64_t(m_next) * m_chunk;
  const uint32_t len = uint32_t(std::min<uint64_t>(m_chunk, m_bytes - off));
  packet* p = make_sharp_packet(m_ctx.pool, core::bth_opcode::sharp_up, m_op, m_next, off, len,
                                m_data ? m_mem + m_send + off : nullptr);
  ++m_next;
  m_sent_bytes += len;
  return p;
}

void sharp_host::receive(packet* p) {
  const uint32_t chunk = p->bth.psn;
  if (p->bth.opcode != core::bth_opcode::sharp_down || p->bth.dest_qp != m_op || chunk >= m_chunks ||
      m_have[chunk]) {
    ++m_unexpected;
    m_ctx.pool.release(p);
    return;
  }
  if (m_data && p->payload != nullptr) std::memcpy(m_mem + m_recv + p->reth.va, p->payload, p->payload_bytes);
  m_have[chunk] = true;
  m_received_bytes += p->payload_bytes;
  m_ctx.pool.release(p);
  if (++m_in == m_chunks && m_done) m_done(core::now() + m_rx_latency);
}

}  // namespace fabricsim::sw
