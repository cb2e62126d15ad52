// The ConnectX-8 PCIe switch: ports with a PCIe link each (GPU Gen6 x16, CPU root complex Gen5 x16, SSD Gen5 x4
// and the NIC's internal port in a GB300 tray, configurable), TLP-sized requests cut from TLM-2.0 requests,
// routing by address windows (BARs) and requester IDs, cut-through forwarding, and peer-to-peer between
// downstream ports either direct or forced up through the root complex (as ACS request redirect does).
//
// Each port speaks TLM-2.0 approximately-timed base protocol to its device: an initiator (a DMA engine)
// binds to `from_device`, a target (a memory) to `to_device`. The link and credit model times the phases:
// END_REQ when the request's last TLP has left the device's transmitter, BEGIN_RESP when a posted write has
// reached its target (a local notification: no TLP returns) or a read's last completion has arrived.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "sc_models/core/params.h"
#include "sc_models/pcie/pcie_link.h"
#include "sc_models/pcie/tlp.h"

namespace fabricsim::pcie {

// TLP settings shared by the hierarchy (Device Control register values and header formats).
struct pcie_tlp_params {
  uint64_t max_payload_bytes = 256;               // MPS
  uint64_t max_read_request_bytes = 512;          // MRRS
  uint64_t read_completion_boundary_bytes = 64;   // RCB: completions of a split read end on these boundaries
  uint64_t request_header_bytes = 16;             // memory request with a 64-bit address: 4 DW
  uint64_t completion_header_bytes = 12;          // completion: 3 DW
  void visit(core::param_visitor& v);
};

struct pcie_switch_params {
  pcie_tlp_params tlp;
  uint64_t lanes_total = 48;                // lanes of the switch's external ports (the NIC's is internal)
  double cut_through_latency_ns = 100.0;    // header in at ingress to first byte out at egress (estimate)
  std::string peer_to_peer = "direct";      // direct | via_root_complex (ACS P2P request redirect)
  void visit(core::param_visitor& v);
};

// One port: its name, its link (the same parameters both ways), whether it leads to the root complex (the
// upstream port) and the address windows of the device behind it. Requests to an endpoint's window reach it
// with the window's base subtracted; the root complex sees system addresses.
struct pcie_port_config {
  struct window {
    uint64_t base = 0, size = 0;
  };
  std::string name;
  pcie_link_params link;
  bool root = false;
  bool internal = false;  // on-die (the NIC's port): not counted against lanes_total
  std::vector<window> windows;
};

// The GB300 tray's ConnectX-8: gpu (Gen6 x16), cpu (Gen5 x16, root), ssd (Gen5 x4), nic (internal, Gen6 x16).
std::vector<pcie_port_config> connectx8_gb300_ports();

class pcie_switch;

class pcie_port : public sc_core::sc_module, public tlp_receiver {
 public:
  using target_socket_t = tlm_utils::multi_passthrough_target_socket<pcie_port, 32, tlm::tlm_base_protocol_types, 1,
                                                                     sc_core::SC_ZERO_OR_MORE_BOUND>;
  using initiator_socket_t =
      tlm_utils::multi_passthrough_initiator_socket<pcie_port, 32, tlm::tlm_base_protocol_types, 1,
                                                    sc_core::SC_ZERO_OR_MORE_BOUND>;
  target_socket_t from_device;    // the device's initiator binds here
  initiator_socket_t to_device;   // ... and its target here
  pcie_link up;                   // device -> switch
  pcie_link down;                 // switch -> device

  pcie_port(sc_core::sc_module_name name, pcie_switch& sw, unsigned index, const pcie_port_config& config);
  const pcie_port_config& config() const { return m_config; }
  unsigned index() const { return m_index; }

 private:
  friend class pcie_switch;
  void receive(tlp& t, pcie_link& from) override;
  void committed(tlp& t, pcie_link& on) override;
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);

  pcie_switch& m_switch;
  unsigned m_index;
  pcie_port_config m_config;
  // Requests delivered to the device, oldest first; the head waits for END_REQ (one request phase at a time).
  tlp* m_to_device_head = nullptr;
  tlp* m_to_device_tail = nullptr;
  bool m_request_open = false;
};

class pcie_switch : public sc_core::sc_module {
 public:
  pcie_switch(sc_core::sc_module_name name, const pcie_switch_params& params,
              const std::vector<pcie_port_config>& ports = connectx8_gb300_ports());
  pcie_switch(const pcie_switch&) = delete;
  pcie_switch& operator=(const pcie_switch&) = delete;

  pcie_port& port(unsigned i) { return *m_ports.at(i); }
  pcie_port& port(const std::string& name);
  unsigned ports() const { return unsigned(m_ports.size()); }
  const pcie_switch_params& params() const { return m_params; }

  // Registers the switch's counters and every port link's under their SystemC names.
  void register_stats(core::stats_registry& stats) const;

  // Statistics.
  uint64_t requests() const { return m_requests; }
  uint64_t completions_sent() const { return m_completions; }
  uint64_t redirected_to_root() const { return m_redirected; }
  uint64_t unsupported_requests() const { return m_unsupported; }
  size_t pooled_tlps() const { return m_tlp_pool.allocated(); }

 private:
  friend class pcie_port;
  // Bookkeeping of a request taken from a device: its TLP-sized children still to finish.
  struct request_state {
    tlm::tlm_generic_payload* gp = nullptr;
    unsigned port = 0;
    uint32_t uncommitted = 0;
    uint32_t pending = 0;
    bool error = false;
  };

  tlm::tlm_sync_enum begin_request(unsigned p, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void request_committed(unsigned p, tlp& t);
  void ingress(unsigned p, tlp& t);
  void at_device(unsigned q, tlp& t);
  void offer_to_device(unsigned q);
  void device_accepted(unsigned q);
  void device_responded(unsigned q, tlm::tlm_generic_payload& gp);
  void child_done(tlm::tlm_generic_payload& child);
  int route(uint64_t address) const;

  pcie_switch_params m_params;
  std::vector<std::unique_ptr<pcie_port>> m_ports;
  unsigned m_root = 0;
  bool m_has_root = false;
  bool m_p2p_via_root = false;
  core::picoseconds m_cut_through{};
  object_pool<tlp> m_tlp_pool;
  object_pool<request_state> m_state_pool;
  payload_pool m_payloads;
  uint16_t m_next_tag = 0;
  uint64_t m_requests = 0, m_completions = 0, m_redirected = 0, m_unsupported = 0;
};

}  // namespace fabricsim::pcie
