// The Spectrum-4 switch pipeline.
#include "sc_models/switch/spectrum/spectrum_switch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sc_models/switch/cut_through.h"

namespace fabricsim::sw {

using core::never;
using core::packet;
using core::picoseconds;

namespace {

constexpr uint64_t jumbo_frame_bytes = 9216 + 20;  // largest frame on the wire, preamble and gap included
constexpr uint64_t switch_mac_base = 0x02'00'00'ff'00'00ull;

// "3" or "3,4": a set of priorities or classes, each 0-7.
std::array<bool, traffic_classes> parse_class_set(const std::string& text, const std::string& key,
                                                  const std::string& inst) {
  std::array<bool, traffic_classes> out{};
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    if (item.size() != 1 || item[0] < '0' || item[0] > '7')
      throw core::config_error(inst + ": switch." + key + ": '" + item + "' in '" + text +
                               "' is not a class; expected a comma-separated list of 0-7");
    out[unsigned(item[0] - '0')] = true;
  }
  return out;
}

// "0:50,3:50": class:weight pairs.
std::array<uint32_t, traffic_classes> parse_weights(const std::string& text, const std::string& key,
                                                    const std::string& inst) {
  std::array<uint32_t, traffic_classes> out{};
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    const std::string cls = item.substr(0, colon);
    const std::string w = colon == std::string::npos ? "" : item.substr(colon + 1);
    if (cls.size() != 1 || cls[0] < '0' || cls[0] > '7' || w.empty() || w.size() > 4 ||
        w.find_first_not_of("0123456789") != std::string::npos || std::stoul(w) == 0 || std::stoul(w) > 1000)
      throw core::config_error(inst + ": switch." + key + ": '" + item + "' in '" + text +
                               "' is not class:weight; expected a comma-separated list like 0:50,3:50 with "
                               "classes 0-7 and weights 1-1000");
    out[unsigned(cls[0] - '0')] = uint32_t(std::stoul(w));
  }
  return out;
}

}  // namespace

double spectrum_params::port_gbps() const {
  const size_t x = port_config.find('x');
  if (x == std::string::npos || x + 1 >= port_config.size() ||
      port_config.find_first_not_of("0123456789", x + 1) != std::string::npos)
    return 0.0;
  return std::stod(port_config.substr(x + 1));
}

std::string spectrum_params::port_config_for(double gbps) {
  // The choices of switch.port_config, slowest ports first.
  for (const char* config : {"256x200", "128x400", "64x800"})
    if (uint64_t(std::llround(gbps * 1e9)) <= uint64_t(std::llround(std::stod(std::strchr(config, 'x') + 1) * 1e9)))
      return config;
  return "";
}

