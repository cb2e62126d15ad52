// The Spectrum-4 (Spectrum-X) Ethernet switch pipeline. Each stage is a named block with its own
// nanosecond cost; together they make the port-to-port latency:
//   parse     L2/L3/L4 headers, TTL; a PFC frame stops here and pauses the port it arrived on
//   classify  trust DSCP (or PCP) -> switch priority -> traffic class (RoCE lossless, CNP strict, default)
//   lookup    L3 host route; ECMP over the equal-cost ports by a seeded hash of the 5-tuple (UDP source
//             port included, so a NIC sprays by varying it), or per-packet adaptive routing to the
//             least-loaded eligible port; ports whose link is known down (fault injection) are skipped,
//             and, once the fabric's fault notification arrives (fault.notification_us after the failed
//             cable's ends detect it), ports whose far switch has lost its way to the destination
//   admit     one shared buffer with per-(ingress port, priority) and per-(egress port, class) accounting:
//             dynamic thresholds and tail drop for lossy classes, XOFF/XON with headroom for lossless ones;
//             ECN marking on the RED line of the egress queue
//   schedule  strict priority, then DWRR (ETS) across classes; in-band telemetry stamped at departure
// Cut-through: a frame whose egress port is idle (and no faster than its ingress) leaves as soon as its
// headers are parsed, before its tail has arrived.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/params.h"
#include "sc_models/core/rng.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/switch/equal_cost_group.h"
#include "sc_models/switch/quantum/reachability.h"
#include "sc_models/switch/scheduled_port.h"
#include "sc_models/switch/spectrum/pfc_unit.h"
#include "sc_models/switch/switch_device.h"

