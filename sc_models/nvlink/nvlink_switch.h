// The NVLink switch chip (fifth-generation NVLink, two per NVL72 switch tray): output-queued ports with
// credit-based flow control per port (one credit per flit, the machinery of sc_models/ib/credit_link), packets
// forwarded by destination GPU, and an NVLS unit for in-switch reduction and multicast (nvls_unit.h).
//
// Stages of one packet, in the order receive() runs them:
//   ingress: the packet's flits are counted into the ingress port's buffer (credit_receiver::received);
//   lookup:  destination GPU (lrh.dlid) -> egress port, from the table the domain builder fills; an NVLS
//            contribution goes to the NVLS unit instead, which reduces it and frees its buffer at once;
//   queue:   it joins the egress port's FIFO, ready `switch_latency_ns` after it arrived (the chip's port-to-
//            port latency is added to its earliest departure rather than spent in an event);
//   transmit: nvlink_port sends it when the wire is free and the far end has credit for its flits; at that
//            moment its ingress flits are released, and the credit return goes back upstream.
// Nothing is dropped: a full buffer stops its sender through credits.
#pragma once

#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/packet.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/ib/credit_link.h"
#include "sc_models/nvlink/nvlink_params.h"
#include "sc_models/nvlink/nvlink_port.h"
#include "sc_models/nvlink/nvls_unit.h"

namespace fabricsim::nvlink {

class nvlink_switch : public sc_core::sc_module,
                      public core::packet_sink,
                      public sw::ib::credit_peer,
                      public nvlink_port_owner,
                      public nvls_egress {
 public:
  // `chip`: this chip's index in its domain (which NVLS packets it reduces); `ports`: its NVLink ports.
  nvlink_switch(sc_core::sc_module_name name, const nvlink_params& params, unsigned chip, unsigned ports,
                core::sim_context& ctx);
  ~nvlink_switch() override;
  nvlink_switch(const nvlink_switch&) = delete;
  nvlink_switch& operator=(const nvlink_switch&) = delete;

  // Elaboration: the link port `port` transmits on, and the first egress port towards each GPU (ports
  // port .. port + links_per_chip - 1 lead to it).
  void connect_port(unsigned port, core::link& out);
  void set_route(uint32_t gpu, unsigned port);
  unsigned ports() const { return unsigned(m_ports.size()); }
  unsigned chip() const { return m_chip; }

  // NVLS: an operation over the members (the domain builder gives each member's port on this chip).
  void start_nvls(const nvls_op& op) { m_nvls.start(op); }
  const nvls_unit& nvls() const { return m_nvls; }

  // packet_sink
  void receive(core::packet* p, unsigned port) override;
  // credit_peer
  void credit_update(unsigned port, unsigned vl, uint64_t fccl_blocks) override;
  sw::ib::credit_receiver* receiver_at(unsigned port) override { return m_rx[port].get(); }
  // nvlink_port_owner
  void departed(core::packet* p, unsigned port, core::picoseconds t) override;
  // nvls_egress
  void emit(unsigned port, core::packet* p, core::picoseconds ready) override;

  const nvlink_port& port(unsigned i) const { return *m_ports[i]; }
  const sw::ib::credit_receiver& receiver(unsigned i) const { return *m_rx[i]; }
  uint64_t received() const { return m_received; }
  uint64_t no_route() const { return m_no_route; }
  // Credits: flits received beyond an advertised limit (receivers) and sends beyond it (senders), all ports.
  uint64_t credit_overruns() const;
  uint64_t credit_violations() const;

 protected:
  void end_of_elaboration() override;

 private:
  nvlink_params m_params;
  unsigned m_chip;
  core::sim_context& m_ctx;
  core::picoseconds m_latency;
  std::vector<std::unique_ptr<nvlink_port>> m_ports;
  std::vector<std::unique_ptr<sw::ib::credit_receiver>> m_rx;
  std::vector<int32_t> m_route;  // by destination GPU: egress port, -1 none
  nvls_unit m_nvls;
  uint64_t m_received = 0, m_no_route = 0, m_not_nvlink = 0;
};

}  // namespace fabricsim::nvlink