void spectrum_params::visit(core::param_visitor& v) {
  v.field({"port_config", "", "how the 51.2 Tb/s ASIC is split into ports (ports x Gb/s)", 0, 0,
           {"64x800", "128x400", "256x200"}},
          port_config);
  v.field({"forwarding", "", "cut-through (leave once the headers are parsed, when the egress is idle) or "
                             "store-and-forward",
           0, 0, {"cut_through", "store_and_forward"}},
          forwarding);
  v.field({"parse_ns", "ns", "pipeline stage: header parse", 0, 1e5}, parse_ns);
  v.field({"classify_ns", "ns", "pipeline stage: DSCP/PCP trust to priority and traffic class", 0, 1e5},
          classify_ns);
  v.field({"lookup_ns", "ns", "pipeline stage: L3 route, ECMP hash or adaptive choice", 0, 1e5}, lookup_ns);
  v.field({"admit_ns", "ns", "pipeline stage: buffer admission, ECN, PFC accounting", 0, 1e5}, admit_ns);
  v.field({"schedule_ns", "ns", "pipeline stage: egress scheduling to the MAC", 0, 1e5}, schedule_ns);
  v.field({"cut_through_bytes", "bytes", "header bytes that must arrive before a cut-through frame can leave",
           64, 9216},
          cut_through_bytes);
  v.field({"routing", "", "egress choice among equal-cost ports: ECMP hash of the 5-tuple, or adaptive per "
                          "packet (least-loaded eligible port)",
           0, 0, {"ecmp", "adaptive"}},
          routing);
  v.field({"ar_threshold_bytes", "bytes", "adaptive: keep the hashed port while its queue is at most this deep",
           0, 1e10},
          ar_threshold_bytes);
  v.field({"ar_hysteresis_bytes", "bytes", "adaptive: leave the hashed port only for one lighter by more than this",
           0, 1e10},
          ar_hysteresis_bytes);
  v.field({"buffer_bytes", "bytes", "the one shared packet buffer (headroom reserved out of it)", 65536, 1e10},
          buffer_bytes);
  v.field({"dt_alpha", "", "dynamic threshold of lossy queues: a queue may hold alpha x the free shared buffer",
           1.0 / 128, 64},
          dt_alpha);
  v.field({"trust", "", "where the priority comes from: DSCP (priority = DSCP / 8) or the VLAN PCP", 0, 0,
           {"dscp", "pcp"}},
          trust);
  v.field({"lossless_priorities", "", "PFC-enabled priorities, comma-separated (0-7)"}, lossless_priorities);
  v.field({"strict_priorities", "", "traffic classes served by strict priority, comma-separated (0-7)"},
          strict_priorities);
  v.field({"ets_weights", "", "DWRR (ETS) weights of the other classes as class:weight pairs"}, ets_weights);
  v.field({"ecn_classes", "", "traffic classes whose queues mark ECN, comma-separated (0-7)"}, ecn_classes);
  v.field({"ecn_kmin_bytes", "bytes", "RED line: no ECN marks below this queue depth", 0, 1e10}, ecn_kmin_bytes);
  v.field({"ecn_kmax_bytes", "bytes", "RED line: every ECT frame marked at or above this depth", 0, 1e10},
          ecn_kmax_bytes);
  v.field({"ecn_pmax", "", "marking probability reached at Kmax", 0, 1}, ecn_pmax);
  v.field({"ecn_mark_at", "", "when a frame meets the RED line: as it leaves its queue (the signal does not wait "
                              "behind the queue it reports) or as it joins it",
           0, 0, {"dequeue", "enqueue"}},
          ecn_mark_at);
  v.field({"pfc_xoff_bytes", "bytes", "per ingress port and lossless priority: bytes held that trigger XOFF",
           1024, 1e10},
          pfc_xoff_bytes);
  v.field({"pfc_xon_bytes", "bytes", "per ingress port and lossless priority: XON once back below this", 0, 1e10},
          pfc_xon_bytes);
  v.field({"pfc_headroom_bytes", "bytes", "per ingress port and lossless priority: buffer beyond XOFF for what "
                                          "is in flight; 0 sizes it from the cable, rate and FIFOs",
           0, 1e10},
          pfc_headroom_bytes);
  v.field({"pfc_quanta", "quanta", "pause time in XOFF frames, in 512-bit times", 1, 65535}, pfc_quanta);
  v.field({"tx_fifo_frames", "frames", "MAC transmit FIFO per port: frames committed ahead of the wire", 1, 64},
          tx_fifo_frames);
  v.field({"telemetry", "", "stamp in-band telemetry (HPCC-style records) into packets that ask for it"},
          telemetry);
}

