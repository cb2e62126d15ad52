// The NVLink switch chip: credit-based NVLink ports, forwarding by destination GPU, NVLS.
#include "sc_models/nvlink/nvlink_switch.h"

namespace fabricsim::nvlink {

using core::picoseconds;

nvlink_switch::nvlink_switch(sc_core::sc_module_name name, const nvlink_params& params, unsigned chip, unsigned ports,
                             core::sim_context& ctx)
    : sc_core::sc_module(name),
      m_params(params),
      m_chip(chip),
      m_ctx(ctx),
      m_latency(picoseconds::from_ns(params.switch_latency_ns)),
      m_nvls(*this, ctx, chip, unsigned(params.switch_chips), unsigned(params.links_per_chip()), params.header_bytes,
             params.flit_bytes, picoseconds::from_ns(params.nvls_latency_ns)) {
  const std::string inst = this->name();
  params.validate(inst + ": nvlink");
  core::require(ports > 0 && ports < UINT16_MAX, inst, "needs between 1 and 65534 ports, not " + std::to_string(ports));
  const sw::ib::credit_params credit = params.credits();
  for (unsigned i = 0; i < ports; ++i) {
    m_ports.push_back(std::make_unique<nvlink_port>(*this, i, params.flit_bytes, ctx.calendar));
    m_rx.push_back(std::make_unique<sw::ib::credit_receiver>(credit, 1, ctx.calendar));
  }
  auto& s = ctx.stats;
  s.counter(inst, "received", "packets", "NVLink packets received on any port", &m_received);
  s.counter(inst, "no_route", "packets", "packets discarded for want of a route to their destination GPU", &m_no_route);
  s.counter(inst, "not_nvlink", "packets", "frames that are not NVLink packets, discarded", &m_not_nvlink);
  const nvls_unit::counters_t& c = m_nvls.counters();
  s.counter(inst, "nvls_contributions", "packets", "NVLS contributions reduced", &c.contributions);
  s.counter(inst, "nvls_bytes_reduced", "bytes", "NVLS payload bytes through the reduction", &c.bytes_reduced);
  s.counter(inst, "nvls_results", "packets", "NVLS packets whose result was multicast", &c.results);
  s.counter(inst, "nvls_copies", "packets", "NVLS result packets sent (results x members)", &c.copies);
  s.counter(inst, "nvls_max_partials", "packets", "most NVLS packets partly reduced at once", &c.max_partials);
  s.counter(inst, "nvls_unexpected", "packets", "NVLS contributions of no operation or of another chip", &c.unexpected);
}

nvlink_switch::~nvlink_switch() = default;

void nvlink_switch::connect_port(unsigned port, core::link& out) {
  core::require(port < m_ports.size(), name(), "port " + std::to_string(port) + " out of range");
  core::require(!m_ports[port]->connected(), name(), "port " + std::to_string(port) + " connected twice");
  m_ports[port]->connect(out);
}

void nvlink_switch::set_route(uint32_t gpu, unsigned port) {
  core::require(port + m_params.links_per_chip() <= m_ports.size(), name(),
                "route to GPU " + std::to_string(gpu) + " names port " + std::to_string(port) + ", out of range");
  if (gpu >= m_route.size()) m_route.resize(gpu + 1, -1);
  m_route[gpu] = int32_t(port);
}

void nvlink_switch::end_of_elaboration() {
  // Link initialisation: each port's receiver tells the far end (a GPU's port) its limit in flits.
  const std::string inst = name();
  for (unsigned i = 0; i < m_ports.size(); ++i) {
    if (!m_ports[i]->connected()) continue;
    core::link& out = m_ports[i]->out();
    m_rx[i]->attach(dynamic_cast<sw::ib::credit_peer*>(out.sink()), out.sink_port(), out);
    const std::string k = "port" + std::to_string(i) + ".";
    m_ctx.stats.counter(inst, k + "tx_packets", "packets", "packets sent on this port",
                        m_ports[i]->tx_packets_counter());
    m_ctx.stats.counter(inst, k + "tx_bytes", "bytes", "wire bytes sent on this port", m_ports[i]->tx_bytes_counter());
    m_ctx.stats.counter(inst, k + "credit_stall_ps", "ps", "time a ready packet waited for credit (closed stalls)",
                        m_ports[i]->sender().stall_ps_counter(0));
  }
}

void nvlink_switch::receive(core::packet* p, unsigned port) {
  const picoseconds t = core::now();
  if (p->kind != core::frame_kind::nvlink) {
    ++m_not_nvlink;
    m_ctx.pool.release(p);
    return;
  }
  ++m_received;
  const uint64_t flits = m_params.flits(p->wire().value);
  m_rx[port]->received(0, flits);
  if (p->bth.opcode == core::bth_opcode::nvls_contribution) {
    m_nvls.contribution(*p, port, t);  // reduced on arrival: its buffer is free again
    m_rx[port]->released(0, flits, t);
    m_ctx.pool.release(p);
    return;
  }
  const uint32_t gpu = p->lrh.dlid;
  if (gpu >= m_route.size() || m_route[gpu] < 0) {
    ++m_no_route;
    m_rx[port]->released(0, flits, t);
    m_ctx.pool.release(p);
    return;
  }
  p->hop_in_port = uint16_t(port);
  // With several links to one GPU, a packet leaves on the link with the index it came in on (the sender's
  // round robin is kept end to end).
  const unsigned lpc = unsigned(m_params.links_per_chip());
  m_ports[unsigned(m_route[gpu]) + port % lpc]->enqueue(p, t + m_latency);
}

void nvlink_switch::emit(unsigned port, core::packet* p, picoseconds ready) { m_ports[port]->enqueue(p, ready); }

void nvlink_switch::departed(core::packet* p, unsigned /*port*/, picoseconds t) {
  if (p->hop_in_port == UINT16_MAX) return;  // an NVLS result: made here, no ingress buffer held
  m_rx[p->hop_in_port]->released(0, m_params.flits(p->wire().value), t);
}

void nvlink_switch::credit_update(unsigned port, unsigned /*vl*/, uint64_t fccl_blocks) {
  m_ports[port]->credit(fccl_blocks, core::now());
}

uint64_t nvlink_switch::credit_overruns() const {
  uint64_t n = 0;
  for (const auto& rx : m_rx) n += rx->overruns();
  return n;
}

uint64_t nvlink_switch::credit_violations() const {
  uint64_t n = 0;
  for (const auto& port : m_ports) n += port->sender().violations();
  return n;
}

}  // namespace fabricsim::nvlink
