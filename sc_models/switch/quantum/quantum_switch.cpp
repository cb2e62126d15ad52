// The Quantum-X800 InfiniBand switch.
#include "sc_models/switch/quantum/quantum_switch.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sc_models/switch/cut_through.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"

namespace fabricsim::sw {

using core::packet;
using core::picoseconds;

namespace {
constexpr uint16_t no_port = 0xffff;
constexpr uint64_t high_limit_unit = 4096;  // IBTA 7.6.9: the high limit counts 4 KiB units
constexpr uint32_t host_ip_base = core::fabric_host_ip_base;  // 10.0.0.1: host 0

bool all_digits(const std::string& t, size_t max_len) {
  return !t.empty() && t.size() <= max_len && t.find_first_not_of("0123456789") == std::string::npos;
}
}  // namespace

void quantum_params::visit(core::param_visitor& v) {
  v.field({"ports", "ports", "switch radix (Quantum-X800: 144 ports of 800 Gb/s)", 1, 4096}, ports);
  v.field({"port_gbps", "Gb/s", "port rate (XDR: 4 lanes x 200 Gb/s)", 1, 3200}, port_gbps);
  v.field({"pipeline_ns", "ns", "port-to-port latency of the forwarding pipeline (estimate)", 0, 1e5},
          pipeline_ns);
  v.field({"cut_through", "", "an idle egress port starts a packet before its tail has arrived"}, cut_through);
  v.field({"data_vls", "VLs", "data virtual lanes in use (VL0 .. data_vls-1)", 1, 15}, data_vls);
  v.field({"sl_to_vl", "", "16 comma-separated VLs, the VL of each SL 0-15; empty: SL mod data_vls"}, sl_to_vl);
  v.field({"vl_high_table", "", "VL arbitration high-priority table as vl:weight pairs (weight in 64-byte "
                                "units, 0-255); empty: no high-priority VLs"},
          vl_high_table);
  v.field({"vl_low_table", "", "VL arbitration low-priority table as vl:weight pairs; empty: every data VL "
                               "with weight 64"},
          vl_low_table);
  v.field({"high_limit", "4 KiB", "high-priority bytes (in 4 KiB units) sent before a waiting low-priority "
                                  "packet gets a turn; 255: unlimited",
           0, 255},
          high_limit);
  v.field({"routing", "", "egress choice: the LFT port, or adaptive among the LID's equal-cost ports by free "
                          "credits less queued bytes",
           0, 0, {"static", "adaptive"}},
          routing);
  credit.visit(v);
}

std::vector<vl_arb_entry> parse_vl_table(const std::string& text, unsigned data_vls, const std::string& key,
                                         const std::string& inst) {
  std::vector<vl_arb_entry> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    const std::string vl = item.substr(0, colon);
    const std::string w = colon == std::string::npos ? "" : item.substr(colon + 1);
    if (!all_digits(vl, 2) || !all_digits(w, 3) || std::stoul(vl) >= data_vls || std::stoul(w) > 255)
      throw core::config_error(inst + ": quantum." + key + ": '" + item + "' in '" + text +
                               "' is not vl:weight; expected pairs like 0:64,1:192 with VLs below data_vls (" +
                               std::to_string(data_vls) + ") and weights 0-255");
    out.push_back({uint8_t(std::stoul(vl)), uint8_t(std::stoul(w))});
  }
  core::require(out.size() <= 64, inst, "quantum." + key + " has more than the 64 entries of an arbitration table");
  return out;
}

// ---- egress port ----

quantum_port::quantum_port(quantum_switch& owner, unsigned index, core::link& out, const quantum_params& params,
                           const std::vector<vl_arb_entry>& high, const std::vector<vl_arb_entry>& low)
    : m_owner(owner),
      m_index(index),
      m_out(out),
      m_vls(unsigned(params.data_vls)),
      m_high_limit_bytes(params.high_limit >= 255 ? UINT64_MAX : params.high_limit * high_limit_unit) {
  m_high.table = high;
  m_low.table = low;
}

