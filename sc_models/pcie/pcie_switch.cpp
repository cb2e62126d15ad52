// The ConnectX-8 PCIe switch: TLM-2.0 AT requests cut into TLPs, routed by BARs and IDs over credit-timed links.
#include "sc_models/pcie/pcie_switch.h"

#include <algorithm>

namespace fabricsim::pcie {

namespace {
bool power_of_two(uint64_t x) { return x && !(x & (x - 1)); }
}  // namespace

void pcie_tlp_params::visit(core::param_visitor& v) {
  v.field({"max_payload_bytes", "bytes", "MPS: largest TLP payload, a power of two", 128, 4096}, max_payload_bytes);
  v.field({"max_read_request_bytes", "bytes", "MRRS: largest read request, a power of two", 128, 4096},
          max_read_request_bytes);
  v.field({"read_completion_boundary_bytes", "bytes", "RCB: 64 or 128", 64, 128}, read_completion_boundary_bytes);
  v.field({"request_header_bytes", "bytes", "memory request header (4 DW with a 64-bit address)", 12, 64},
          request_header_bytes);
  v.field({"completion_header_bytes", "bytes", "completion header (3 DW)", 12, 64}, completion_header_bytes);
}

void pcie_switch_params::visit(core::param_visitor& v) {
  // The nested TLP block is visited by its owner under "tlp." (the flat list keeps one level, as elsewhere).
  v.field({"lanes_total", "lanes", "lanes of the switch's external ports", 1, 256}, lanes_total);
  v.field({"cut_through_latency_ns", "ns", "header in at ingress to first byte out at egress", 0, 1e6},
          cut_through_latency_ns);
  v.field({"peer_to_peer", "", "GPU<->NIC traffic direct, or redirected through the root complex (ACS)",
           0, 0, {"direct", "via_root_complex"}},
          peer_to_peer);
}

std::vector<pcie_port_config> connectx8_gb300_ports() {
  std::vector<pcie_port_config> p(4);
  p[0].name = "gpu";
  p[0].link.generation = 6;
  p[0].link.lanes = 16;
  p[0].windows = {{0x100000000000ull, 1ull << 40}};  // the GPU's memory BAR (1 TiB window)
  p[1].name = "cpu";
  p[1].link.generation = 5;
  p[1].link.lanes = 16;
  p[1].root = true;  // host memory and everything not claimed below
  p[2].name = "ssd";
  p[2].link.generation = 5;
  p[2].link.lanes = 4;
  p[2].windows = {{0x200000000000ull, 1ull << 30}};
  p[3].name = "nic";
  p[3].link.generation = 6;
  p[3].link.lanes = 16;
  p[3].internal = true;
  p[3].windows = {{0x300000000000ull, 1ull << 30}};
  return p;
}

// ----- port -----

pcie_port::pcie_port(sc_core::sc_module_name name, pcie_switch& sw, unsigned index, const pcie_port_config& config)
    : sc_core::sc_module(name),
      from_device("from_device"),
      to_device("to_device"),
      up("up", config.link, *this),
      down("down", config.link, *this),
      m_switch(sw),
      m_index(index),
      m_config(config) {
  up.set_reverse(down);
  down.set_reverse(up);
  up.set_cut_through_receiver(true);
  up.set_commit_observer(*this);
  from_device.register_nb_transport_fw(this, &pcie_port::nb_transport_fw);
  to_device.register_nb_transport_bw(this, &pcie_port::nb_transport_bw);
}

void pcie_port::receive(tlp& t, pcie_link& from) {
  if (&from == &up)
    m_switch.ingress(m_index, t);
  else
    m_switch.at_device(m_index, t);
}

void pcie_port::committed(tlp& t, pcie_link& on) {
  if (&on == &up && t.type != tlp_type::completion_data) m_switch.request_committed(m_index, t);
}

tlm::tlm_sync_enum pcie_port::nb_transport_fw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                              sc_core::sc_time& delay) {
  if (phase == tlm::BEGIN_REQ) return m_switch.begin_request(m_index, gp, delay);
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  SC_REPORT_ERROR(name(), "unexpected phase from the device's initiator");
  return tlm::TLM_COMPLETED;
}

