// InfiniBand link-level flow control (IBTA vol. 1 sec. 7.9), one end of a link each: the sender side counts
// the 64-byte blocks it has sent per virtual lane (FCTBS) and may send a packet only while that stays within
// the credit limit (FCCL) last advertised by the far end; the receiver side counts the blocks it has
// received (ABR) and holds them in a buffer per VL until they leave, and advertises FCCL = ABR + free blocks
// back across the link in flow control packets. Used by both ends of every IB link: switch ports
// (quantum_switch) and host channel adapters (ib_endpoint), so the credit logic exists once. NVLink ports
// (sc_models/nvlink/) use the same machinery with one credit per flit (credit_params::credit_bytes).
//
// Timing: a credit update is sent no sooner than `update_period_ns` after the previous one from the same
// port and arrives `link latency + update_latency_ns` later; updates are sent only when buffer space was
// freed (the spec's periodic refresh of an unchanged FCCL carries no news and is not modelled). The 6-byte
// flow control packets are not charged against the reverse wire (at the default period that is < 0.1 %).
// Counters are 64-bit here; the spec's 12-bit modular FCTBS/FCCL is equivalent while a VL's buffer is under
// 2048 blocks (128 KiB), which validate() enforces.
//
// Blocks lost on the wire (an injected fault: docs/faults.md) would leak credit for ever if nothing else
// happened: the sender counted them in FCTBS, the receiver never in ABR, so the FCCL it advertises stays
// short by them. IB recovers this by the flow control packets the sender sends at least once per refresh
// period on every VL, carrying its FCTBS: on receipt the receiver sets ABR to it (IBTA 7.9.4.2), which
// advertises the lost blocks as free again. wire_loss_recovery models the first such packet after a loss,
// sent at the next multiple of `fc_refresh_ns` once the carrier is up (after an outage the link retrains,
// and the re-initialised credit state is the same as this resynchronisation).
#include "sc_models/core/fault_injector.h"
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "sc_models/core/arrival_calendar.h"
#include "sc_models/core/link.h"
#include "sc_models/core/packet.h"
#include "sc_models/core/params.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/units.h"

namespace fabricsim::sw::ib {

constexpr unsigned max_vls = 16;          // VL0-VL14 data, VL15 subnet management
constexpr uint64_t block_bytes = 64;      // one flow-control credit
constexpr uint64_t max_vl_blocks = 2048;  // half the 12-bit credit space (IBTA 7.9.4)
constexpr uint64_t blocks_of(uint64_t wire_bytes) { return (wire_bytes + block_bytes - 1) / block_bytes; }
// The LID of a fabric host: host i has address 10.0.0.1 + i (topology::host_ip) and LID i + 1.
inline uint16_t host_lid(const core::ip_address& ip) {
  return uint16_t(ip.v4_value() - core::fabric_host_ip_base + 1u);
}

struct credit_params {
  uint64_t vl_buffer_bytes = 65536;  // receive buffer per data VL (estimate)
  double update_period_ns = 50.0;    // least time between two credit updates from one port
  double update_latency_ns = 20.0;   // building and parsing the flow control packet, beyond the cable
  double fc_refresh_ns = 2600.0;     // period of the sender's FCTBS refresh (only its effect on losses is modelled)
  // Bytes per credit. Not a scenario key of IB (always 64 there): a link layer with another credit unit (the
  // NVLink flit, sc_models/nvlink/) sets it; the receiver's limit is vl_buffer_bytes / credit_bytes credits.
  uint64_t credit_bytes = block_bytes;
  void visit(core::param_visitor& v);
  void validate(const std::string& inst) const;
};

class credit_receiver;

// Whatever sends on an IB link and takes the far end's credit updates: `port` is its own port number.
class credit_peer {
 public:
  virtual ~credit_peer() = default;
  virtual void credit_update(unsigned port, unsigned vl, uint64_t fccl_blocks) = 0;
  // The receiving side of `port` and its data VLs, for the recovery of frames lost on the wire into it
  // (testbench/faults.cpp); null when the port takes no credits (an Ethernet NIC) or none is modelled.
  virtual credit_receiver* receiver_at(unsigned /*port*/) { return nullptr; }
  virtual unsigned receiver_vls() const { return 1; }
};

// The sending side of a port.
class credit_sender {
 public:
  // A peer that does not take part in credit flow control (an Ethernet NIC): never wait for credits.
  void set_unlimited(bool u) { m_unlimited = u; }
  bool unlimited() const { return m_unlimited; }
  bool can_send(unsigned vl, uint64_t blocks) const { return m_unlimited || m_fctbs[vl] + blocks <= m_fccl[vl]; }
  uint64_t free_blocks(unsigned vl) const { return m_unlimited ? UINT64_MAX / 2 : m_fccl[vl] - m_fctbs[vl]; }
  // Counts a packet put on the wire; the caller has checked can_send (a violation is counted, never hidden).
  void sent(unsigned vl, uint64_t blocks) {
    if (!can_send(vl, blocks)) ++m_violations;
    m_fctbs[vl] += blocks;
  }
  // A credit update from the far end. Updates can only raise the limit (a stale one is ignored).
  void update(unsigned vl, uint64_t fccl) {
    if (fccl > m_fccl[vl]) m_fccl[vl] = fccl;
  }
  uint64_t fctbs(unsigned vl) const { return m_fctbs[vl]; }
  uint64_t fccl(unsigned vl) const { return m_fccl[vl]; }
  uint64_t violations() const { return m_violations; }

