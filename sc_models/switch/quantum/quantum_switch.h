// The Quantum-X800 InfiniBand switch: 144 XDR ports (800 Gb/s, 4 lanes of 200G) by default, lossless by
// construction. A packet is held in the receive buffer of the (ingress port, VL) it arrived on until it
// leaves; a port sends only while the far end has advertised credit for the packet's VL (credit_link.h),
// so nothing is ever dropped for want of buffer and congestion shows up as credit stalls, counted per port
// and VL.
//   receive   classify: LRH SL -> egress VL through the egress port's SL-to-VL table
//   lookup    linear forwarding table (LFT) indexed by DLID, built from the fabric's routes (up/down on a fat
//             tree); with adaptive routing, the LID's AR group (every equal-cost port) is searched for the
//             port with the most free credits on the VL, less the bytes already queued there
//   schedule  per egress port, VL arbitration (IBTA 7.6.9): the high-priority table, then the low-priority
//             table, weights in 64-byte units, and the high limit (4 KiB units of high-priority traffic
//             before a waiting low-priority packet gets a turn)
// Faults (docs/faults.md): once a port's link is known down (fault.detect_us after the carrier drops) the
// port discards what it holds and takes no more, and routing avoids every port whose link, or whose path
// further down the up/down tree, is known down, as the subnet manager's reroute would (the LFT's D-mod-K
// choice made over the live ports of the LID's group); a LID with no live port is dropped and counted. The
// path beyond a port is read from a reachability table the fabric computes from the fault schedule
// (reachability.h) and sets here; no switch asks another at run time.
// Events: an egress port commits one packet when the wire is free and is woken through the arrival
// calendar (wire free, head ready, or a credit update), so a busy hop costs about one calendar entry per
// packet beside the link's delivery. No per-packet allocation: queues are rings of descriptor pointers.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/params.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/rng.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/ib/credit_link.h"
#include "sc_models/switch/equal_cost_group.h"
#include "sc_models/switch/quantum/reachability.h"
#include "sc_models/switch/switch_device.h"

namespace fabricsim::sw {

struct quantum_params {
  uint64_t ports = 144;            // radix: 144 x 800G (Quantum-X800 Q3400)
  double port_gbps = 800.0;        // XDR: 4 lanes x 200 Gb/s
  double pipeline_ns = 200.0;      // port-to-port latency of the forwarding pipeline (estimate)
  bool cut_through = true;         // an idle egress starts sending before the tail has arrived
  uint64_t data_vls = 1;           // data VLs in use (VL0 .. data_vls - 1)
  std::string sl_to_vl;            // 16 comma-separated VLs, one per SL; empty: SL mod data_vls
  std::string vl_high_table;       // VL arbitration high-priority table "vl:weight,..." (weight x 64 B)
  std::string vl_low_table;        // low-priority table; empty: every data VL with weight 64
  uint64_t high_limit = 255;       // 4 KiB units of high priority before a low turn; 255: unlimited
  std::string routing = "static";  // "static" (the LFT port) or "adaptive" (AR group by free credits)
  ib::credit_params credit;
  void visit(core::param_visitor& v);
};

// One (VL, weight) entry of a VL arbitration table.
struct vl_arb_entry {
  uint8_t vl;
  uint8_t weight;  // 64-byte units; 0: skipped
};
// Parses "vl:weight,..." (VL 0-14, weight 0-255); throws core::config_error naming `key`.
std::vector<vl_arb_entry> parse_vl_table(const std::string& text, unsigned data_vls, const std::string& key,
                                         const std::string& inst);

class quantum_switch;
class sharp_aggregator;

// The egress side of a port: a queue per VL, VL arbitration, the credit sender, the link.
class quantum_port : public core::calendar_client {
 public:
  quantum_port(quantum_switch& owner, unsigned index, core::link& out, const quantum_params& params,
               const std::vector<vl_arb_entry>& high, const std::vector<vl_arb_entry>& low);
  quantum_port(const quantum_port&) = delete;
  quantum_port& operator=(const quantum_port&) = delete;

  void enqueue(core::packet* p, unsigned vl, uint32_t blocks, core::picoseconds ready);
  // Faults: watch the link's carrier (wake when it becomes known down or up). Elaboration only.
  void watch_faults();
  uint64_t discarded_down() const { return m_discarded_down; }
  uint64_t* discarded_down_counter() { return &m_discarded_down; }
  void credit(unsigned vl, uint64_t fccl, core::picoseconds t);
  void on_due(core::picoseconds t) override;

