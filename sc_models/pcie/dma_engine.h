// A DMA engine on a PCIe port (the NIC's, or a GPU copy engine): issues memory writes and reads as TLM-2.0 AT
// requests, one request phase at a time as the base protocol requires, and reports each completion to a
// handler. Payloads come from a pool: nothing is allocated per request once warm.
#pragma once

#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "sc_models/core/ring.h"
#include "sc_models/core/units.h"
#include "sc_models/pcie/tlp.h"

namespace fabricsim::pcie {

class dma_engine : public sc_core::sc_module {
 public:
  class handler {
   public:
    virtual ~handler() = default;
    virtual void dma_done(uint64_t cookie, bool ok) = 0;
  };

  SC_HAS_PROCESS(dma_engine);
  tlm_utils::simple_initiator_socket<dma_engine> socket;

  explicit dma_engine(sc_core::sc_module_name name);
  dma_engine(const dma_engine&) = delete;
  dma_engine& operator=(const dma_engine&) = delete;

  void set_handler(handler& h) { m_handler = &h; }
  // Queue a transfer; `data` must stay valid until it completes. `relaxed_ordering` sets the TLP attribute.
  void write(uint64_t address, uint8_t* data, uint32_t length, uint64_t cookie, bool relaxed_ordering = false);
  void read(uint64_t address, uint8_t* data, uint32_t length, uint64_t cookie, bool relaxed_ordering = false);
  uint64_t outstanding() const { return m_outstanding; }
  uint64_t completed() const { return m_completed; }

 private:
  void queue(tlm::tlm_command cmd, uint64_t address, uint8_t* data, uint32_t length, uint64_t cookie, bool ro);
  void issue();
  void finish(tlm::tlm_generic_payload& gp);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  payload_pool m_payloads;
  core::ring<tlm::tlm_generic_payload*> m_pending{256};
  tlm::tlm_generic_payload* m_open = nullptr;  // its request phase is not over
  handler* m_handler = nullptr;
  sc_core::sc_event m_kick;
  uint64_t m_outstanding = 0, m_completed = 0;
};

}  // namespace fabricsim::pcie
