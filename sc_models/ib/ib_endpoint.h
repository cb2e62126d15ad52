// A minimal InfiniBand channel adapter port: a credit-honouring traffic source and a receiver with a
// finite drain rate, on one link. It stands in for the HCA until the SuperNIC's RC engine is put behind IB
// headers (nic.link_layer: infiniband is not there yet): it builds LRH/BTH packets of a given MTU, sends a
// queue of flows back to back at line rate but never without credit from its switch port, and advertises
// its own receive buffer per VL to the switch, releasing blocks as the host drains them. The credit logic
// is the same credit_sender / credit_receiver pair the switch ports use.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>

#include "sc_models/core/link.h"
#include "sc_models/core/params.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/ib/credit_link.h"

namespace fabricsim::sw {

struct ib_endpoint_params {
  uint64_t lid = 1;
  uint64_t mtu = 4096;        // payload bytes per packet: 256, 512, 1024, 2048 or 4096
  uint64_t data_vls = 1;
  double drain_gbps = 0.0;    // how fast the host takes received data out of the buffer; 0: at once
  bool grh = false;           // carry a global route header (40 B)
  ib::credit_params credit;
  void visit(core::param_visitor& v);
};

class ib_endpoint : public sc_core::sc_module, public core::packet_sink, public ib::credit_peer,
                    public core::calendar_client {
 public:
  ib_endpoint(sc_core::sc_module_name name, const ib_endpoint_params& params, core::sim_context& ctx);
  ib_endpoint(const ib_endpoint&) = delete;
  ib_endpoint& operator=(const ib_endpoint&) = delete;

  void connect(core::link& out);
  // Queues a flow: `bytes` of payload to `dlid` on service level `sl`, cut into MTU-sized packets, starting
  // no earlier than `start`. Flows go one after another.
  void send(uint16_t dlid, uint64_t bytes, unsigned sl, core::picoseconds start = {});

  void receive(core::packet* p, unsigned port) override;
  void credit_update(unsigned port, unsigned vl, uint64_t fccl_blocks) override;
  void on_due(core::picoseconds t) override;

  ib::credit_sender& sender() { return m_sender; }
  ib::credit_receiver& receiver() { return m_rx; }
  uint64_t tx_packets() const { return m_tx_packets; }
  uint64_t tx_payload() const { return m_tx_payload; }
  uint64_t rx_packets() const { return m_rx_packets; }
  uint64_t rx_payload() const { return m_rx_payload; }
  uint64_t rx_wire_bytes() const { return m_rx_wire; }
  core::picoseconds first_rx() const { return m_first_rx; }
  core::picoseconds last_rx() const { return m_last_rx; }
  core::picoseconds last_tx_done() const { return m_busy_until; }
  bool done() const { return m_flows.empty(); }
  uint16_t lid() const { return uint16_t(m_params.lid); }

 protected:
  void end_of_elaboration() override;

 private:
  struct flow {
    uint16_t dlid;
    uint8_t sl;
    uint64_t left;
    core::picoseconds start;
  };
  struct held {
    core::picoseconds drained;
    uint32_t vl;
    uint32_t blocks;
  };
  // The host draining the receive buffer: releases blocks as they are consumed.
  class drain : public core::calendar_client {
   public:
    explicit drain(ib_endpoint& e) : m_e(e) {}
    void on_due(core::picoseconds t) override { m_e.drained(t); }

   private:
    ib_endpoint& m_e;
  };
  void serve(core::picoseconds t);
  void drained(core::picoseconds t);
  void wake(core::picoseconds t);
  core::packet* build(const flow& f) const;

  core::sim_context& m_ctx;
  ib_endpoint_params m_params;
  core::link* m_out = nullptr;
  ib::credit_sender m_sender;
  ib::credit_receiver m_rx;
  drain m_drain;
  core::ring<flow> m_flows;
  core::ring<held> m_held;
  core::picoseconds m_drain_free{};
  core::picoseconds m_busy_until{};
  core::picoseconds m_wake{UINT64_MAX};
  uint32_t m_psn = 0;
  uint64_t m_tx_packets = 0, m_tx_payload = 0, m_rx_packets = 0, m_rx_payload = 0, m_rx_wire = 0;
  core::picoseconds m_first_rx{UINT64_MAX}, m_last_rx{};
};

}  // namespace fabricsim::sw