void quantum_port::enqueue(packet* p, unsigned vl, uint32_t blocks, picoseconds ready) {
  const uint32_t bytes = uint32_t(p->wire().value);
  m_queue[vl].push_back({p, ready, bytes, blocks});
  m_vl_bytes[vl] += bytes;
  m_queued_bytes += bytes;
  m_nonempty |= 1u << vl;
  m_vl[vl].max_queue_bytes = std::max(m_vl[vl].max_queue_bytes, m_vl_bytes[vl]);
  const picoseconds t = core::now();
  if (ready <= t) {
    serve(t);
  } else {
    wake(std::max(ready, m_busy_until));
  }
}

void quantum_port::credit(unsigned vl, uint64_t fccl, picoseconds t) {
  m_sender.update(vl, fccl);
  if (m_nonempty >> vl & 1) serve(t);
}

void quantum_port::watch_faults() {
  if (m_out.fault() == nullptr) return;
  m_watch = std::make_unique<fault_watch>(*this);
  const picoseconds first = m_out.fault()->next_known_change(picoseconds{0});
  if (first.value != UINT64_MAX) m_owner.ctx().calendar.schedule(m_watch.get(), first);
}

void quantum_port::fault_watch::on_due(picoseconds t) {
  m_port.serve(t);  // discards what the port holds once its link is known down
  const picoseconds next = m_port.m_out.fault()->next_known_change(t);
  if (next.value != UINT64_MAX) m_port.m_owner.ctx().calendar.schedule(this, next);
}

void quantum_port::discard_all(picoseconds t) {
  // IBTA 18.2.5.4: a packet that cannot leave (here: its port's link is down) is discarded after the
  // head-of-queue lifetime; the model discards at once when the link is known down, freeing the ingress
  // buffers (and so the upstream credits) it held.
  for (unsigned vl = 0; vl < m_vls; ++vl) {
    while (!m_queue[vl].empty()) {
      const queued q = m_queue[vl].front();
      m_queue[vl].pop_front();
      ++m_discarded_down;
      m_owner.departing(q.p, q.blocks, t);
      m_owner.ctx().pool.release(q.p);
    }
    m_vl_bytes[vl] = 0;
  }
  m_queued_bytes = 0;
  m_nonempty = 0;
  update_stalls(t);
}

void quantum_port::on_due(picoseconds t) {
  if (t < m_wake) return;  // stale
  m_wake = picoseconds(UINT64_MAX);
  serve(t);
}

void quantum_port::wake(picoseconds t) {
  if (t >= m_wake) return;
  m_wake = t;
  m_owner.ctx().calendar.schedule(this, t);
}

bool quantum_port::sendable(unsigned vl, picoseconds t) const {
  if (!(m_nonempty >> vl & 1)) return false;
  const queued& q = m_queue[vl].front();
  return q.ready <= t && m_sender.can_send(vl, q.blocks);
}

int quantum_port::pick(arbiter& a, picoseconds t) {
  const size_t n = a.table.size();
  for (size_t k = 0; k < n; ++k) {
    const vl_arb_entry& e = a.table[a.index];
    if (e.weight > 0 && sendable(e.vl, t)) {
      if (a.left == 0) a.left = e.weight;
      return e.vl;
    }
    // The entry's VL has nothing to send: its turn ends (IBTA: the arbiter moves on, the weight is lost).
    a.index = (a.index + 1) % n;
    a.left = 0;
  }
  return -1;
}

void quantum_port::charge(arbiter& a, uint32_t blocks) {
  // A packet is sent whole even when it exceeds the weight left; the entry's turn then ends.
  if (a.left > blocks) {
    a.left -= blocks;
  } else {
    a.left = 0;
    a.index = (a.index + 1) % a.table.size();
  }
}

void quantum_port::update_stalls(picoseconds t) {
  for (unsigned vl = 0; vl < m_vls; ++vl) {
    bool stalled = false;
    if (m_nonempty >> vl & 1) {
      const queued& q = m_queue[vl].front();
      stalled = q.ready <= t && !m_sender.can_send(vl, q.blocks);
    }
    m_sender.stall(vl, stalled, t);
  }
}

