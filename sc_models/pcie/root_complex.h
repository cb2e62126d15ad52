// The CPU's PCIe root complex with host memory behind it: requests from the switch's upstream port go to host
// memory when they fall in its window and otherwise back down to the switch (peer-to-peer traffic that ACS
// redirected up), each way after the root complex's own latency.
#pragma once

#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "sc_models/core/params.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/units.h"
#include "sc_models/pcie/pcie_memory.h"

namespace fabricsim::pcie {

struct root_complex_params {
  double latency_ns = 150.0;              // one traversal of the root complex (request in, or response out)
  uint64_t host_base = 0;                 // host memory's window in the system address map
  uint64_t host_size_bytes = 1ull << 30;
  pcie_memory_params memory{/*bandwidth_gbps=*/2000.0, /*latency_ns=*/120.0, /*queue_bytes=*/65536};
  void visit(core::param_visitor& v);
};

class root_complex : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(root_complex);
  tlm_utils::simple_target_socket<root_complex> from_switch;         // bound by the root port's to_device
  tlm_utils::simple_initiator_socket_tagged<root_complex> to_switch;  // binds to the root port's from_device
  pcie_memory host_memory;

  root_complex(sc_core::sc_module_name name, const root_complex_params& params);
  root_complex(const root_complex&) = delete;
  root_complex& operator=(const root_complex&) = delete;

  uint64_t turned_around() const { return m_turned; }  // requests sent back down (peer-to-peer via the root)

 private:
  tlm::tlm_sync_enum fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum bw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void on_wake();
  void send(unsigned out);
  void responded(tlm::tlm_generic_payload& gp);
  void reschedule();

  struct due {
    core::picoseconds at;
    tlm::tlm_generic_payload* gp;
  };
  struct output {
    core::ring<tlm::tlm_generic_payload*> queue{64};
    bool open = false;
  };
  tlm_utils::simple_initiator_socket_tagged<root_complex> m_to_memory;
  root_complex_params m_params;
  core::picoseconds m_latency;
  core::ring<due> m_inbound{64};
  core::ring<due> m_outbound{64};
  output m_out[2];  // 0: host memory, 1: back down to the switch
  sc_core::sc_event m_wake;
  uint64_t m_turned = 0;
};

}  // namespace fabricsim::pcie
