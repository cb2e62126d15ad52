// A plain output-queued Ethernet/IP switch: parse, L3 lookup with ECMP over equal-cost egress ports by a
// seeded hash of the 5-tuple, admission into a per-port FIFO, transmit. The Spectrum-4 pipeline builds on
// the same stages with its own rules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "sc_models/core/egress_port.h"
#include "sc_models/core/link.h"
#include "sc_models/core/params.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/switch/switch_device.h"

namespace fabricsim::sw {

struct oq_switch_params {
  double latency_ns = 400.0;                 // port to port: parse + lookup + admit + schedule (estimate)
  uint64_t port_buffer_bytes = 2097152;      // per egress port (estimate: a 128 MB shared buffer / 64 ports)
  void visit(core::param_visitor& v);
};

class oq_switch : public sc_core::sc_module, public switch_device {
 public:
  oq_switch(sc_core::sc_module_name name, const oq_switch_params& params, unsigned ports, core::sim_context& ctx);
  oq_switch(const oq_switch&) = delete;
  oq_switch& operator=(const oq_switch&) = delete;

  // Elaboration: the egress link of each port, and the routes (equal-cost egress ports per destination).
  void connect_port(unsigned port, core::link& out) override;
  void add_route(const core::ip_address& dst, std::vector<unsigned> egress_ports) override;

  void receive(core::packet* p, unsigned in_port) override;

  unsigned ports() const override { return unsigned(m_ports.size()); }
  const char* device_name() const override { return name(); }
  core::egress_port& port(unsigned i) { return *m_ports.at(i); }

 private:
  // Exact-match host routes in an open-addressing table (power-of-two slots, linear probing): one probe
  // in the common case, no node chasing on the per-packet path.
  struct route {
    core::ip_address dst;
    uint32_t first;  // index of the first egress port in m_route_ports
    uint32_t count;  // equal-cost egress ports
  };
  void rehash(size_t slots);

  // Pipeline stages, in order; each is part of the latency_ns budget.
  bool parse(core::packet* p);                                // TTL / hop limit
  const route* lookup(const core::packet* p) const;           // L3 exact host route
  unsigned select_egress(const route& r, const core::packet* p) const;  // ECMP hash

  core::sim_context& m_ctx;
  oq_switch_params m_params;
  core::picoseconds m_latency;
  core::five_tuple_hasher m_hash;  // ECMP, seeded per switch
  std::vector<std::unique_ptr<core::egress_port>> m_ports;
  std::vector<route> m_routes;
  std::vector<uint32_t> m_route_slots;  // index + 1 into m_routes, 0 = empty
  std::vector<unsigned> m_route_ports;
  uint64_t m_received = 0;
  uint64_t m_no_route = 0;
  uint64_t m_ttl_expired = 0;
};

}  // namespace fabricsim::sw