void quantum_port::serve(picoseconds t) {
  if (m_serving) return;  // re-entered from departing() through a credit update
  m_serving = true;
  if (m_watch && m_nonempty && m_out.known_down(t)) {
    discard_all(t);
    m_serving = false;
    return;
  }
  if (m_busy_until > t) {
    update_stalls(t);
    if (m_nonempty) wake(m_busy_until);
    m_serving = false;
    return;
  }
  // Low-priority turn: the high limit is used up and a low-priority packet waits.
  int vl = -1;
  bool from_high = false;
  const bool low_owed = m_high_bytes > 0 && m_high_bytes >= m_high_limit_bytes;
  if (low_owed) vl = pick(m_low, t);
  if (vl < 0) {
    vl = pick(m_high, t);
    from_high = vl >= 0;
  }
  if (vl < 0) vl = pick(m_low, t);
  if (vl >= 0) {
    queued q = m_queue[vl].front();
    m_queue[vl].pop_front();
    m_vl_bytes[vl] -= q.bytes;
    m_queued_bytes -= q.bytes;
    if (m_queue[vl].empty()) m_nonempty &= ~(1u << vl);
    if (from_high) {
      charge(m_high, q.blocks);
      m_high_bytes += q.bytes;
    } else {
      charge(m_low, q.blocks);
      m_high_bytes = 0;  // the low-priority table had its opportunity
    }
    m_sender.sent(unsigned(vl), q.blocks);
    m_vl[vl].tx_packets++;
    m_vl[vl].tx_bytes += q.bytes;
    q.p->lrh.vl = uint8_t(vl);
    const picoseconds start = std::max(t, std::max(q.ready, m_busy_until));
    m_owner.departing(q.p, q.blocks, t);
    m_busy_until = m_out.transmit(q.p, start);
  }
  // No low-priority packet ready: the high limit starts over (IBTA: it bounds high traffic only while low
  // traffic waits).
  if (m_high_bytes > 0 && pick(m_low, t) < 0) m_high_bytes = 0;
  update_stalls(t);
  if (m_nonempty) {
    // Next: when the wire is free, or when the earliest head not yet ready becomes ready. A VL stalled for
    // credit is woken by the credit update instead.
    picoseconds next(UINT64_MAX);
    for (unsigned v = 0; v < m_vls; ++v)
      if (m_nonempty >> v & 1) {
        const queued& q = m_queue[v].front();
        if (q.ready > t || m_sender.can_send(v, q.blocks)) next = std::min(next, std::max(q.ready, m_busy_until));
      }
    if (next.value != UINT64_MAX) wake(std::max(next, t));
  }
  m_serving = false;
}

// ---- switch ----

