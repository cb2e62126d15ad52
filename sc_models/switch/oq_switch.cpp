// A plain output-queued switch.
#include "sc_models/switch/oq_switch.h"

#include "sc_models/core/rng.h"

namespace fabricsim::sw {

using core::packet;

void oq_switch_params::visit(core::param_visitor& v) {
  v.field({"latency_ns", "ns", "port-to-port pipeline latency (parse, lookup, admit, schedule)", 0.0, 1e6}, latency_ns);
  v.field({"port_buffer_bytes", "bytes", "buffer per egress port; tail drop beyond it", 4096.0, 1e10}, port_buffer_bytes);
}

size_t oq_switch::ip_hash::operator()(const core::ip_address& a) const {
  uint64_t h = 0;
  for (uint8_t o : a.octets) h = (h ^ o) * 0x100000001b3ull;
  return size_t(h);
}

oq_switch::oq_switch(sc_core::sc_module_name name, const oq_switch_params& params, unsigned ports,
                     core::sim_context& ctx)
    : sc_core::sc_module(name),
      m_ctx(ctx),
      m_params(params),
      m_latency(core::picoseconds::from_ns(params.latency_ns)),
      m_hash_seed(uint32_t(core::stream_seed(ctx.seed, this->name(), "ecmp"))),
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
  m_routes[dst] = route{std::move(egress_ports)};
}

bool oq_switch::parse(packet* p) {
  if (p->ip.ttl <= 1) return false;
  --p->ip.ttl;
  return true;
}

const oq_switch::route* oq_switch::lookup(const packet* p) const {
  auto it = m_routes.find(p->ip.dst);
  return it == m_routes.end() ? nullptr : &it->second;
}

unsigned oq_switch::select_egress(const route& r, const packet* p) const {
  if (r.ports.size() == 1) return r.ports[0];
  return r.ports[p->five_tuple_hash(m_hash_seed) % r.ports.size()];
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
