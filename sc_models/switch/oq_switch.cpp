// A plain output-queued switch.
#include "sc_models/switch/oq_switch.h"

#include <algorithm>

#include "sc_models/core/rng.h"

namespace fabricsim::sw {

using core::packet;

void oq_switch_params::visit(core::param_visitor& v) {
  v.field({"latency_ns", "ns", "port-to-port pipeline latency (parse, lookup, admit, schedule)", 0.0, 1e6}, latency_ns);
  v.field({"port_buffer_bytes", "bytes", "buffer per egress port; tail drop beyond it", 4096.0, 1e10}, port_buffer_bytes);
}

void oq_switch::rehash(size_t slots) {
  m_route_slots.assign(slots, 0);
  for (uint32_t i = 0; i < m_routes.size(); ++i) {
    size_t s = m_routes[i].dst.hash() & (slots - 1);
    while (m_route_slots[s] != 0) s = (s + 1) & (slots - 1);
    m_route_slots[s] = i + 1;
  }
}

oq_switch::oq_switch(sc_core::sc_module_name name, const oq_switch_params& params, unsigned ports,
                     core::sim_context& ctx)
    : sc_core::sc_module(name),
      m_ctx(ctx),
      m_params(params),
      m_latency(core::picoseconds::from_ns(params.latency_ns)),
      m_hash(uint32_t(core::stream_seed(ctx.seed, this->name(), "ecmp"))),
      m_ports(ports) {
  core::require(ports > 0, this->name(), "a switch needs at least one port");
  const std::string inst = this->name();
  m_ctx.stats.counter(inst, "received", "packets", "packets received on any port", &m_received);
  m_ctx.stats.counter(inst, "no_route", "packets", "packets dropped for want of a route", &m_no_route);
  m_ctx.stats.counter(inst, "ttl_expired", "packets", "packets dropped with TTL or hop limit exhausted", &m_ttl_expired);
}

void oq_switch::connect_port(unsigned port, core::link& out) {
  core::require(port < m_ports.size(), name(), "port " + std::to_string(port) + " out of range");
  m_ports[port] = std::make_unique<core::egress_port>(std::string(name()) + ".port" + std::to_string(port), out,
                                                      core::bytes(m_params.port_buffer_bytes), m_ctx);
}

void oq_switch::add_route(const core::ip_address& dst, std::vector<unsigned> egress_ports) {
  core::require(!egress_ports.empty(), name(), "route with no egress port");
  for (unsigned p : egress_ports)
    core::require(p < m_ports.size() && m_ports[p], name(), "route to unconnected port " + std::to_string(p));
  packet probe;
  probe.ip.dst = dst;
  core::require(lookup(&probe) == nullptr, name(), "two routes for one destination");
  m_routes.push_back({dst, uint32_t(m_route_ports.size()), uint32_t(egress_ports.size())});
  m_route_ports.insert(m_route_ports.end(), egress_ports.begin(), egress_ports.end());
  if (2 * m_routes.size() > m_route_slots.size()) {  // keep the table at most half full
    rehash(std::max<size_t>(16, 2 * m_route_slots.size()));
    return;
  }
  const size_t mask = m_route_slots.size() - 1;
  size_t slot = dst.hash() & mask;
  while (m_route_slots[slot] != 0) slot = (slot + 1) & mask;
  m_route_slots[slot] = uint32_t(m_routes.size());
}

bool oq_switch::parse(packet* p) {
  if (p->ip.ttl <= 1) return false;
  --p->ip.ttl;
  return true;
}

const oq_switch::route* oq_switch::lookup(const packet* p) const {
  if (m_route_slots.empty()) return nullptr;
  const size_t mask = m_route_slots.size() - 1;
  for (size_t s = p->ip.dst.hash() & mask;; s = (s + 1) & mask) {
    const uint32_t i = m_route_slots[s];
    if (i == 0) return nullptr;
    if (m_routes[i - 1].dst == p->ip.dst) return &m_routes[i - 1];
  }
}

unsigned oq_switch::select_egress(const route& r, const packet* p) const {
  if (r.count == 1) return m_route_ports[r.first];
  return m_route_ports[r.first + m_hash(*p) % r.count];
}

void oq_switch::receive(packet* p, unsigned /*in_port*/) {
  ++m_received;
  if (!parse(p)) {
    ++m_ttl_expired;
    m_ctx.pool.release(p);
    return;
  }
  const route* r = lookup(p);
  if (r == nullptr) {
    ++m_no_route;
    m_ctx.pool.release(p);
    return;
  }
  core::egress_port& out = *m_ports[select_egress(*r, p)];
  // The pipeline latency is a delay on the packet's earliest departure, not a kernel event of its own.
  if (!out.enqueue(p, core::now() + m_latency)) m_ctx.pool.release(p);
}

}  // namespace fabricsim::sw