quantum_switch::quantum_switch(sc_core::sc_module_name name, const quantum_params& params, unsigned ports,
                               core::sim_context& ctx)
    : sc_core::sc_module(name),
      m_ctx(ctx),
      m_params(params),
      m_latency(picoseconds::from_ns(params.pipeline_ns)),
      m_adaptive(params.routing == "adaptive"),
      m_vls(unsigned(params.data_vls)),
      m_ar_rng(core::make_stream(ctx.seed, this->name(), "adaptive_routing")),
      m_ports(ports),
      m_rx(ports) {
  const std::string inst = this->name();
  core::require(ports > 0, inst, "a switch needs at least one port");
  core::require(ports <= params.ports, inst,
                "needs " + std::to_string(ports) + " ports but quantum.ports is " + std::to_string(params.ports));
  core::require(m_vls >= 1 && m_vls <= 15, inst, "quantum.data_vls must be 1-15");
  params.credit.validate(inst + ": quantum");
  // SL to VL.
  for (unsigned sl = 0; sl < 16; ++sl) m_default_sl2vl[sl] = uint8_t(sl % m_vls);
  if (!params.sl_to_vl.empty()) {
    std::stringstream ss(params.sl_to_vl);
    std::string item;
    unsigned sl = 0;
    while (std::getline(ss, item, ',')) {
      core::require(sl < 16 && all_digits(item, 2) && std::stoul(item) < m_vls, inst,
                    "quantum.sl_to_vl: '" + item + "' in '" + params.sl_to_vl +
                        "' is not a VL below data_vls, or there are more than 16 entries");
      m_default_sl2vl[sl++] = uint8_t(std::stoul(item));
    }
    core::require(sl == 16, inst, "quantum.sl_to_vl: expected 16 entries (one VL per SL), got " +
                                      std::to_string(sl));
  }
  m_high_table = parse_vl_table(params.vl_high_table, m_vls, "vl_high_table", inst);
  m_low_table = parse_vl_table(params.vl_low_table, m_vls, "vl_low_table", inst);
  if (params.vl_low_table.empty())
    for (unsigned vl = 0; vl < m_vls; ++vl) m_low_table.push_back({uint8_t(vl), 64});
  // Every data VL must be reachable by arbitration, or its packets would wait for ever.
  for (unsigned vl = 0; vl < m_vls; ++vl) {
    bool found = false;
    for (const auto& e : m_high_table) found |= e.vl == vl && e.weight > 0;
    for (const auto& e : m_low_table) found |= e.vl == vl && e.weight > 0;
    core::require(found, inst, "data VL " + std::to_string(vl) +
                                   " has no entry with a weight in quantum.vl_high_table or quantum.vl_low_table");
  }

  auto& s = m_ctx.stats;
  s.counter(inst, "received", "packets", "packets received on any port", &m_received);
  s.counter(inst, "no_route", "packets", "packets discarded for want of an LFT entry", &m_no_route);
  s.counter(inst, "not_infiniband", "packets", "non-InfiniBand frames discarded", &m_not_ib);
  s.counter(inst, "ar_decisions", "packets", "adaptive-routing choices among two or more ports", &m_ar_decisions);
  s.counter(inst, "ar_rerouted", "packets", "adaptive-routing choices other than the LFT port", &m_ar_rerouted);
  s.counter(inst, "no_live_port", "packets",
            "packets dropped because every port towards their LID was known down (faults)", &m_no_live_port);
  // What the report reads (testbench/simulation.cpp): the time a ready packet has waited for credit, open
  // stalls up to now included, for every connected port and data VL where it is not zero.
  s.probe_record(inst, "credit_stalls", "[port, link, vl, ps] with a credit stall, stalls up to now included", [this] {
    const picoseconds t = core::now();
    nlohmann::json out = nlohmann::json::array();
    for (unsigned i = 0; i < this->ports(); ++i) {
      if (!connected(i)) continue;
      const std::string port_name = std::string(this->name()) + ".port" + std::to_string(i);
      for (unsigned vl = 0; vl < m_vls; ++vl) {
        const uint64_t ps = port(i).sender().stall_ps(vl, t);
        if (ps != 0) out.push_back({port_name, port(i).out().name(), vl, ps});
      }
    }
    return out;
  });
}

quantum_switch::~quantum_switch() = default;

void quantum_switch::connect_port(unsigned port, core::link& out) {
  core::require(port < m_ports.size(), name(), "port " + std::to_string(port) + " out of range");
  core::require(!m_ports[port], name(), "port " + std::to_string(port) + " connected twice");
  core::require(out.rate().value <= uint64_t(m_params.port_gbps * 1e9 + 0.5), name(),
                "port " + std::to_string(port) + " runs faster than quantum.port_gbps");
  m_ports[port] = std::make_unique<quantum_port>(*this, port, out, m_params, m_high_table, m_low_table);
  m_ports[port]->sl_to_vl() = m_default_sl2vl;
  m_rx[port] = std::make_unique<ib::credit_receiver>(m_params.credit, m_vls, m_ctx.calendar);
}

