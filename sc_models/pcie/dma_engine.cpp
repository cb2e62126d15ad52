// A DMA engine on a PCIe port: pooled TLM-2.0 AT requests, one request phase at a time.
#include "sc_models/pcie/dma_engine.h"

namespace fabricsim::pcie {

dma_engine::dma_engine(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {
  socket.register_nb_transport_bw(this, &dma_engine::nb_transport_bw);
  SC_METHOD(issue);
  sensitive << m_kick;
  dont_initialize();
}

void dma_engine::write(uint64_t address, uint8_t* data, uint32_t length, uint64_t cookie, bool ro) {
  queue(tlm::TLM_WRITE_COMMAND, address, data, length, cookie, ro);
}

void dma_engine::read(uint64_t address, uint8_t* data, uint32_t length, uint64_t cookie, bool ro) {
  queue(tlm::TLM_READ_COMMAND, address, data, length, cookie, ro);
}

void dma_engine::queue(tlm::tlm_command cmd, uint64_t address, uint8_t* data, uint32_t length, uint64_t cookie,
                       bool ro) {
  tlm::tlm_generic_payload* gp = m_payloads.acquire();
  gp->set_command(cmd);
  gp->set_address(address);
  gp->set_data_ptr(data);
  gp->set_data_length(length);
  gp->set_streaming_width(length);
  tlp_extension* e = extension_of(*gp);
  e->type = cmd == tlm::TLM_WRITE_COMMAND ? tlp_type::mem_write : tlp_type::mem_read;
  e->relaxed_ordering = ro;
  e->cookie = cookie;
  m_pending.push_back(gp);
  ++m_outstanding;
  if (!m_open) m_kick.notify(sc_core::SC_ZERO_TIME);
}

void dma_engine::issue() {
  while (!m_open && !m_pending.empty()) {
    tlm::tlm_generic_payload* gp = m_pending.front();
    m_pending.pop_front();
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    m_open = gp;
    const tlm::tlm_sync_enum r = socket->nb_transport_fw(*gp, phase, delay);
    if (r == tlm::TLM_ACCEPTED) return;
    m_open = nullptr;
    if (r == tlm::TLM_COMPLETED || phase == tlm::BEGIN_RESP) finish(*gp);
  }
}

void dma_engine::finish(tlm::tlm_generic_payload& gp) {
  const uint64_t cookie = extension_of(gp)->cookie;
  const bool ok = gp.get_response_status() == tlm::TLM_OK_RESPONSE;
  --m_outstanding;
  ++m_completed;
  gp.release();
  if (m_handler) m_handler->dma_done(cookie, ok);
}

tlm::tlm_sync_enum dma_engine::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                               sc_core::sc_time&) {
  if (phase == tlm::END_REQ || phase == tlm::BEGIN_RESP) {
    if (m_open == &gp) {
      m_open = nullptr;
      m_kick.notify(sc_core::SC_ZERO_TIME);
    }
  }
  if (phase == tlm::BEGIN_RESP) {
    finish(gp);
    return tlm::TLM_COMPLETED;
  }
  return tlm::TLM_ACCEPTED;
}

}  // namespace fabricsim::pcie
