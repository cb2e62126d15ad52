// The egress side of a switch port: eight traffic-class queues, a scheduler (strict priority over the
// classes that have it, then deficit-weighted round robin as ETS shares the rest), PFC pause per priority,
// and the MAC's transmit FIFO.
//
// Kernel events: the scheduler commits up to `tx_fifo_frames` frames to the link ahead of the wire and is
// woken (through the arrival calendar, no event of its own) when one committed frame is left, so a busy
// port costs one wake-up per tx_fifo_frames - 1 frames; an idle port commits an arriving frame at once and
// costs none. The price is that a decision is made up to that many frames early: a higher-priority frame,
// or a pause, waits behind the frames already in the MAC FIFO, as it would in hardware with a FIFO that deep
// (PFC headroom accounts for it).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "sc_models/core/link.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"

namespace fabricsim::sw {

constexpr unsigned traffic_classes = 8;  // priority p is queued in traffic class p (the 1:1 default map)

struct scheduler_config {
  std::array<bool, traffic_classes> strict{};      // served first, highest class first
  std::array<uint32_t, traffic_classes> weight{};  // DWRR (ETS) shares of the other classes; 0: only when
                                                   // no weighted class has a frame ready
  unsigned tx_fifo_frames = 4;                     // MAC FIFO depth: frames committed ahead of the wire
  std::array<bool, traffic_classes> counted{};     // classes that get their own per-queue counters
};

// The switch that owns the port: told of every frame the moment it leaves the shared buffer for the MAC.
class port_owner {
 public:
  virtual ~port_owner() = default;
  // `p` (a data frame of class `tc`) is committed to the wire of port `port`, first bit at `start`. The
  // owner releases its buffer accounting and may stamp the packet (telemetry) before it is transmitted.
  // `t` is now (the hot path passes it rather than ask the kernel again).
  virtual void departing(core::packet* p, unsigned port, unsigned tc, core::picoseconds start, core::picoseconds t) = 0;
};

class alignas(64) scheduled_port : public core::calendar_client {  // its hot fields start a cache line
 public:
  scheduled_port(const std::string& name, unsigned index, core::link& out, const scheduler_config& config,
                 port_owner& owner, core::sim_context& ctx);
  scheduled_port(const scheduled_port&) = delete;
  scheduled_port& operator=(const scheduled_port&) = delete;

  // Queues an admitted data frame in class `tc`; it may leave no earlier than `ready` (which may lie
  // before now for a cut-through frame on an idle port: its first bit left while its tail was arriving).
  // `t` is now.
  void enqueue(core::packet* p, unsigned tc, core::picoseconds ready, core::picoseconds t);
  // A MAC control frame (PFC): ahead of every queue, at the next slot of the MAC FIFO, never paused.
  void send_control(core::packet* p);
  // Applies a received pause for priority `prio` until `until` (at or before now: resume).
  void pause(unsigned prio, core::picoseconds until);

  bool paused(unsigned tc) const { return paused(tc, core::now()); }
  bool paused(unsigned tc, core::picoseconds t) const { return t < m_class[tc].pause_until; }
  core::picoseconds paused_until(unsigned tc) const { return m_class[tc].pause_until; }
  // Bytes waiting in class `tc` (in the shared buffer, not yet in the MAC FIFO).
  uint64_t queued_bytes(unsigned tc) const { return m_class[tc].queue_bytes; }
  uint64_t queued_bytes() const { return m_queued_total; }  // every class (read-only: the MAC FIFO is left out)
  // The integral of queued_bytes() over time up to `t` (at or after the last change), in byte-picoseconds:
  // the difference over a window divided by its length is the time-weighted mean queue of the window.
  double queue_byte_ps(core::picoseconds t) const {
    return m_queue_byte_ps + double(m_queued_total) * double(t.value - m_queue_changed_at.value);
  }
  // What a packet joining now would wait behind: every class queue plus what the MAC FIFO has not yet sent.
  // `t` is now; the hot paths pass it rather than ask the kernel again.
  uint64_t depth(core::picoseconds t) {
    retire(t);
    return m_queued_total + m_fifo_bytes;
  }
  uint64_t depth(unsigned tc, core::picoseconds t) {  // the same for class `tc`: its queue plus the MAC FIFO
    retire(t);
    return m_class[tc].queue_bytes + m_fifo_bytes;
  }
  bool idle(core::picoseconds t);                    // nothing queued and nothing left to send
  uint64_t depth() { return depth(core::now()); }
  uint64_t depth(unsigned tc) { return depth(tc, core::now()); }

  core::link& out() { return *m_out; }
  const std::string& name() const { return m_name; }
  unsigned index() const { return m_index; }
  uint64_t tx_bytes() const { return m_tx_bytes; }
  uint64_t paused_ps(unsigned prio) const;

  // Per-queue counters kept here so the report finds them by port and class; the switch counts drops and
  // marks, the port counts what it sends.
  void count_drop(unsigned tc);
  void count_ecn_mark(unsigned tc);
  void on_due(core::picoseconds t) override { refill(t); }

 private:
  struct queued {
    core::packet* p;
    core::picoseconds ready;
    uint64_t bytes;  // wire size, kept here: the descriptor has gone cold while it waited
  };
  struct in_fifo {
    core::picoseconds leaves;
    uint32_t bytes;
  };