void quantum_switch::end_of_elaboration() {
  // Link initialisation: each port's receiver tells the far end its credit limit; a far end that takes no
  // credits (an Ethernet NIC) gets none, and this port's sender then never waits for credit from it.
  const std::string inst = name();
  // Faults: a link of this switch's own is faulty, so routing checks liveness (a fabric without faults
  // routes exactly as before, at no cost). Faults further away come with the fabric's reachability table.
  for (const auto& port : m_ports)
    if (port && port->out().fault() != nullptr) m_fault_aware = true;
  for (unsigned i = 0; i < m_ports.size(); ++i) {
    if (!m_ports[i]) continue;
    core::link& out = m_ports[i]->out();
    m_ports[i]->watch_faults();
    if (out.fault() != nullptr)
      m_ctx.stats.counter(inst, "port" + std::to_string(i) + ".discarded_down", "packets",
                          "packets discarded from this port's queues once its link was known down",
                          m_ports[i]->discarded_down_counter());
    auto* peer = dynamic_cast<ib::credit_peer*>(out.sink());
    m_rx[i]->attach(peer, out.sink_port(), out);
    if (out.proxy() != nullptr) {
      // The far end is in another process (docs/scale_out.md: only switch-to-switch cables cross): its
      // receiver cannot tell this sender its limit at link initialisation, and need not, since every Quantum
      // port of the fabric has these parameters (quantum.vl_buffer_bytes, data_vls) and so advertises what
      // this port's own receiver does.
      for (unsigned vl = 0; vl < m_vls; ++vl) m_ports[i]->sender().update(vl, m_rx[i]->limit_blocks());
    } else if (peer == nullptr) {
      m_ports[i]->sender().set_unlimited(true);
    }
    auto& s = m_ctx.stats;
    const std::string pn = "port" + std::to_string(i);
    for (unsigned vl = 0; vl < m_vls; ++vl) {
      const std::string k = pn + ".vl" + std::to_string(vl) + ".";
      auto& c = m_ports[i]->counters(vl);
      s.counter(inst, k + "tx_packets", "packets", "packets sent on this port and VL", &c.tx_packets);
      s.counter(inst, k + "tx_bytes", "bytes", "wire bytes sent on this port and VL", &c.tx_bytes);
      s.counter(inst, k + "ar_decisions", "packets", "adaptive-routing choices that picked this port and VL",
                &c.ar_decisions);
      s.counter(inst, k + "credit_stall_ps", "ps",
                "time a ready packet waited for credit on this port and VL (closed stalls)",
                m_ports[i]->sender().stall_ps_counter(vl));
    }
  }
}

uint16_t quantum_switch::lid_of(const core::ip_address& host) {
  return ib::host_lid(host);
}

void quantum_switch::add_route(const core::ip_address& dst, std::vector<unsigned> egress_ports) {
  core::require(dst.is_v4_mapped() && dst.v4_value() >= host_ip_base && dst.v4_value() - host_ip_base < 0xbfff,
                name(), "route to an address that is not a host of the fabric (no LID for it)");
  add_lid_route(lid_of(dst), egress_ports);
}

void quantum_switch::add_lid_route(uint16_t dlid, const std::vector<unsigned>& ports) {
  core::require(!ports.empty(), name(), "route with no egress port");
  core::require(dlid > 0 && dlid < 0xc000, name(), "unicast LIDs are 1-0xbfff");
  for (unsigned p : ports)
    core::require(p < m_ports.size() && m_ports[p], name(), "route to unconnected port " + std::to_string(p));
  if (m_lft.size() <= dlid) {
    m_lft.resize(size_t(dlid) + 1, no_port);
    m_group_of.resize(size_t(dlid) + 1);
  }
  core::require(m_lft[dlid] == no_port, name(), "two routes for LID " + std::to_string(dlid));
  m_lft[dlid] = uint16_t(ports[dlid % ports.size()]);
  m_group_of[dlid] = m_groups.intern(ports);
}

int quantum_switch::lft(uint16_t dlid) const {
  return dlid < m_lft.size() && m_lft[dlid] != no_port ? int(m_lft[dlid]) : -1;
}

bool quantum_switch::port_live(unsigned port, uint16_t dlid, picoseconds t) const {
  if (m_ports[port]->out().known_down(t)) return false;
  const reach_table& table = t >= m_reach[1].from ? m_reach[1] : m_reach[0];
  if (port >= table.beyond.size() || table.beyond[port].empty()) return true;  // a host, or no table
  return dlid < table.beyond[port].size() && table.beyond[port][dlid];
}

void quantum_switch::set_reachability(picoseconds from, reach_rows rows) {
  m_reach[0] = std::move(m_reach[1]);
  m_reach[1] = {from, std::move(rows)};
  m_fault_aware = true;
}

