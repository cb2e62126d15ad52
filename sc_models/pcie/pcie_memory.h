// A memory behind a PCIe port (the GPU's HBM, or host memory behind the root complex): a TLM-2.0 AT target
// with one channel of a given bandwidth that every access occupies in turn, a fixed access latency, and a
// request queue of bounded depth: a request is accepted (END_REQ) once the channel's backlog is below the
// queue depth, so a busy memory holds its port's receive buffer and the link's credits throttle the sender.
#pragma once

#include <cstdint>
#include <memory>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "sc_models/core/params.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/units.h"

namespace fabricsim::pcie {

struct pcie_memory_params {
  double bandwidth_gbps = 8000.0;   // channel bandwidth for PCIe traffic (HBM3e: far above any link)
  double latency_ns = 300.0;        // access latency after the channel has moved the bytes (estimate)
  uint64_t queue_bytes = 65536;     // backlog accepted before END_REQ is held back
  void visit(core::param_visitor& v);
};

class pcie_memory : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(pcie_memory);
  tlm_utils::simple_target_socket<pcie_memory> socket;

  pcie_memory(sc_core::sc_module_name name, uint64_t size_bytes, const pcie_memory_params& params = {});
  // Over storage someone else owns (a fabric host's memory, so that the workload's buffers and the end-of-run
  // check see the bytes exactly where the PCIe writes landed them); `backing` must outlive this memory.
  pcie_memory(sc_core::sc_module_name name, uint8_t* backing, uint64_t size_bytes,
              const pcie_memory_params& params = {});
  pcie_memory(const pcie_memory&) = delete;
  pcie_memory& operator=(const pcie_memory&) = delete;

  uint8_t* data() { return m_external ? m_external : m_data.get(); }
  uint64_t size() const { return m_size; }

  uint64_t bytes_written() const { return m_written; }
  uint64_t bytes_read() const { return m_read; }
  // Time the channel has been busy (for utilisation).
  core::picoseconds busy() const { return m_busy; }

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void on_wake();
  void reschedule();

  struct due {
    core::picoseconds at;
    tlm::tlm_generic_payload* gp;
  };
  struct unmap_deleter {
    uint64_t length;
    void operator()(uint8_t* p) const;
  };
  uint64_t m_size;
  std::unique_ptr<uint8_t, unmap_deleter> m_data;  // anonymous mapping: pages appear zeroed on first touch
  uint8_t* m_external = nullptr;                    // or storage owned elsewhere
  pcie_memory_params m_params;
  double m_ps_per_byte;
  core::picoseconds m_latency, m_queue_time;
  core::picoseconds m_channel_free{}, m_busy{};
  core::ring<due> m_end_req;
  core::ring<due> m_responses;
  sc_core::sc_event m_wake;
  uint64_t m_written = 0, m_read = 0;
};

}  // namespace fabricsim::pcie
