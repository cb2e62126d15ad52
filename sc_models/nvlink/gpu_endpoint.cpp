// A GPU as an NVLink endpoint: HBM, NVLink ports, copy engine.
#include "sc_models/nvlink/gpu_endpoint.h"

#include <cstring>

namespace fabricsim::nvlink {

using core::picoseconds;

gpu_endpoint::gpu_endpoint(sc_core::sc_module_name name, const nvlink_params& params, uint32_t index, uint32_t host,
                           uint64_t hbm_bytes, core::sim_context& ctx)
    : sc_core::sc_module(name),
      hbm("hbm", hbm_bytes),
      dma("dma"),
      m_params(params),
      m_index(index),
      m_host(host),
      m_ctx(ctx) {
  const std::string inst = this->name();
  params.validate(inst + ": nvlink");
  const sw::ib::credit_params credit = params.credits();
  for (unsigned l = 0; l < params.links_per_gpu; ++l) {
    m_ports.push_back(std::make_unique<nvlink_port>(*this, l, params.flit_bytes, ctx.calendar));
    m_rx.push_back(std::make_unique<sw::ib::credit_receiver>(credit, 1, ctx.calendar));
  }
  dma.bind(hbm.socket);
  m_cursor.resize(params.links_per_gpu);
  auto& s = ctx.stats;
  s.counter(inst, "rx_packets", "packets", "NVLink packets received", &m_rx_packets);
  s.counter(inst, "landed_bytes", "bytes", "payload bytes placed in HBM (or checked, generated)", &m_landed_bytes);
  s.counter(inst, "transfers_landed", "transfers", "transfers whose every byte has landed here", &m_transfers_landed);
  s.counter(inst, "not_nvlink", "packets", "frames that are not NVLink packets, discarded", &m_not_nvlink);
}

gpu_endpoint::~gpu_endpoint() = default;

void gpu_endpoint::connect_link(unsigned link, core::link& out) {
  core::require(link < m_ports.size(), name(), "link " + std::to_string(link) + " out of range");
  core::require(!m_ports[link]->connected(), name(), "link " + std::to_string(link) + " connected twice");
  m_ports[link]->connect(out);
}

void gpu_endpoint::end_of_elaboration() {
  const std::string inst = name();
  tlm::tlm_generic_payload trans;
  trans.set_address(0);
  trans.set_command(tlm::TLM_WRITE_COMMAND);
  tlm::tlm_dmi dmi;
  core::require(dma->get_direct_mem_ptr(trans, dmi) && dmi.is_read_write_allowed() && dmi.get_start_address() == 0,
                inst, "HBM does not grant read/write DMI from address 0");
  m_hbm = dmi.get_dmi_ptr();
  for (unsigned i = 0; i < m_ports.size(); ++i) {
    if (!m_ports[i]->connected()) continue;
    core::link& out = m_ports[i]->out();
    m_rx[i]->attach(dynamic_cast<sw::ib::credit_peer*>(out.sink()), out.sink_port(), out);
    const std::string k = "link" + std::to_string(i) + ".";
    m_ctx.stats.counter(inst, k + "tx_packets", "packets", "packets sent on this link",
                        m_ports[i]->tx_packets_counter());
    m_ctx.stats.counter(inst, k + "tx_bytes", "bytes", "wire bytes sent on this link", m_ports[i]->tx_bytes_counter());
    m_ctx.stats.counter(inst, k + "credit_stall_ps", "ps", "time a ready packet waited for credit (closed stalls)",
                        m_ports[i]->sender().stall_ps_counter(0));
  }
}

void gpu_endpoint::post(const gpu_transfer& t) {
  core::require(t.bytes > 0 && t.bytes <= UINT32_MAX, name(),
                "a transfer of " + std::to_string(t.bytes) + " bytes (1 byte to 4 GiB)");
  core::require(t.generated || !m_data || t.src_addr + t.bytes <= hbm.size(), name(),
                "transfer source [" + std::to_string(t.src_addr) + ", +" + std::to_string(t.bytes) +
                    ") is outside the HBM modelled (" + std::to_string(hbm.size()) + " bytes)");
  const uint64_t packets = (t.bytes + m_params.max_payload_bytes - 1) / m_params.max_payload_bytes;
  const unsigned links = unsigned(m_ports.size());
  const unsigned first = t.fixed_first_link ? t.first_link % links : m_next_link;
  if (!t.fixed_first_link) m_next_link = unsigned((m_next_link + packets) % links);
  m_queue.push_back({t, packets, first});
  const picoseconds now = core::now();
  for (auto& port : m_ports) port->kick(now);
}

// The next packet of link `port`: packet k of the transfer it is on, k = first_link + port (mod links) and
// then every links-th; past the transfer's end, on to the next transfer.
core::packet* gpu_endpoint::pull(unsigned port) {
  const unsigned links = unsigned(m_ports.size());
  cursor& c = m_cursor[port];
  while (c.seq < m_base + m_queue.size()) {
    active& a = m_queue[c.seq - m_base];
    if (c.k == UINT64_MAX) c.k = (port + links - a.first_link) % links;
    if (c.k < a.packets) {
      const uint64_t off = c.k * m_params.max_payload_bytes;
      const uint64_t len = std::min<uint64_t>(m_params.max_payload_bytes, a.t.bytes - off);
      c.k += links;
      core::packet* p = m_ctx.pool.acquire();
      p->kind = core::frame_kind::nvlink;
      p->bth.opcode = a.t.opcode;
      p->lrh.dlid = uint16_t(a.t.dst_gpu);
      p->lrh.slid = uint16_t(m_index);
      p->reth.va = a.t.dst_addr + off;
      p->reth.rkey = a.t.tag;
      p->reth.dma_length = uint32_t(a.t.bytes);
      p->payload_bytes = uint32_t(len);
      p->payload_va = a.t.src_addr + off;
      p->payload_host = m_host;
      p->payload = (m_data && !a.t.generated) ? m_hbm + a.t.src_addr + off : nullptr;
      p->sealed_wire_bytes = uint32_t(m_params.wire_bytes(len));
      return p;
    }
    ++a.links_done;
    ++c.seq;
    c.k = UINT64_MAX;
    retire_sent();
  }
  return nullptr;
}

void gpu_endpoint::retire_sent() {
  while (!m_queue.empty() && m_queue.front().links_done == m_ports.size()) {
    m_queue.pop_front();
    ++m_base;
  }
}

void gpu_endpoint::receive(core::packet* p, unsigned port) {
  if (p->kind != core::frame_kind::nvlink) {
    ++m_not_nvlink;
    m_ctx.pool.release(p);
    return;
  }
  const picoseconds t = core::now();
  const uint64_t flits = m_params.flits(p->wire().value);
  m_rx[port]->received(0, flits);
  ++m_rx_packets;
  if (m_data) place(*p);
  m_landed_bytes += p->payload_bytes;
  m_rx[port]->released(0, flits, t);  // HBM takes the write at line rate
  const uint64_t key = uint64_t(p->lrh.slid) << 32 | p->reth.rkey;
  const uint64_t total = p->reth.dma_length;
  const uint64_t got = (m_arriving[key] += p->payload_bytes);
  const gpu_arrival arrival{p->lrh.slid, p->reth.rkey, total, t};
  m_ctx.pool.release(p);
  if (got < total) return;
  m_arriving.erase(key);
  ++m_transfers_landed;
  if (m_on_arrival) m_on_arrival(arrival);
}

void gpu_endpoint::place(const core::packet& p) {
  const uint64_t va = p.reth.va, len = p.payload_bytes;
  if (p.payload == nullptr) {
    if (m_pattern == nullptr)  // (not a require() per packet: its message would be a std::string built each time)
      core::require(false, name(), "a generated payload arrived at a GPU without the payload pattern");
    if (m_landing) m_landing->landed_generated(va, *m_pattern, p.payload_host, p.payload_va, len);
    return;  // generated: checked as it lands by the source bytes it names, not stored
  }
  if (va + len > hbm.size())
    core::require(false, name(),
                  "NVLink write [" + std::to_string(va) + ", +" + std::to_string(len) + ") outside the HBM modelled");
  std::memcpy(m_hbm + va, p.payload, len);
  if (m_landing) m_landing->landed(va, m_hbm + va, len);
}

void gpu_endpoint::credit_update(unsigned port, unsigned /*vl*/, uint64_t fccl_blocks) {
  m_ports[port]->credit(fccl_blocks, core::now());
}

uint64_t gpu_endpoint::credit_overruns() const {
  uint64_t n = 0;
  for (const auto& rx : m_rx) n += rx->overruns();
  return n;
}

uint64_t gpu_endpoint::credit_violations() const {
  uint64_t n = 0;
  for (const auto& port : m_ports) n += port->sender().violations();
  return n;
}

}  // namespace fabricsim::nvlink