namespace fabricsim::sw {

struct spectrum_params {
  std::string port_config = "128x400";      // 51.2 Tb/s as 64 x 800G, 128 x 400G or 256 x 200G (breakout)
  std::string forwarding = "cut_through";   // or "store_and_forward"
  double parse_ns = 80.0;                   // stage costs (estimates; together the port-to-port latency)
  double classify_ns = 40.0;
  double lookup_ns = 120.0;
  double admit_ns = 80.0;
  double schedule_ns = 80.0;
  uint64_t cut_through_bytes = 128;         // bytes the parser needs before a cut-through frame can go
  std::string routing = "ecmp";             // or "adaptive" (per packet)
  uint64_t ar_threshold_bytes = 0;          // adaptive: keep the hashed port while its depth is at most this
                                            // (0: off, every packet goes to the least-loaded port)
  uint64_t ar_hysteresis_bytes = 0;         // adaptive: leave the hashed port only for one lighter by more
                                            // than this (0: off)
  uint64_t buffer_bytes = 134217728;        // the one shared packet buffer (estimate: 128 MB)
  double dt_alpha = 1.0;                    // lossy queues: a queue may hold alpha x the free shared buffer
  std::string trust = "dscp";               // priority from DSCP (priority = DSCP / 8) or from the VLAN PCP
  std::string lossless_priorities = "3";    // PFC-enabled priorities (NVIDIA RoCE default: 3)
  std::string strict_priorities = "6";      // strict-priority classes (CNPs on 6)
  std::string ets_weights = "0:50,3:50";    // DWRR weights of the other classes, class:weight
  std::string ecn_classes = "3";            // classes whose queues mark ECN
  uint64_t ecn_kmin_bytes = 150000;         // RED line: no marks below Kmin
  uint64_t ecn_kmax_bytes = 1500000;        // every ECT frame marked at or above Kmax
  double ecn_pmax = 1.0;                    // marking probability reached at Kmax
  std::string ecn_mark_at = "dequeue";      // judge (and mark) a frame as it leaves its queue, or as it joins
  uint64_t pfc_xoff_bytes = 262144;         // per (ingress port, lossless priority): XOFF at this many bytes
  uint64_t pfc_xon_bytes = 196608;          // XON when back below this
  uint64_t pfc_headroom_bytes = 0;          // per (ingress port, lossless priority); 0: sized from the cable
  uint64_t pfc_quanta = 65535;              // pause time in XOFF frames, in 512-bit quanta
  uint64_t tx_fifo_frames = 4;              // MAC transmit FIFO depth per port
  bool telemetry = false;                   // stamp in-band telemetry into packets that ask for it
  void visit(core::param_visitor& v);
  // The rate of a port under port_config ("128x400": 400 Gb/s); 0 when port_config is not PORTSxGBPS.
  double port_gbps() const;
  // The breakout whose ports run at least `gbps` ("64x800" for 800), or "" when none does.
  static std::string port_config_for(double gbps);
};

// alignas(64): the bases end 256 bytes in, so the fields every frame reads start a cache line.
class alignas(64) spectrum_switch : public sc_core::sc_module,
                                    public switch_device,
                                    public port_owner,
                                    public reachability_user {
 public:
  spectrum_switch(sc_core::sc_module_name name, const spectrum_params& params, unsigned ports,
                  core::sim_context& ctx);
  spectrum_switch(const spectrum_switch&) = delete;
  spectrum_switch& operator=(const spectrum_switch&) = delete;
  ~spectrum_switch() override;

  void connect_port(unsigned port, core::link& out) override;
  void add_route(const core::ip_address& dst, std::vector<unsigned> egress_ports) override;
  unsigned ports() const override { return unsigned(m_ports.size()); }
  const char* device_name() const override { return name(); }
  // Remote fault notification (docs/faults.md): the fabric's reachability table, keyed by the destination
  // host's index + 1 (ib::host_lid of its address), in force from a notification's arrival.
  reachability_user* reachability() override { return this; }
  int lft(uint16_t dlid) const override;
  equal_cost_group ar_group(uint16_t dlid) const override;
  void set_reachability(core::picoseconds from, reach_rows rows) override;
  bool subnet_managed() const override { return false; }
  void receive(core::packet* p, unsigned in_port) override;
  void departing(core::packet* p, unsigned port, unsigned tc, core::picoseconds start, core::picoseconds t) override;

  scheduled_port& port(unsigned i) { return *m_ports.at(i); }
  core::picoseconds latency() const { return m_latency; }
  unsigned priority_of(const core::packet* p) const;
  bool lossless(unsigned prio) const { return m_lossless[prio]; }
  // The RED line: marking probability for an ECT frame that finds `queue_bytes` in its queue.
  double ecn_probability(uint64_t queue_bytes) const;
  // Buffer accounting, for tests and reports.
  uint64_t shared_size() const { return m_shared_size; }
  uint64_t shared_used() const { return m_shared_used; }
  uint64_t headroom_size(unsigned port) const { return m_pfc.headroom_size(port); }
  uint64_t headroom_used(unsigned port, unsigned prio) const { return m_pfc.headroom_used(port, prio); }
  uint64_t ingress_bytes(unsigned port, unsigned prio) const { return m_pfc.ingress_bytes(port, prio); }
  bool xoff_asserted(unsigned port, unsigned prio) const { return m_pfc.xoff_asserted(port, prio); }
  uint64_t admitted_bytes() const { return m_admitted_bytes; }
  uint64_t released_bytes() const { return m_released_bytes; }

  // PFC pause timeline (report only): pfc_unit::pause_log.
  using pause_interval = pfc_unit::pause_interval;
  static constexpr size_t pause_log_limit = pfc_unit::pause_log_limit;
  const std::vector<pause_interval>& pause_log() const { return m_pfc.pause_log(); }
  core::picoseconds pause_log_complete_until() const { return m_pfc.pause_log_complete_until(); }

 private:
  // Host routes in an open-addressing table whose slots hold the route itself (one cache line touched per
  // lookup in the common case); equal-cost port sets are stored once and shared (m_groups).
  struct route {
    core::ip_address dst;
    equal_cost_ref ports;  // count 0 marks an empty slot
  };
  // Re-sends XOFF before the upstream pause expires while a priority stays congested.
  class pfc_refresh : public core::calendar_client {
   public:
    pfc_refresh(spectrum_switch& s, unsigned port) : m_switch(s), m_port(port) {}
    void on_due(core::picoseconds t) override { m_switch.refresh_pause(m_port, t); }
    core::picoseconds pending{UINT64_MAX};

   private:
    spectrum_switch& m_switch;
    unsigned m_port;
  };

  void rehash(size_t slots);
  // Pipeline stages.
  bool parse(core::packet* p, unsigned in_port);  // false: consumed (PFC) or dropped (TTL)
  // The destination's equal-cost ports (count 0: no route).
  equal_cost_ref lookup(const core::packet* p) const { return lookup(p->ip.dst); }
  equal_cost_ref lookup(const core::ip_address& dst) const {
    const uint64_t host = host_number(dst);
    if (host < m_host_routes.size()) return m_host_routes[host];
    return lookup_hashed(dst);
  }
  equal_cost_ref lookup_hashed(const core::ip_address& dst) const;
  // The fabric host number of `dst` (0 for 10.0.0.1, topology::host_ip: an IPv4-mapped address at or above
  // it), or UINT64_MAX for any other address; read from the address's two words (a little-endian host).
  static uint64_t host_number(const core::ip_address& dst) {
    uint64_t w[2];
    std::memcpy(w, dst.octets.data(), 16);
    if (w[0] != 0 || uint32_t(w[1]) != 0xffff0000u) return UINT64_MAX;
    const uint32_t v4 = __builtin_bswap32(uint32_t(w[1] >> 32));
    return v4 >= host_ip_base ? uint64_t(v4 - host_ip_base) : UINT64_MAX;
  }
  static constexpr uint32_t host_ip_base = core::fabric_host_ip_base;  // host 0's address, LID 1
  static constexpr uint64_t host_route_limit = uint64_t(1) << 20;      // hosts routed by number, not hashed
  // Whether `port` may carry a packet for host `dlid` at `t`: its link is not known down and, once a
  // reachability table is set, the switch beyond it still reaches the host.
  bool live(unsigned port, uint16_t dlid, core::picoseconds t) const;
  // The egress port, or no_port when every equal-cost port's link is known down (the frame is dropped).
  unsigned select_egress(equal_cost_ref ports, const core::packet* p, unsigned tc, core::picoseconds t);
  static constexpr unsigned no_port = equal_cost_group::none;
  bool admit(core::packet* p, unsigned in_port, unsigned egress, unsigned tc, core::picoseconds t);
  void mark_ecn(core::packet* p, unsigned egress, unsigned tc, core::picoseconds t);
  // PFC.
  void send_pfc(unsigned port, unsigned prio, uint16_t quanta);
  void refresh_pause(unsigned port, core::picoseconds t);
  core::picoseconds pause_time(unsigned port, uint16_t quanta) const;
  void configure_classes();

  // Laid out by use: what a frame's receive, routing, admission and departure read first (about four cache
  // lines, the switch's parameters they read copied into m_hot), then the rest (the routing tables' other
  // halves, the parameters as given, the two 2.5 KB random streams).
  struct hot_params {  // the per-frame reads of m_params
    uint64_t ar_threshold_bytes, ar_hysteresis_bytes, cut_through_bytes, ecn_kmin_bytes, ecn_kmax_bytes;
    double ecn_pmax, dt_alpha;
    bool telemetry;
  };
  core::sim_context& m_ctx;
  core::picoseconds m_latency;
  core::five_tuple_hasher m_hash;  // ECMP, seeded per switch
  bool m_adaptive;
  bool m_cut_through;
  bool m_trust_pcp;
  bool m_ecn_at_dequeue;
  bool m_reach_set = false;
  std::array<bool, traffic_classes> m_lossless{};
  std::array<bool, traffic_classes> m_ecn{};
  hot_params m_hot;
  std::vector<std::unique_ptr<scheduled_port>> m_ports;
  // Routes to the fabric's hosts by host number (host_number(): one 8-byte entry per host, count 0 where none
  // is set), in the line a frame's lookup reads; every other destination in m_route_slots, hashed. At 256
  // hosts the hashed slot (24 bytes, in a table twice the routes) was a cache miss on about 40 % of receive()'s
  // wall-clock samples (docs/performance.md, "The route lookup by host number").
  std::vector<equal_cost_ref> m_host_routes;
  std::vector<route> m_route_slots;
  equal_cost_groups m_groups;
  pfc_unit m_pfc;  // lossless accounting per (ingress port, priority), XOFF/XON
  uint64_t m_shared_size = 0;
  uint64_t m_shared_used = 0;
  uint64_t m_received = 0, m_admitted_bytes = 0, m_released_bytes = 0, m_max_shared_used = 0;
  uint64_t m_ar_decisions = 0, m_ar_rerouted = 0;

  uint64_t m_no_live_port = 0, m_no_route = 0, m_ttl_expired = 0, m_headroom_overflow = 0;
  size_t m_route_count = 0;
  unsigned m_max_ports;
  double m_port_gbps;
  scheduler_config m_sched;
  std::vector<std::unique_ptr<pfc_refresh>> m_refresh;
  // The reachability tables (set_reachability): [1] from its `from` on, [0] before that; none set: every
  // port whose link is up is taken to reach every destination (only the cable's ends know of a fault).
  struct reach_table {
    core::picoseconds from{};
    reach_rows beyond;  // [port][dlid]; an empty row: a host beyond the port, nothing to check
  };
  std::array<reach_table, 2> m_reach;
  spectrum_params m_params;
  core::rng_stream m_ecn_rng;
  core::rng_stream m_ar_rng;  // adaptive routing: where the search for the least-loaded port starts
};

}  // namespace fabricsim::sw
