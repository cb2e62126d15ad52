// A minimal InfiniBand channel adapter port.
#include "sc_models/ib/ib_endpoint.h"

#include <algorithm>

namespace fabricsim::sw {

using core::packet;
using core::picoseconds;

void ib_endpoint_params::visit(core::param_visitor& v) {
  v.field({"lid", "", "local identifier of the port", 1, 0xbfff}, lid);
  v.field({"mtu", "bytes", "payload per packet: 256, 512, 1024, 2048 or 4096", 256, 4096}, mtu);
  v.field({"data_vls", "VLs", "data virtual lanes the port advertises buffers for", 1, 15}, data_vls);
  v.field({"drain_gbps", "Gb/s", "rate the host empties the receive buffer; 0: at once", 0, 3200}, drain_gbps);
  v.field({"grh", "", "carry a global route header (40 bytes)"}, grh);
  credit.visit(v);
}

ib_endpoint::ib_endpoint(sc_core::sc_module_name name, const ib_endpoint_params& params, core::sim_context& ctx)
    : sc_core::sc_module(name),
      m_ctx(ctx),
      m_params(params),
      m_rx(params.credit, unsigned(params.data_vls), ctx.calendar),
      m_drain(*this) {
  core::require(core::valid_ib_mtu(params.mtu), this->name(),
                "mtu " + std::to_string(params.mtu) + " is not an InfiniBand MTU (256, 512, 1024, 2048, 4096)");
  params.credit.validate(this->name());
}

void ib_endpoint::connect(core::link& out) { m_out = &out; }

void ib_endpoint::end_of_elaboration() {
  core::require(m_out != nullptr, name(), "not connected");
  auto* peer = dynamic_cast<ib::credit_peer*>(m_out->sink());
  // Scale-out keeps a host with its switch (docs/scale_out.md): the initial limit comes from the switch, here.
  core::require(m_out->proxy() == nullptr, name(), "the cable to the switch crosses processes");
  m_rx.attach(peer, m_out->sink_port(), *m_out);
  if (peer == nullptr) m_sender.set_unlimited(true);
}

void ib_endpoint::send(uint16_t dlid, uint64_t bytes, unsigned sl, picoseconds start) {
  m_flows.push_back({dlid, uint8_t(sl & 15u), bytes, start});
  if (m_out != nullptr && m_flows.size() == 1) wake(std::max(start, core::now()));
}

packet* ib_endpoint::build(const flow& f) const {
  packet* p = m_ctx.pool.acquire();
  p->kind = core::frame_kind::infiniband;
  p->lrh.dlid = f.dlid;
  p->lrh.slid = uint16_t(m_params.lid);
  p->lrh.sl = f.sl;
  p->lrh.vl = uint8_t(f.sl % m_params.data_vls);  // the HCA's SL-to-VL table: SL mod data VLs
  p->lrh.has_grh = m_params.grh;
  p->payload_bytes = uint32_t(std::min<uint64_t>(f.left, m_params.mtu));
  p->bth.pad_count = uint8_t((4 - p->payload_bytes % 4) % 4);
  p->bth.opcode = core::bth_opcode::rc_send_middle;
  return p;
}

void ib_endpoint::wake(picoseconds t) {
  if (t >= m_wake) return;
  m_wake = t;
  m_ctx.calendar.schedule(this, t);
}

void ib_endpoint::on_due(picoseconds t) {
  if (t < m_wake) return;
  m_wake = picoseconds(UINT64_MAX);
  serve(t);
}

void ib_endpoint::serve(picoseconds t) {
  if (m_flows.empty()) return;
  if (m_busy_until > t) {
    wake(m_busy_until);
    return;
  }
  flow& f = m_flows.front();
  if (f.start > t) {
    wake(f.start);
    return;
  }
  const unsigned vl = unsigned(f.sl % m_params.data_vls);
  packet* p = build(f);
  p->bth.psn = m_psn;
  p->seal();
  const uint64_t blocks = ib::blocks_of(p->wire().value);
  if (!m_sender.can_send(vl, blocks)) {
    m_sender.stall(vl, true, t);  // the credit update wakes us
    m_ctx.pool.release(p);
    return;
  }
  m_sender.stall(vl, false, t);
  m_sender.sent(vl, blocks);
  m_psn = core::psn_add(m_psn, 1);  // only a packet that leaves uses a PSN
  f.left -= p->payload_bytes;
  ++m_tx_packets;
  m_tx_payload += p->payload_bytes;
  p->injected_at = t;
  m_busy_until = m_out->transmit(p, t);
  if (f.left == 0) m_flows.pop_front();
  if (!m_flows.empty()) wake(m_busy_until);
}

void ib_endpoint::credit_update(unsigned, unsigned vl, uint64_t fccl_blocks) {
  m_sender.update(vl, fccl_blocks);
  const picoseconds t = core::now();
  if (!m_flows.empty() && m_busy_until <= t && m_wake > t) serve(t);
}

void ib_endpoint::receive(packet* p, unsigned) {
  const picoseconds t = core::now();
  const unsigned vl = p->lrh.vl < m_params.data_vls ? p->lrh.vl : 0u;
  const uint32_t blocks = uint32_t(ib::blocks_of(p->wire().value));
  m_rx.received(vl, blocks);
  ++m_rx_packets;
  if (p->payload_bytes > 0) m_ctx.data_latency.add((t - p->injected_at).value);
  m_rx_payload += p->payload_bytes;
  m_rx_wire += p->wire().value;
  if (m_first_rx.value == UINT64_MAX) m_first_rx = t;
  m_last_rx = t;
  if (m_params.drain_gbps <= 0.0) {
    m_rx.released(vl, blocks, t);
  } else {
    // The host takes packets out one after another at its drain rate.
    const picoseconds take = core::serialization_time(p->wire(), core::bits_per_second::from_gbps(m_params.drain_gbps));
    m_drain_free = std::max(m_drain_free, t) + take;
    const bool was_empty = m_held.empty();
    m_held.push_back({m_drain_free, vl, blocks});
    if (was_empty) m_ctx.calendar.schedule(&m_drain, m_drain_free);
  }
  m_ctx.pool.release(p);
}

void ib_endpoint::drained(picoseconds t) {
  while (!m_held.empty() && m_held.front().drained <= t) {
    m_rx.released(m_held.front().vl, m_held.front().blocks, t);
    m_held.pop_front();
  }
  if (!m_held.empty()) m_ctx.calendar.schedule(&m_drain, m_held.front().drained);
}

}  // namespace fabricsim::sw