  // Frees the MAC FIFO's slots of the frames whose last bit has left by `t`. Inline, as adaptive routing
  // asks every port of a group for its depth: m_fifo_next is never while the FIFO is empty.
  void retire(core::picoseconds t) {
    if (m_fifo_next <= t) retire_left(t);
  }
  void retire_left(core::picoseconds t);
  in_fifo& fifo_at(unsigned i) { return m_fifo[(m_fifo_head + i) & m_fifo_mask]; }
  void fifo_push(core::picoseconds leaves, uint32_t bytes);
  core::picoseconds refill_time() {  // when one committed frame is left (at once for a FIFO of one)
    return fifo_at(m_fifo_size >= 2 ? m_fifo_size - 2u : m_fifo_size - 1u).leaves;
  }
  void commit(core::packet* p, unsigned tc, core::picoseconds start, core::picoseconds t);
  void refill(core::picoseconds t);
  int pick(core::picoseconds horizon, core::picoseconds t);  // next class to serve, or -1
  bool eligible(unsigned tc, core::picoseconds t) const { return (m_nonempty >> tc & 1) && !paused(tc, t); }
  void wake_at(core::picoseconds t);

  // Laid out by use. Line 0 (with the calendar client's vtable pointer, key and call): what every frame
  // reaching the port reads, and with the class's line (lines 1-2: four classes a line, each class's queue
  // and pause pair within one) all that adaptive routing's scan reads of a port (depth(tc, t), paused(tc,
  // t)). Line 3: what each frame committed to the wire updates (the owner, the port's counters, the pending
  // wake-up). Line 4: the MAC FIFO's slots (a 4-frame FIFO: that line alone). Then each class's queue ring
  // with its per-frame counters in one line of its own, the depth histogram with the time-weighted queue
  // accounting after its totals, and the rest (configuration, DWRR, pause records, rare counters), which a
  // frame on an uncongested port does not read.
  uint64_t m_queued_total = 0;
  core::picoseconds m_fifo_next{UINT64_MAX};  // when the FIFO's oldest frame leaves (m_fifo's head; never
                                              // when empty): retire() reads m_fifo only when one has left
  uint16_t m_nonempty = 0;                    // bit tc set while class tc's queue holds a frame
  uint8_t m_fifo_mask;                        // slots of m_fifo in use, minus one: the least power of two at or
                                              // above tx_fifo_frames, so that a short FIFO stays in one line
  bool m_in_refill = false;
  uint8_t m_fifo_head = 0, m_fifo_size = 0;  // the MAC FIFO: frames committed whose last bit has not left,
  uint8_t m_fifo_frames;                     // in slots of m_fifo (inline: no pointer to chase)
  bool m_control_waiting = false;            // m_control holds a frame (read here, not in m_control's line)
  core::link* m_out;  // here, not with the cold fields: adaptive routing reads it (known_down) for every port
  uint64_t m_fifo_bytes = 0;
  struct class_state {
    uint64_t queue_bytes = 0;
    core::picoseconds pause_until{};
  };
  alignas(64) std::array<class_state, traffic_classes> m_class{};

  core::picoseconds m_busy_until{};  // the last committed frame's last bit leaves (the link's wire-free time)
  port_owner& m_owner;
  core::sim_context& m_ctx;
  uint64_t m_tx_packets = 0, m_tx_bytes = 0, m_max_queue_bytes = 0;
  core::picoseconds m_wake{UINT64_MAX};
  unsigned m_index;
  uint8_t m_owing = 0;  // bit tc set while m_deficit[tc] may be above 0 (a class DWRR has served)

  static constexpr unsigned fifo_slots = 64;  // the largest tx_fifo_frames
  alignas(64) std::array<in_fifo, fifo_slots> m_fifo;

  // One class's queue and the counters a frame of it updates, in one cache line.
  struct alignas(64) class_queue {
    core::ring<queued> queue;
    uint64_t max_queue_bytes = 0, tx_packets = 0, tx_bytes = 0;
  };
  std::array<class_queue, traffic_classes> m_cq;
  core::histogram m_depth_at_enqueue;

  // Time-weighted queue accounting (report only), in the line of the histogram's totals, which every
  // enqueue writes anyway.
  double m_queue_byte_ps = 0.0;            // closed at every change of m_queued_total
  core::picoseconds m_queue_changed_at{};  // when m_queued_total last changed
  void account_queue(core::picoseconds t) {
    m_queue_byte_ps += double(m_queued_total) * double(t.value - m_queue_changed_at.value);
    m_queue_changed_at = t;
  }
  std::string m_name;
  scheduler_config m_config;
  core::ring<core::packet*> m_control;

  // DWRR state.
  std::array<uint64_t, traffic_classes> m_quantum{};
  std::array<uint64_t, traffic_classes> m_deficit{};
  unsigned m_rr = 0;
  bool m_rr_fresh = true;  // the class at m_rr has not had its quantum for this visit yet

  std::array<core::picoseconds, traffic_classes> m_pause_from{};
  std::array<uint64_t, traffic_classes> m_paused_ps{};

  uint64_t m_dropped_total = 0, m_ecn_total = 0;
  uint64_t m_pause_frames_sent = 0, m_pause_frames_received = 0;
  struct tc_rare {
    uint64_t dropped = 0, ecn_marked = 0;
  };
  std::array<tc_rare, traffic_classes> m_tc{};
};

}  // namespace fabricsim::sw