  ib::credit_sender& sender() { return m_sender; }
  const ib::credit_sender& sender() const { return m_sender; }
  core::link& out() { return m_out; }
  uint64_t queued_bytes() const { return m_queued_bytes; }
  uint64_t queued_bytes(unsigned vl) const { return m_vl_bytes[vl]; }
  bool idle(core::picoseconds t) const { return m_queued_bytes == 0 && m_busy_until <= t; }
  std::array<uint8_t, 16>& sl_to_vl() { return m_sl2vl; }

  // Per VL counters.
  struct vl_counters {
    uint64_t tx_packets = 0, tx_bytes = 0, ar_decisions = 0, max_queue_bytes = 0;
  };
  const vl_counters& counters(unsigned vl) const { return m_vl[vl]; }
  vl_counters& counters(unsigned vl) { return m_vl[vl]; }

 private:
  struct queued {
    core::packet* p;
    core::picoseconds ready;
    uint32_t bytes;
    uint32_t blocks;
  };
  struct arbiter {
    std::vector<vl_arb_entry> table;
    size_t index = 0;
    uint32_t left = 0;  // weight left in the current entry (64-byte units); 0: entry not started
  };
  void serve(core::picoseconds t);
  bool sendable(unsigned vl, core::picoseconds t) const;
  int pick(arbiter& a, core::picoseconds t);
  void charge(arbiter& a, uint32_t blocks);
  void update_stalls(core::picoseconds t);
  void wake(core::picoseconds t);
  void discard_all(core::picoseconds t);

  // Wakes the port when its link's known state changes (a calendar client of its own, so the port's single
  // pending wake-up is not disturbed).
  class fault_watch : public core::calendar_client {
   public:
    explicit fault_watch(quantum_port& p) : m_port(p) {}
    void on_due(core::picoseconds t) override;

   private:
    quantum_port& m_port;
  };

