// The CPU's PCIe root complex: host memory, and the turn-around for peer-to-peer traffic redirected up.
#include "sc_models/pcie/root_complex.h"

namespace fabricsim::pcie {

void root_complex_params::visit(core::param_visitor& v) {
  v.field({"latency_ns", "ns", "one traversal of the root complex (request in, or response out)", 0, 1e6},
          latency_ns);
  v.field({"host_base", "", "host memory's base in the system address map", 0, 1.8e19}, host_base);
  v.field({"host_size_bytes", "bytes", "host memory modelled", 4096, 1ull << 40}, host_size_bytes);
}

root_complex::root_complex(sc_core::sc_module_name name, const root_complex_params& params)
    : sc_core::sc_module(name),
      from_switch("from_switch"),
      to_switch("to_switch"),
      host_memory("host_memory", params.host_size_bytes, params.memory),
      m_to_memory("to_memory"),
      m_params(params) {
  core::check_ranges(m_params, this->name());
  m_latency = core::picoseconds::from_ns(m_params.latency_ns);
  from_switch.register_nb_transport_fw(this, &root_complex::fw);
  to_switch.register_nb_transport_bw(this, &root_complex::bw, 1);
  m_to_memory.register_nb_transport_bw(this, &root_complex::bw, 0);
  m_to_memory.bind(host_memory.socket);
  SC_METHOD(on_wake);
  sensitive << m_wake;
  dont_initialize();
}

tlm::tlm_sync_enum root_complex::fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time&) {
  if (phase != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;  // END_RESP
  // Accepted at once into the root complex's queues (not bounded here: see docs/pcie.md).
  gp.acquire();
  m_inbound.push_back({core::now() + m_latency, &gp});
  reschedule();
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

void root_complex::send(unsigned out) {
  output& o = m_out[out];
  while (!o.open && !o.queue.empty()) {
    tlm::tlm_generic_payload* gp = o.queue.front();
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    o.open = true;
    const tlm::tlm_sync_enum r =
        out == 0 ? m_to_memory->nb_transport_fw(*gp, phase, delay) : to_switch->nb_transport_fw(*gp, phase, delay);
    if (r == tlm::TLM_ACCEPTED) return;
    o.open = false;
    o.queue.pop_front();
    if (r == tlm::TLM_COMPLETED || phase == tlm::BEGIN_RESP) responded(*gp);
  }
}

tlm::tlm_sync_enum root_complex::bw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time&) {
  output& o = m_out[id];
  if (o.open && !o.queue.empty() && o.queue.front() == &gp && (phase == tlm::END_REQ || phase == tlm::BEGIN_RESP)) {
    o.open = false;
    o.queue.pop_front();
    m_wake.notify(sc_core::SC_ZERO_TIME);  // the next request goes in the on_wake pass
  }
  if (phase == tlm::BEGIN_RESP) {
    responded(gp);
    return tlm::TLM_COMPLETED;
  }
  return tlm::TLM_ACCEPTED;
}

void root_complex::responded(tlm::tlm_generic_payload& gp) {
  // A read's completions pass through the root complex; a posted write's response is only the model's
  // notification that it landed, with nothing crossing the root complex, so it goes back at once.
  if (gp.is_write()) {
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    from_switch->nb_transport_bw(gp, phase, zero);
    gp.release();
    return;
  }
  m_outbound.push_back({core::now() + m_latency, &gp});
  reschedule();
}

void root_complex::on_wake() {
  const core::picoseconds now = core::now();
  while (!m_inbound.empty() && m_inbound.front().at <= now) {
    tlm::tlm_generic_payload* gp = m_inbound.front().gp;
    m_inbound.pop_front();
    const uint64_t a = gp->get_address();
    if (a >= m_params.host_base && a - m_params.host_base < m_params.host_size_bytes) {
      gp->set_address(a - m_params.host_base);
      m_out[0].queue.push_back(gp);
    } else {
      ++m_turned;
      m_out[1].queue.push_back(gp);
    }
  }
  send(0);
  send(1);
  while (!m_outbound.empty() && m_outbound.front().at <= now) {
    tlm::tlm_generic_payload* gp = m_outbound.front().gp;
    m_outbound.pop_front();
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    from_switch->nb_transport_bw(*gp, phase, zero);
    gp->release();
  }
  reschedule();
}

void root_complex::reschedule() {
  const core::picoseconds now = core::now();
  uint64_t next = UINT64_MAX;
  if (!m_inbound.empty()) next = std::min(next, m_inbound.front().at.value);
  if (!m_outbound.empty()) next = std::min(next, m_outbound.front().at.value);
  if (next != UINT64_MAX) m_wake.notify(core::to_sc_time(core::picoseconds(next > now.value ? next - now.value : 0)));
}

}  // namespace fabricsim::pcie