tlm::tlm_sync_enum pcie_port::nb_transport_bw(int, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                              sc_core::sc_time&) {
  if (phase == tlm::END_REQ) {
    m_switch.device_accepted(m_index);
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::BEGIN_RESP) {
    if (m_request_open && m_to_device_head && m_to_device_head->trans == &gp) m_switch.device_accepted(m_index);
    m_switch.device_responded(m_index, gp);
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR(name(), "unexpected phase from the device's target");
  return tlm::TLM_COMPLETED;
}

// ----- switch -----

pcie_switch::pcie_switch(sc_core::sc_module_name name, const pcie_switch_params& params,
                         const std::vector<pcie_port_config>& ports)
    : sc_core::sc_module(name), m_params(params) {
  const std::string me = this->name();
  core::check_ranges(m_params, me);
  core::check_ranges(m_params.tlp, me + ".tlp");
  const pcie_tlp_params& tp = m_params.tlp;
  core::require(power_of_two(tp.max_payload_bytes), me, "tlp.max_payload_bytes " +
                                                            std::to_string(tp.max_payload_bytes) +
                                                            " is not a power of two");
  core::require(power_of_two(tp.max_read_request_bytes), me, "tlp.max_read_request_bytes " +
                                                                 std::to_string(tp.max_read_request_bytes) +
                                                                 " is not a power of two");
  core::require(tp.read_completion_boundary_bytes == 64 || tp.read_completion_boundary_bytes == 128, me,
                "tlp.read_completion_boundary_bytes " + std::to_string(tp.read_completion_boundary_bytes) +
                    " is not 64 or 128");
  core::require(!ports.empty() && ports.size() < 256, me, "needs 1 to 255 ports");
  uint64_t lanes = 0;
  for (unsigned i = 0; i < ports.size(); ++i) {
    const pcie_port_config& c = ports[i];
    if (!c.internal) lanes += c.link.lanes;
    if (c.root) {
      core::require(!m_has_root, me, "ports " + ports[m_root].name + " and " + c.name + " are both root ports");
      m_root = i;
      m_has_root = true;
    }
    m_ports.emplace_back(new pcie_port(c.name.c_str(), *this, i, c));
  }
  core::require(lanes <= m_params.lanes_total, me,
                "the ports use " + std::to_string(lanes) + " lanes, more than lanes_total " +
                    std::to_string(m_params.lanes_total));
  m_p2p_via_root = m_params.peer_to_peer == "via_root_complex";
  core::require(!m_p2p_via_root || m_has_root, me, "peer_to_peer via_root_complex needs a root port");
  m_cut_through = core::picoseconds::from_ns(m_params.cut_through_latency_ns);
}

void pcie_switch::register_stats(core::stats_registry& stats) const {
  const std::string me = name();
  stats.counter(me, "requests", "requests", "TLM requests taken from devices", &m_requests);
  stats.counter(me, "completions", "TLPs", "completion TLPs sent by completers", &m_completions);
  stats.counter(me, "redirected_to_root", "TLPs", "peer-to-peer requests redirected to the root complex (ACS)",
                &m_redirected);
  stats.counter(me, "unsupported_requests", "TLPs", "requests no device claimed (Unsupported Request)",
                &m_unsupported);
  for (const auto& p : m_ports) {
    p->up.register_stats(stats);
    p->down.register_stats(stats);
  }
}

pcie_port& pcie_switch::port(const std::string& name) {
  for (auto& p : m_ports)
    if (p->config().name == name) return *p;
  throw core::config_error(std::string(this->name()) + ": no port named \"" + name + "\"");
}

int pcie_switch::route(uint64_t address) const {
  for (const auto& p : m_ports)
    for (const auto& w : p->config().windows)
      if (address >= w.base && address - w.base < w.size) return int(p->index());
  return m_has_root ? int(m_root) : -1;  // the root complex claims everything the switch's windows do not
}

tlm::tlm_sync_enum pcie_switch::begin_request(unsigned p, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const bool write = gp.is_write();
  if ((!write && !gp.is_read()) || gp.get_data_length() == 0 || !gp.get_data_ptr() || !gp.has_mm() ||
      gp.get_byte_enable_ptr()) {
    // Unsupported here: no memory manager (the AT protocol needs one), byte enables, or no data.
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    ++m_unsupported;
    return tlm::TLM_COMPLETED;
  }
  gp.acquire();
  ++m_requests;
  request_state* s = m_state_pool.acquire();
  *s = request_state{};
  s->gp = &gp;
  s->port = p;
  const tlp_extension* attr = extension_of(gp);
  const uint64_t chunk = write ? m_params.tlp.max_payload_bytes : m_params.tlp.max_read_request_bytes;
  const uint64_t base = gp.get_address();
  const uint64_t end = base + gp.get_data_length();
  const core::picoseconds at = core::now() + core::from_sc_time(delay);
  for (uint64_t a = base; a < end;) {
    // Cut at chunk-aligned addresses: a TLP never crosses an MPS (or MRRS) boundary, hence never 4 KiB.
    const uint64_t next = std::min(end, (a / chunk + 1) * chunk);
    const uint32_t len = uint32_t(next - a);
    tlm::tlm_generic_payload* c = m_payloads.acquire();
    tlp_extension* e = extension_of(*c);
    if (attr) {
      e->relaxed_ordering = attr->relaxed_ordering;
      e->no_snoop = attr->no_snoop;
      e->id_based_ordering = attr->id_based_ordering;
      e->traffic_class = attr->traffic_class;
    }
    e->type = write ? tlp_type::mem_write : tlp_type::mem_read;
    e->requester_id = uint16_t(p << 8);
    e->tag = m_next_tag++ & 0x3fff;
    e->origin = s;
    c->set_command(gp.get_command());
    c->set_address(a);
    c->set_data_ptr(gp.get_data_ptr() + (a - base));
    c->set_data_length(len);
    c->set_streaming_width(len);
    tlp* t = m_tlp_pool.acquire();
    *t = tlp{};
    t->type = e->type;
    t->header_bytes = uint16_t(m_params.tlp.request_header_bytes);
    t->payload_bytes = write ? len : 0;
    t->trans = c;
    t->eligible_at = at;
    t->src_port = uint16_t(p);
    ++s->uncommitted;
    ++s->pending;
    m_ports[p]->up.send(*t);
    a = next;
  }
  return tlm::TLM_ACCEPTED;
}

void pcie_switch::request_committed(unsigned p, tlp& t) {
  request_state* s = static_cast<request_state*>(extension_of(*t.trans)->origin);
  if (--s->uncommitted != 0) return;
  // The request's last TLP has left the device: its transmitter may take the next request.
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
  m_ports[p]->from_device->nb_transport_bw(*s->gp, phase, zero);
}

void pcie_switch::ingress(unsigned p, tlp& t) {
  unsigned dst;
  if (t.type == tlp_type::completion_data) {
    dst = t.dst_port;  // ID routing: the requester's bus is its port
  } else {
    const int r = route(t.trans->get_address());
    if (r < 0 || unsigned(r) == p) {
      // No window claims it (or it points back where it came from): Unsupported Request.
      ++m_unsupported;
      m_ports[p]->up.release(t);
      t.trans->set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      tlm::tlm_generic_payload* c = t.trans;
      m_tlp_pool.release(&t);
      child_done(*c);
      return;
    }
    dst = unsigned(r);
    if (m_p2p_via_root && !m_ports[p]->config().root && !m_ports[dst]->config().root) {
      dst = m_root;  // ACS P2P request redirect: up to the root complex, which decides and sends it back down
      ++m_redirected;
    }
  }
  t.dst_port = uint16_t(dst);
  t.src_port = uint16_t(p);
  t.held_by = &m_ports[p]->up;
  t.eligible_at = core::now() + m_cut_through;
  m_ports[dst]->down.send(t);
}

void pcie_switch::at_device(unsigned q, tlp& t) {
  pcie_port& port = *m_ports[q];
  if (t.type == tlp_type::completion_data) {
    // The requester (an endpoint) takes completions at once: it advertises infinite completion credits.
    port.down.release(t);
    tlm::tlm_generic_payload* c = t.trans;
    tlp_extension* e = extension_of(*c);
    e->bytes_pending -= std::min(e->bytes_pending, t.payload_bytes);
    const bool last = e->bytes_pending == 0;
    m_tlp_pool.release(&t);
    if (last) child_done(*c);
    return;
  }
  // A request for the device behind this port: the root complex sees system addresses, an endpoint its
  // window's offsets.
  if (!port.config().root) {
    const uint64_t a = t.trans->get_address();
    for (const auto& w : port.config().windows)
      if (a >= w.base && a - w.base < w.size) {
        t.trans->set_address(a - w.base);
        break;
      }
  }
  t.next = nullptr;
  if (port.m_to_device_tail) port.m_to_device_tail->next = &t; else port.m_to_device_head = &t;
  port.m_to_device_tail = &t;
  offer_to_device(q);
}

void pcie_switch::offer_to_device(unsigned q) {
  pcie_port& port = *m_ports[q];
  while (!port.m_request_open && port.m_to_device_head) {
    tlp& t = *port.m_to_device_head;
    if (port.to_device.size() == 0) {  // nothing behind this port
      port.m_to_device_head = t.next;
      if (!port.m_to_device_head) port.m_to_device_tail = nullptr;
      port.down.release(t);
      ++m_unsupported;
      t.trans->set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      tlm::tlm_generic_payload* c = t.trans;
      m_tlp_pool.release(&t);
      if (c->is_read()) {
        extension_of(*c)->bytes_pending = 0;
        device_responded(q, *c);
      } else {
        child_done(*c);
      }
      continue;
    }
    port.m_request_open = true;
    tlm::tlm_generic_payload& gp = *t.trans;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum r = port.to_device->nb_transport_fw(gp, phase, delay);
    if (r == tlm::TLM_ACCEPTED) return;  // END_REQ (or BEGIN_RESP) comes back later
    if (port.m_request_open) device_accepted(q);
    if (r == tlm::TLM_COMPLETED || (r == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) device_responded(q, gp);
  }
}

void pcie_switch::device_accepted(unsigned q) {
  pcie_port& port = *m_ports[q];
  if (!port.m_request_open || !port.m_to_device_head) return;
  tlp& t = *port.m_to_device_head;
  port.m_to_device_head = t.next;
  if (!port.m_to_device_head) port.m_to_device_tail = nullptr;
  port.m_request_open = false;
  port.down.release(t);  // the device's receive buffer is free again: UpdateFC
  m_tlp_pool.release(&t);
  offer_to_device(q);
}

void pcie_switch::device_responded(unsigned q, tlm::tlm_generic_payload& gp) {
  if (gp.is_write()) {
    child_done(gp);  // a posted write: nothing goes back on the link
    return;
  }
  // Completions back to the requester, cut at the read completion boundary: each ends on an RCB-aligned
  // address (the last excepted) and carries at most MPS bytes.
  tlp_extension* e = extension_of(gp);
  const unsigned requester = e->requester_id >> 8;
  const uint64_t rcb = m_params.tlp.read_completion_boundary_bytes;
  const uint64_t mps = m_params.tlp.max_payload_bytes;
  const bool ok = gp.get_response_status() == tlm::TLM_OK_RESPONSE;
  const uint64_t len = ok ? gp.get_data_length() : 0;
  // Addresses as the completer saw them: what matters is the alignment, which a window base (aligned far
  // beyond the RCB) does not change.
  const uint64_t start = gp.get_address();
  e->bytes_pending = uint32_t(len);
  uint64_t off = 0;
  do {
    uint64_t n = len - off;
    if (n > mps) n = ((start + off + mps) / rcb) * rcb - (start + off);
    tlp* t = m_tlp_pool.acquire();
    *t = tlp{};
    t->type = tlp_type::completion_data;
    t->header_bytes = uint16_t(m_params.tlp.completion_header_bytes);
    t->payload_bytes = uint32_t(n);
    t->offset = uint32_t(off);
    t->trans = &gp;
    t->dst_port = uint16_t(requester);
    t->src_port = uint16_t(q);
    t->eligible_at = core::now();
    ++m_completions;
    m_ports[q]->up.send(*t);
    off += n;
  } while (off < len);
}

void pcie_switch::child_done(tlm::tlm_generic_payload& c) {
  request_state* s = static_cast<request_state*>(extension_of(c)->origin);
  if (c.get_response_status() != tlm::TLM_OK_RESPONSE) s->error = true;
  c.release();
  if (--s->pending != 0) return;
  tlm::tlm_generic_payload& gp = *s->gp;
  gp.set_response_status(s->error ? tlm::TLM_ADDRESS_ERROR_RESPONSE : tlm::TLM_OK_RESPONSE);
  const unsigned p = s->port;
  m_state_pool.release(s);
  tlm::tlm_phase phase = tlm::BEGIN_RESP;
  sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
  // Initiators here finish a response at once (TLM_COMPLETED or END_RESP); one that answers TLM_ACCEPTED
  // sends END_RESP later, which the port accepts, but the switch does not hold the next response for it.
  m_ports[p]->from_device->nb_transport_bw(gp, phase, zero);
  gp.release();
}

}  // namespace fabricsim::pcie