  quantum_switch& m_owner;
  unsigned m_index;
  core::link& m_out;
  unsigned m_vls;
  uint64_t m_high_limit_bytes;  // UINT64_MAX: unlimited
  std::array<core::ring<queued>, ib::max_vls> m_queue;
  std::array<uint64_t, ib::max_vls> m_vl_bytes{};
  uint64_t m_queued_bytes = 0;
  uint32_t m_nonempty = 0;
  arbiter m_high, m_low;
  uint64_t m_high_bytes = 0;  // high-priority bytes since the last low-priority opportunity
  core::picoseconds m_busy_until{};
  core::picoseconds m_wake{UINT64_MAX};
  bool m_serving = false;
  ib::credit_sender m_sender;
  std::array<uint8_t, 16> m_sl2vl{};
  std::array<vl_counters, ib::max_vls> m_vl{};
  std::unique_ptr<fault_watch> m_watch;
  uint64_t m_discarded_down = 0;
};

class quantum_switch : public sc_core::sc_module,
                       public switch_device,
                       public ib::credit_peer,
                       public reachability_user {
 public:
  quantum_switch(sc_core::sc_module_name name, const quantum_params& params, unsigned ports, core::sim_context& ctx);
  quantum_switch(const quantum_switch&) = delete;
  quantum_switch& operator=(const quantum_switch&) = delete;
  ~quantum_switch() override;

  // switch_device. add_route takes the fabric's equal-cost egress ports to a host and turns them into an LFT
  // entry (the DLID of host i is i + 1, from its address 10.0.0.1 + i) and an AR group.
  void connect_port(unsigned port, core::link& out) override;
  void add_route(const core::ip_address& dst, std::vector<unsigned> egress_ports) override;
  unsigned ports() const override { return unsigned(m_ports.size()); }
  const char* device_name() const override { return name(); }
  void receive(core::packet* p, unsigned in_port) override;
  void credit_update(unsigned port, unsigned vl, uint64_t fccl_blocks) override;
  ib::credit_receiver* receiver_at(unsigned port) override { return m_rx.at(port).get(); }
  unsigned receiver_vls() const override { return m_vls; }
  reachability_user* reachability() override { return this; }
  bool subnet_managed() const override { return true; }
  quantum_switch* sharp_switch() override { return this; }

  // The LFT entry for `dlid` with its AR group (the first of `ports` is not special: the LFT port is
  // ports[dlid mod count], spreading destinations over equal-cost up-ports like D-mod-K fat-tree routing).
  void add_lid_route(uint16_t dlid, const std::vector<unsigned>& ports);
  // The LFT port for `dlid`, or -1.
  int lft(uint16_t dlid) const override;
  equal_cost_group ar_group(uint16_t dlid) const override { return m_groups.group(m_group_of.at(dlid)); }
  static uint16_t lid_of(const core::ip_address& host);

  quantum_port& port(unsigned i) { return *m_ports.at(i); }
  bool connected(unsigned i) const { return i < m_ports.size() && m_ports[i] != nullptr; }
  ib::credit_receiver& receiver(unsigned i) { return *m_rx.at(i); }
  core::picoseconds latency() const { return m_latency; }
  unsigned data_vls() const { return m_vls; }
  uint64_t received() const { return m_received; }
  uint64_t no_route() const { return m_no_route; }
  uint64_t ar_decisions() const { return m_ar_decisions; }
  uint64_t ar_rerouted() const { return m_ar_rerouted; }
  uint64_t no_live_port() const { return m_no_live_port; }
  // Faults: one of this switch's links has a fault injector, or the fabric has given it a reachability
  // table (set_reachability), so routing checks liveness.
  bool fault_aware() const { return m_fault_aware; }
  // Whether a packet for `dlid` leaving on `port` at `t` can reach it: the port's link is not known down and
  // the reachability table in force at `t` says the far switch (if any) reaches dlid.
  bool port_live(unsigned port, uint16_t dlid, core::picoseconds t) const;
  // The fabric's reachability beyond each port (reach_beyond's rows for this switch), in force from `from`
  // until the next table's `from`. The table in force until then stays: the fabric sets each table before its
  // time comes, so a lookup at `t` never depends on the order of simultaneous events.
  void set_reachability(core::picoseconds from, reach_rows rows) override;

  // Called by a port when a packet is committed to its wire: frees the ingress buffer (credits go back).
  void departing(core::packet* p, uint32_t blocks, core::picoseconds t);
  core::sim_context& ctx() { return m_ctx; }
  // SHARP (sharp_aggregator.h): this switch's aggregation unit on a tree; it takes SHARP packets. A switch on
  // several trees (one per rail, sharing a spine) has one unit per tree; a SHARP packet goes to the unit whose
  // operation its dest_qp names (else to the first, which counts it unexpected).
  void set_sharp(sharp_aggregator* a) { m_sharp.assign(1, a); }
  void add_sharp(sharp_aggregator* a) { m_sharp.push_back(a); }
  size_t sharp_units() const { return m_sharp.size(); }

 protected:
  void end_of_elaboration() override;

 private:
  // The egress port, or -1 when no port of the LID's group is live (faults).
  int select_egress(uint16_t dlid, unsigned vl_sl, core::picoseconds t);

  core::sim_context& m_ctx;
  quantum_params m_params;
  core::picoseconds m_latency;
  bool m_adaptive;
  unsigned m_vls;
  std::array<uint8_t, 16> m_default_sl2vl{};
  std::vector<vl_arb_entry> m_high_table, m_low_table;
  core::rng_stream m_ar_rng;
  std::vector<std::unique_ptr<quantum_port>> m_ports;
  std::vector<std::unique_ptr<ib::credit_receiver>> m_rx;
  std::vector<uint16_t> m_lft;       // [dlid]: egress port, 0xffff none
  std::vector<equal_cost_ref> m_group_of;  // [dlid]: its AR group in m_groups
  equal_cost_groups m_groups;
  // The reachability tables: [1] from its `from` on, [0] before that (set_reachability).
  struct reach_table {
    core::picoseconds from{};
    reach_rows beyond;  // [port][dlid]; an empty row (or none): nothing beyond the port to check
  };
  std::array<reach_table, 2> m_reach;
  bool m_fault_aware = false;
  uint64_t m_received = 0, m_no_route = 0, m_not_ib = 0, m_ar_decisions = 0, m_ar_rerouted = 0;
  uint64_t m_no_live_port = 0;
  uint64_t m_stall_ps_total = 0;
  sharp_aggregator* sharp_unit(const core::packet* p) const;
  std::vector<sharp_aggregator*> m_sharp;
};

}  // namespace fabricsim::sw