  // Stall accounting: VL `vl` has a packet ready and no credit for it from `t` (begin) until `t` (end).
  void stall(unsigned vl, bool stalled, core::picoseconds t) {
    if (stalled == bool(m_stalled >> vl & 1)) return;
    if (stalled) {
      m_stall_from[vl] = t;
      ++m_stall_count[vl];
    } else {
      m_stall_ps[vl] += t.value - m_stall_from[vl].value;
    }
    m_stalled ^= 1u << vl;
  }
  // Stall time up to `t`, an open stall included.
  uint64_t stall_ps(unsigned vl, core::picoseconds t) const {
    return m_stall_ps[vl] + ((m_stalled >> vl & 1) ? t.value - m_stall_from[vl].value : 0);
  }
  uint64_t stalls(unsigned vl) const { return m_stall_count[vl]; }
  // Counter storage for the stats registry (closed stalls only).
  uint64_t* stall_ps_counter(unsigned vl) { return &m_stall_ps[vl]; }

 private:
  std::array<uint64_t, max_vls> m_fctbs{};
  std::array<uint64_t, max_vls> m_fccl{};
  std::array<uint64_t, max_vls> m_stall_ps{};
  std::array<uint64_t, max_vls> m_stall_count{};
  std::array<core::picoseconds, max_vls> m_stall_from{};
  uint32_t m_stalled = 0;
  bool m_unlimited = false;
  uint64_t m_violations = 0;
};

// The receiving side of a port: the buffer per VL and the credit updates it sends back.
class credit_receiver : public core::calendar_client {
 public:
  credit_receiver(const credit_params& params, unsigned vls, core::arrival_calendar& calendar);
  credit_receiver(const credit_receiver&) = delete;
  credit_receiver& operator=(const credit_receiver&) = delete;

  // Elaboration: where updates go (the far end's sender, its port) and the link they travel along (`out`,
  // the one this port transmits on: its latency is the cable's). Link initialisation: the far end learns the
  // initial limit at once (IB links exchange it before going Active).
  //
  // Scale-out (docs/scale_out.md): when `out` has a proxy the far end is in another process; `peer` is then
  // not used (it need not exist here), each update goes to the proxy at the time it is sent, with its arrival
  // time, and the far process delivers it. The initial limit is not sent: the far end's owner sets it
  // (every port of a fabric advertises the same, see quantum_switch::end_of_elaboration). Updates are due
  // with `out`'s credit_calendar_key() (in this process too: delivery is a calendar client of its own, while
  // the receiver's own wake-ups keep key 0), so every partition delivers them in the same order.
  void attach(credit_peer* peer, unsigned peer_port, core::link& out);
  bool attached() const { return m_peer != nullptr || m_proxy != nullptr; }