int quantum_switch::select_egress(uint16_t dlid, unsigned sl, picoseconds t) {
  unsigned fixed = m_lft[dlid];
  const equal_cost_group g = m_groups.group(m_group_of[dlid]);
  const auto live = [&](unsigned port) { return port_live(port, dlid, t); };
  if (m_fault_aware && !live(fixed)) {
    // The subnet manager's reroute: the D-mod-K choice over the group's live ports.
    fixed = g.nth_live(dlid, live);
    if (fixed == equal_cost_group::none) return -1;
  }
  if (!m_adaptive) return int(fixed);
  if (g.count < 2) return int(fixed);
  // The port that could take the packet soonest: free credits on the packet's VL there, less what already
  // waits in its queue (the cost is that score negated). Ties go to the first found from a seeded random
  // start, so equal ports share the load instead of all choosing the lowest-numbered one.
  const uint32_t start = uint32_t(m_ar_rng() >> 32) % g.count;
  const equal_cost_group::choice best = g.least_loaded(start, [&](unsigned port, int64_t& cost) {
    if (m_fault_aware && !live(port)) return false;
    quantum_port& qp = *m_ports[port];
    const unsigned vl = qp.sl_to_vl()[sl];
    const uint64_t free_blocks = std::min<uint64_t>(qp.sender().free_blocks(vl), 1ull << 40);
    cost = int64_t(qp.queued_bytes(vl)) - int64_t(free_blocks * ib::block_bytes);
    return true;
  });
  // `fixed` is in the group and live, so some port was eligible.
  ++m_ar_decisions;
  if (best.port != fixed) ++m_ar_rerouted;
  m_ports[best.port]->counters(m_ports[best.port]->sl_to_vl()[sl]).ar_decisions++;
  return int(best.port);
}

void quantum_switch::receive(packet* p, unsigned in_port) {
  ++m_received;
  if (p->kind != core::frame_kind::infiniband) {
    ++m_not_ib;
    m_ctx.pool.release(p);
    return;
  }
  const picoseconds t = core::now();
  const uint32_t blocks = uint32_t(ib::blocks_of(p->wire().value));
  const unsigned in_vl = p->lrh.vl < m_vls ? p->lrh.vl : 0u;
  m_rx[in_port]->received(in_vl, blocks);
  p->hop_in_port = uint16_t(in_port);
  p->hop_tc = uint8_t(in_vl);
  if (!m_sharp.empty() && is_sharp(p->bth.opcode)) {  // SHARP data: the aggregation unit holds it
    sharp_unit(p)->receive(p, in_port, in_vl, blocks);
    return;
  }
  const uint16_t dlid = p->lrh.dlid;
  if (dlid >= m_lft.size() || m_lft[dlid] == no_port) {
    ++m_no_route;
    m_rx[in_port]->released(in_vl, blocks, t);
    m_ctx.pool.release(p);
    return;
  }
  const int chosen = select_egress(dlid, p->lrh.sl & 15u, t);
  if (chosen < 0) {
    ++m_no_live_port;
    m_rx[in_port]->released(in_vl, blocks, t);
    m_ctx.pool.release(p);
    return;
  }
  const unsigned egress = unsigned(chosen);
  quantum_port& out = *m_ports[egress];
  const unsigned vl = out.sl_to_vl()[p->lrh.sl & 15u];
  picoseconds ready = t + m_latency;
  if (m_params.cut_through && out.idle(t)) {
    // The head left the pipeline while the tail was still arriving, once the LRH and BTH were in.
    constexpr core::bytes header(core::header_bytes::ib_lrh + core::header_bytes::bth);
    ready = std::max(ready - cut_through_advance(p->wire(), header, m_ports[in_port]->out().rate(),  // symmetric
                                                 out.out().rate()),
                     t);
  }
  out.enqueue(p, vl, blocks, ready);
}

sharp_aggregator* quantum_switch::sharp_unit(const packet* p) const {
  for (sharp_aggregator* a : m_sharp)
    if (a->op() == p->bth.dest_qp) return a;
  return m_sharp.front();
}

void quantum_switch::departing(packet* p, uint32_t blocks, picoseconds t) {
  if (p->hop_in_port == 0xffff) {  // made by the SHARP unit here: it holds no ingress buffer
    if (!m_sharp.empty()) sharp_unit(p)->departed(p, t);
    return;
  }
  m_rx[p->hop_in_port]->released(p->hop_tc, blocks, t);
}

void quantum_switch::credit_update(unsigned port, unsigned vl, uint64_t fccl_blocks) {
  if (port >= m_ports.size() || !m_ports[port] || vl >= m_vls) return;
  m_ports[port]->credit(vl, fccl_blocks, core::now());
}

}  // namespace fabricsim::sw