spectrum_switch::spectrum_switch(sc_core::sc_module_name name, const spectrum_params& params, unsigned ports,
                                 core::sim_context& ctx)
    : sc_core::sc_module(name),
      m_ctx(ctx),
      m_latency(picoseconds::from_ns(params.parse_ns + params.classify_ns + params.lookup_ns + params.admit_ns +
                                     params.schedule_ns)),
      m_hash(uint32_t(core::stream_seed(ctx.seed, this->name(), "ecmp"))),
      m_adaptive(params.routing == "adaptive"),
      m_cut_through(params.forwarding == "cut_through"),
      m_trust_pcp(params.trust == "pcp"),
      m_ecn_at_dequeue(params.ecn_mark_at == "dequeue"),
      m_hot{params.ar_threshold_bytes, params.ar_hysteresis_bytes,
            params.cut_through_bytes,  params.ecn_kmin_bytes,
            params.ecn_kmax_bytes,     params.ecn_pmax,
            params.dt_alpha,           params.telemetry},
      m_ports(ports),
      m_pfc(ports, params.pfc_xoff_bytes, params.pfc_xon_bytes),
      m_refresh(ports),
      m_params(params),
      m_ecn_rng(core::make_stream(ctx.seed, this->name(), "ecn")),
      m_ar_rng(core::make_stream(ctx.seed, this->name(), "adaptive_routing")) {
  const std::string inst = this->name();
  const size_t x = params.port_config.find('x');
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 4 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  core::require(x != std::string::npos && digits(params.port_config.substr(0, x)) &&
                    digits(params.port_config.substr(x + 1)),
                inst, "switch.port_config '" + params.port_config + "' is not PORTSxGBPS (such as 128x400)");
  m_max_ports = unsigned(std::stoul(params.port_config.substr(0, x)));
  m_port_gbps = std::stod(params.port_config.substr(x + 1));
  core::require(ports > 0, inst, "a switch needs at least one port");
  core::require(ports <= m_max_ports, inst,
                "needs " + std::to_string(ports) + " ports but switch.port_config " + params.port_config +
                    " has " + std::to_string(m_max_ports) + " (use a breakout such as 256x200, or a larger fabric)");
  core::require(params.pfc_xon_bytes <= params.pfc_xoff_bytes, inst,
                "switch.pfc_xon_bytes " + std::to_string(params.pfc_xon_bytes) + " is above switch.pfc_xoff_bytes " +
                    std::to_string(params.pfc_xoff_bytes));
  core::require(params.ecn_kmin_bytes <= params.ecn_kmax_bytes, inst,
                "switch.ecn_kmin_bytes " + std::to_string(params.ecn_kmin_bytes) + " is above switch.ecn_kmax_bytes " +
                    std::to_string(params.ecn_kmax_bytes));
  configure_classes();

  auto& s = m_ctx.stats;
  s.counter(inst, "received", "packets", "frames received on any port", &m_received);
  s.counter(inst, "no_route", "packets", "packets dropped for want of a route", &m_no_route);
  s.counter(inst, "no_live_port", "packets",
            "packets dropped because the link of every equal-cost egress port was known down", &m_no_live_port);
  s.counter(inst, "ttl_expired", "packets", "packets dropped with TTL or hop limit exhausted", &m_ttl_expired);
  s.counter(inst, "headroom_overflow", "packets",
            "lossless packets dropped because their PFC headroom was full (the headroom is too small)",
            &m_headroom_overflow);
  s.counter(inst, "ar_decisions", "packets", "adaptive-routing choices among two or more eligible ports",
            &m_ar_decisions);
  s.counter(inst, "ar_rerouted", "packets", "adaptive-routing choices that left the ECMP-hashed port",
            &m_ar_rerouted);
  s.counter(inst, "admitted_bytes", "bytes", "wire bytes admitted into the shared buffer", &m_admitted_bytes);
  s.counter(inst, "released_bytes", "bytes", "wire bytes that left the shared buffer for a MAC", &m_released_bytes);
  s.counter(inst, "max_buffer_bytes", "bytes", "most of the shared pool in use at once", &m_max_shared_used);
  // What the report reads (testbench/simulation.cpp): the egress ports and their links, the PFC pause log.
  s.probe_record(inst, "egress_ports", "[port, link] of every port in port order (null: not connected)", [this] {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : m_ports) out.push_back(p ? nlohmann::json{p->name(), p->out().name()} : nlohmann::json());
    return out;
  });
  s.probe_record(
      inst, "pause_log", "XOFF intervals [port, link, priority, start ps, end ps] and complete_until ps", [this] {
        nlohmann::json log = nlohmann::json::array();
        for (const auto& iv : pause_log())
          log.push_back(
              {m_ports[iv.port]->name(), m_ports[iv.port]->out().name(), iv.prio, iv.start.value, iv.end.value});
        return nlohmann::json{
            {"complete_until", pause_log_complete_until().value}, {"limit", pause_log_limit}, {"log", std::move(log)}};
      });
}

spectrum_switch::~spectrum_switch() = default;

void spectrum_switch::configure_classes() {
  m_lossless = parse_class_set(m_params.lossless_priorities, "lossless_priorities", name());
  m_sched.strict = parse_class_set(m_params.strict_priorities, "strict_priorities", name());
  m_sched.weight = parse_weights(m_params.ets_weights, "ets_weights", name());
  m_ecn = parse_class_set(m_params.ecn_classes, "ecn_classes", name());
  m_sched.tx_fifo_frames = unsigned(m_params.tx_fifo_frames);
  for (unsigned tc = 0; tc < traffic_classes; ++tc) {
    core::require(!(m_sched.strict[tc] && m_sched.weight[tc] > 0), name(),
                  "class " + std::to_string(tc) + " is both in switch.strict_priorities and in switch.ets_weights");
    m_sched.counted[tc] = tc == 0 || m_lossless[tc] || m_sched.strict[tc] || m_sched.weight[tc] > 0;
  }
}