  uint64_t limit_blocks() const { return m_limit; }
  // A packet of `blocks` arrived on `vl`. Beyond the buffer (a sender that ignored credits) it is still
  // held, never dropped, and counted as an overrun.
  void received(unsigned vl, uint64_t blocks);
  // `blocks` of `vl` left the buffer at `t` (now): the space is advertised in the next update.
  void released(unsigned vl, uint64_t blocks, core::picoseconds t);

  uint64_t used(unsigned vl) const { return m_used[vl]; }
  uint64_t max_used(unsigned vl) const { return m_max_used[vl]; }
  uint64_t abr(unsigned vl) const { return m_abr[vl]; }
  uint64_t overruns() const { return m_overruns; }
  uint64_t updates_sent() const { return m_updates; }
  // The far sender's flow control packet, reporting `lost` blocks of `vl` that never arrived (its FCTBS is
  // ahead of this ABR by them), arrives at `at` (>= now, in order): ABR catches up, the blocks are
  // advertised as free. Returns nothing; counted in resynced_blocks().
  void resync(unsigned vl, uint64_t lost, core::picoseconds at);
  uint64_t resynced_blocks() const { return m_resynced; }

  void on_due(core::picoseconds t) override;

 private:
  struct in_flight {
    core::picoseconds arrives;
    uint32_t vl;
    uint64_t fccl;
  };
  uint64_t fccl(unsigned vl) const { return m_abr[vl] + (m_limit - std::min(m_limit, m_used[vl])); }
  void wake(core::picoseconds t);
  void send(core::picoseconds t);  // one flow control packet per VL with space freed
  void deliver(core::picoseconds t);  // the updates that have crossed the link by `t`, to the far end

  // Delivers the updates in flight at their arrival, at the calendar key of the link they travel along.
  class delivery : public core::calendar_client {
   public:
    explicit delivery(credit_receiver& rx) : m_rx(rx) {}
    void on_due(core::picoseconds t) override { m_rx.deliver(t); }

   private:
    credit_receiver& m_rx;
  };

  uint64_t m_limit;
  unsigned m_vls;
  core::picoseconds m_period, m_latency{};
  core::arrival_calendar& m_calendar;
  credit_peer* m_peer = nullptr;
  unsigned m_peer_port = 0;
  core::link* m_out = nullptr;         // the link updates travel along
  core::link_proxy* m_proxy = nullptr;  // its proxy: the far end is in another process
  std::array<uint64_t, max_vls> m_abr{};
  std::array<uint64_t, max_vls> m_used{};
  std::array<uint64_t, max_vls> m_max_used{};
  uint32_t m_dirty = 0;  // VLs with space freed since the last update
  core::picoseconds m_next_send{};
  core::picoseconds m_wake{UINT64_MAX};
  core::ring<in_flight> m_flight;  // arrival order (one latency, sent in time order)
  delivery m_delivery{*this};      // due at the head of m_flight
  struct resync_due {
    core::picoseconds at;
    uint32_t vl;
    uint64_t blocks;
  };
  core::ring<resync_due> m_resync;
  uint64_t m_overruns = 0, m_updates = 0, m_resynced = 0;
};

// Recovers the credits of frames a fault destroys on one direction of an IB cable: listens to the link's
// fault injector and has the receiving end resynchronise at the sender's next flow control packet (see the
// head of this file). Frames that are not InfiniBand are ignored.
class wire_loss_recovery : public core::wire_loss_listener {
 public:
  // `rx`: the receiver at the far end; `latency`: the cable's; `refresh`: the FCTBS refresh period;
  // `carrier`: the injector, to find when the carrier is up again.
  wire_loss_recovery(credit_receiver& rx, unsigned vls, core::picoseconds latency, core::picoseconds refresh,
                     const core::fault_injector& carrier)
      : m_rx(rx), m_vls(vls), m_latency(latency), m_refresh(refresh), m_carrier(carrier) {}
  void on_wire_loss(const core::packet& p, core::picoseconds start, core::picoseconds end) override;
  uint64_t lost_blocks() const { return m_lost_blocks; }

 private:
  credit_receiver& m_rx;
  unsigned m_vls;
  core::picoseconds m_latency, m_refresh;
  const core::fault_injector& m_carrier;
  core::picoseconds m_last{};
  uint64_t m_lost_blocks = 0;
};

}  // namespace fabricsim::sw::ib