void spectrum_switch::connect_port(unsigned port, core::link& out) {
  core::require(port < m_ports.size(), name(), "port " + std::to_string(port) + " out of range");
  core::require(!m_ports[port], name(), "port " + std::to_string(port) + " connected twice");
  if (out.rate().value > uint64_t(std::llround(m_port_gbps * 1e9))) {
    const std::string fits = spectrum_params::port_config_for(double(out.rate().value) / 1e9);
    core::require(false, name(),
                  "port " + std::to_string(port) + " runs at " + std::to_string(out.rate().value / 1'000'000'000) +
                      " Gb/s, faster than the " + std::to_string(int(m_port_gbps)) + "G ports of switch.port_config " +
                      m_params.port_config +
                      (fits.empty() ? "; no port_config runs ports that fast (the fastest is 64x800)"
                                    : "; use --set switch.port_config=" + fits + " (switch: {port_config: " + fits +
                                          "} in the file)"));
  }
  m_ports[port] =
      std::make_unique<scheduled_port>(std::string(name()) + ".port" + std::to_string(port), port, out, m_sched,
                                       *this, m_ctx);
  m_refresh[port] = std::make_unique<pfc_refresh>(*this, port);
  scheduled_port* sp = m_ports[port].get();
  m_ctx.stats.probe(sp->name(), "queued_bytes", "bytes", "bytes queued now, every class",
                    [sp] { return double(sp->queued_bytes()); });
  m_ctx.stats.probe(sp->name(), "queue_byte_ps", "byte-ps", "integral of queued_bytes up to now",
                    [sp] { return sp->queue_byte_ps(core::now()); });
  // PFC headroom: what can still arrive after this port decides to pause its peer. The XOFF frame may wait
  // behind this port's MAC FIFO, crosses the cable, the peer finishes what its own MAC FIFO holds (assumed
  // no deeper than ours) and the last of that crosses back: a cable round trip at line rate plus
  // 2 x tx_fifo_frames + 2 largest frames.
  uint64_t headroom = m_params.pfc_headroom_bytes;
  if (headroom == 0) {
    const uint64_t rtt_bytes = uint64_t((unsigned __int128)(2 * out.latency().value) * out.rate().value /
                                        8'000'000'000'000ull);
    headroom = rtt_bytes + (2 * m_params.tx_fifo_frames + 2) * jumbo_frame_bytes + 64;
  }
  m_pfc.configure_port(port, headroom, picoseconds(pause_time(port, uint16_t(m_params.pfc_quanta)).value / 2));
  uint64_t reserved = 0;
  for (unsigned p = 0; p < m_ports.size(); ++p)
    for (unsigned prio = 0; prio < traffic_classes; ++prio)
      if (m_ports[p] && m_lossless[prio]) reserved += m_pfc.headroom_size(p);
  core::require(reserved < m_params.buffer_bytes, name(),
                "PFC headroom (" + std::to_string(reserved) +
                    " bytes over the connected ports) leaves nothing of "
                    "switch.buffer_bytes (a multi_site edge: topology.edge_buffer_bytes) " +
                    std::to_string(m_params.buffer_bytes) + " for the shared pool");
  m_shared_size = m_params.buffer_bytes - reserved;
}

void spectrum_switch::rehash(size_t slots) {
  std::vector<route> old(slots);
  old.swap(m_route_slots);
  for (const route& r : old) {
    if (r.ports.count == 0) continue;
    size_t s = r.dst.hash() & (slots - 1);
    while (m_route_slots[s].ports.count != 0) s = (s + 1) & (slots - 1);
    m_route_slots[s] = r;
  }
}

void spectrum_switch::add_route(const core::ip_address& dst, std::vector<unsigned> egress_ports) {
  if (egress_ports.empty()) core::fail(name(), "route with no egress port");
  // The messages (and the instance name as a string) are built only on an error, and the duplicate check looks
  // the address up directly: at 4,096 NICs (a route per host on each of 128 switches, 64 ports per route on a
  // leaf) the eager messages and a throwaway descriptor per route were a fifth of the set-up's CPU
  // (docs/scale_out.md, "The whole process").
  for (unsigned p : egress_ports)
    if (p >= m_ports.size() || !m_ports[p]) core::fail(name(), "route to unconnected port " + std::to_string(p));
  if (lookup(dst).count != 0) core::fail(name(), "two routes for one destination");
  const equal_cost_ref set = m_groups.intern(egress_ports);
  const uint64_t host = host_number(dst);
  if (host < host_route_limit) {
    if (host >= m_host_routes.size()) m_host_routes.resize(host + 1);
    m_host_routes[host] = set;
    return;
  }
  ++m_route_count;
  if (2 * m_route_count > m_route_slots.size()) rehash(std::max<size_t>(16, 2 * m_route_slots.size()));
  const size_t mask = m_route_slots.size() - 1;
  size_t slot = dst.hash() & mask;
  while (m_route_slots[slot].ports.count != 0) slot = (slot + 1) & mask;
  m_route_slots[slot] = {dst, set};
}

unsigned spectrum_switch::priority_of(const packet* p) const {
  if (m_trust_pcp) return p->eth.has_vlan ? p->eth.pcp & 7u : 0u;
  return unsigned(p->ip.dscp >> 3) & 7u;
}

double spectrum_switch::ecn_probability(uint64_t q) const {
  const uint64_t kmin = m_hot.ecn_kmin_bytes, kmax = m_hot.ecn_kmax_bytes;
  if (q >= kmax) return 1.0;
  if (q <= kmin) return 0.0;
  return m_hot.ecn_pmax * double(q - kmin) / double(kmax - kmin);
}

picoseconds spectrum_switch::pause_time(unsigned port, uint16_t quanta) const {
  return core::pause_duration(quanta, m_ports[port]->out().rate());
}

bool spectrum_switch::parse(packet* p, unsigned in_port) {
  if (p->kind == core::frame_kind::pfc) {
    // A pause from the peer on this port: it stops this port's transmitter for the enabled priorities.
    for (unsigned prio = 0; prio < traffic_classes; ++prio)
      if (p->pfc.class_enable >> prio & 1)
        m_ports[in_port]->pause(prio, core::now() + pause_time(in_port, p->pfc.quanta[prio]));
    m_ctx.pool.release(p);
    return false;
  }
  if (p->ip.ttl <= 1) {
    ++m_ttl_expired;
    m_ctx.pool.release(p);
    return false;
  }
  --p->ip.ttl;
  return true;
}

equal_cost_ref spectrum_switch::lookup_hashed(const core::ip_address& dst) const {
  if (m_route_slots.empty()) return {};
  const size_t mask = m_route_slots.size() - 1;
  for (size_t s = dst.hash() & mask;; s = (s + 1) & mask) {
    const route& r = m_route_slots[s];
    if (r.ports.count == 0 || r.dst == dst) return r.ports;
  }
}

// Destinations are the fabric's hosts, 10.0.0.1 on (topology::host_ip); the reachability table indexes them as
// InfiniBand does its LIDs (ib::host_lid), so that one fabric-wide computation serves both switch models.
int spectrum_switch::lft(uint16_t dlid) const {
  const equal_cost_ref r = dlid > 0 ? lookup(core::ip_address::v4(host_ip_base + dlid - 1u)) : equal_cost_ref{};
  return r.count != 0 ? int(m_groups.group(r)[0]) : -1;
}

equal_cost_group spectrum_switch::ar_group(uint16_t dlid) const {
  const equal_cost_ref r = dlid > 0 ? lookup(core::ip_address::v4(host_ip_base + dlid - 1u)) : equal_cost_ref{};
  return r.count != 0 ? m_groups.group(r) : equal_cost_group{};
}

void spectrum_switch::set_reachability(picoseconds from, reach_rows rows) {
  m_reach[0] = std::move(m_reach[1]);
  m_reach[1] = {from, std::move(rows)};
  m_reach_set = true;
}

bool spectrum_switch::live(unsigned port, uint16_t dlid, picoseconds t) const {
  if (m_ports[port]->out().known_down(t)) return false;
  if (!m_reach_set) return true;
  const reach_table& table = t >= m_reach[1].from ? m_reach[1] : m_reach[0];
  if (port >= table.beyond.size() || table.beyond[port].empty()) return true;  // a host beyond, or no table yet
  return dlid >= table.beyond[port].size() || table.beyond[port][dlid];        // not a host of the table: no news
}

unsigned spectrum_switch::select_egress(equal_cost_ref ports, const packet* p, unsigned tc, picoseconds t) {
  const equal_cost_group g = m_groups.group(ports);
  const uint16_t dlid = m_reach_set ? uint16_t(p->ip.dst.v4_value() - host_ip_base + 1u) : 0;
  // With no fault injector on any link of this process and no reachability table, every port is live:
  // the scan then reads no link (each would be a cache line of its own).
  const bool faults = m_reach_set || m_ctx.links_with_fault != 0;
  auto usable = [&](unsigned port) { return !faults || live(port, dlid, t); };
  if (g.count == 1) return usable(g[0]) ? g[0] : no_port;
  const uint32_t hash = m_hash(*p);
  unsigned hashed = g[hash % g.count];
  // A port whose link is known down, or (after a fault notification) whose far switch can no longer reach the
  // destination, leaves the equal-cost set until that changes: ECMP rehashes over what is left, so flows on
  // live ports keep their port.
  if (!usable(hashed)) {
    hashed = g.nth_live(hash, usable);
    if (hashed == no_port) return no_port;
  }
  if (!m_adaptive) return hashed;
  // Adaptive: the least-loaded eligible port (not paused for this class). Ties go round robin: breaking
  // them toward the hashed port would steer every flow back onto its ECMP path whenever the uplinks are
  // evenly loaded, and bring the flow collisions of ECMP back one hop further on; a plain rotating start
  // locks onto the period of the arriving flows the same way. So the search starts at a random port (the
  // switch's own seeded stream).
  scheduled_port& hp = *m_ports[hashed];
  const bool hashed_ok = !hp.paused(tc, t);
  const uint64_t hashed_depth = hp.depth(tc, t);
  if (hashed_ok && m_hot.ar_threshold_bytes > 0 && hashed_depth <= m_hot.ar_threshold_bytes) return hashed;
  const uint32_t start = uint32_t(m_ar_rng() >> 32);
  const equal_cost_group::choice best = g.least_loaded(start, [&](unsigned port, int64_t& cost) {
    scheduled_port& sp = *m_ports[port];
    if (sp.paused(tc, t) || !usable(port)) return false;
    cost = int64_t(sp.depth(tc, t));
    return true;
  });
  if (best.port == no_port) return hashed;  // every port paused: wait on the hashed one
  if (best.eligible >= 2) ++m_ar_decisions;
  if (hashed_ok && m_hot.ar_hysteresis_bytes > 0 && uint64_t(best.cost) + m_hot.ar_hysteresis_bytes >= hashed_depth)
    return hashed;
  if (best.port != hashed) ++m_ar_rerouted;
  return best.port;
}

bool spectrum_switch::admit(packet* p, unsigned in_port, unsigned egress, unsigned tc, picoseconds t) {
  const uint64_t size = p->wire().value;
  if (m_lossless[tc]) {
    const pfc_unit::admission a = m_pfc.admit(in_port, tc, size, m_shared_used + size <= m_shared_size, t);
    if (a.where == pfc_unit::held::overflow) {
      ++m_headroom_overflow;
      m_ports[egress]->count_drop(tc);
      return false;
    }
    if (a.where == pfc_unit::held::shared) m_shared_used += size;
    if (a.xoff) {
      send_pfc(in_port, tc, uint16_t(m_params.pfc_quanta));
      const picoseconds due = m_pfc.refresh_at(in_port, tc);
      pfc_refresh& r = *m_refresh[in_port];
      if (due < r.pending) {
        r.pending = due;
        m_ctx.calendar.schedule(&r, due);
      }
    }
  } else {
    // Dynamic threshold: a lossy queue may grow to alpha times what is left of the shared pool.
    const uint64_t free = m_shared_size - m_shared_used;
    const double limit = m_hot.dt_alpha * double(free);
    if (size > free || double(m_ports[egress]->queued_bytes(tc) + size) > limit) {
      m_ports[egress]->count_drop(tc);
      return false;
    }
    m_shared_used += size;
  }
  m_admitted_bytes += size;
  m_max_shared_used = std::max(m_max_shared_used, m_shared_used);
  return true;
}

void spectrum_switch::departing(packet* p, unsigned port, unsigned tc, picoseconds start, picoseconds t) {
  const uint64_t size = p->wire().value;
  if (m_lossless[tc]) {
    const pfc_unit::release r = m_pfc.depart(p->hop_in_port, tc, size, t);
    m_shared_used -= r.from_shared;
    if (r.xon) send_pfc(p->hop_in_port, tc, 0);
  } else {
    m_shared_used -= size;
  }
  m_released_bytes += size;
  // Marking at dequeue: the frame sees the queue it leaves behind, and carries the news without first
  // waiting through that queue.
  if (m_ecn_at_dequeue) mark_ecn(p, port, tc, t);
  if (m_hot.telemetry && p->int_requested && p->int_hops < core::max_int_hops) {
    scheduled_port& sp = *m_ports[port];
    m_ctx.pool.telemetry(p)[p->int_hops] = {start, sp.tx_bytes(),
                                            uint32_t(std::min<uint64_t>(sp.depth(tc, t), UINT32_MAX)),
                                            uint32_t(sp.out().rate().value / 1'000'000)};
    ++p->int_hops;
    p->seal();
  }
}

void spectrum_switch::send_pfc(unsigned port, unsigned prio, uint16_t quanta) {
  packet* f = m_ctx.pool.acquire();
  f->kind = core::frame_kind::pfc;
  f->eth.dst_mac = core::pfc_mac_control_da;
  f->eth.src_mac = switch_mac_base | port;
  f->pfc.class_enable = uint8_t(1u << prio);
  f->pfc.quanta[prio] = quanta;
  f->seal();
  m_ports[port]->send_control(f);
}

void spectrum_switch::refresh_pause(unsigned port, picoseconds t) {
  pfc_refresh& r = *m_refresh[port];
  if (t < r.pending) return;  // a stale entry: the pending one is later
  r.pending = never;
  const picoseconds next =
      m_pfc.refresh(port, t, [&](unsigned prio) { send_pfc(port, prio, uint16_t(m_params.pfc_quanta)); });
  if (next != never) {
    r.pending = next;
    m_ctx.calendar.schedule(&r, next);
  }
}

void spectrum_switch::mark_ecn(packet* p, unsigned egress, unsigned tc, picoseconds t) {
  if (!m_ecn[tc] || p->ip.ecn == 0 || p->ip.ecn == 3) return;  // not ECN-capable, or already CE
  const double prob = ecn_probability(m_ports[egress]->depth(tc, t));
  if (prob <= 0.0) return;
  if (prob < 1.0 && double(m_ecn_rng() >> 11) * 0x1.0p-53 >= prob) return;
  p->ip.ecn = 3;
  m_ports[egress]->count_ecn_mark(tc);
}

void spectrum_switch::receive(packet* p, unsigned in_port) {
  ++m_received;
  if (!parse(p, in_port)) return;
  const unsigned tc = priority_of(p);  // classify: priority p in traffic class p
  p->hop_in_port = uint16_t(in_port);
  p->hop_tc = uint8_t(tc);
  const equal_cost_ref route = lookup(p);
  if (route.count == 0) {
    ++m_no_route;
    m_ctx.pool.release(p);
    return;
  }
  const picoseconds t = core::now();
  const unsigned egress = select_egress(route, p, tc, t);
  if (egress == no_port) {  // every equal-cost port's link is known down
    ++m_no_live_port;
    m_ctx.pool.release(p);
    return;
  }
  scheduled_port& out = *m_ports[egress];
  if (!admit(p, in_port, egress, tc, t)) {
    m_ctx.pool.release(p);
    return;
  }
  if (!m_ecn_at_dequeue) mark_ecn(p, egress, tc, t);
  // The pipeline latency delays the frame's earliest departure; it is not a kernel event of its own.
  picoseconds ready = t + m_latency;
  // Cut-through: the frame's head left the parser while its tail was still arriving.
  if (m_cut_through && out.idle(t))
    ready = ready - cut_through_advance(p->wire(), core::bytes(m_hot.cut_through_bytes), m_ports[in_port]->out().rate(),
                                        out.out().rate());  // cables are symmetric
  out.enqueue(p, tc, ready, t);
}

}  // namespace fabricsim::sw
