// The egress side of a switch port: class queues, scheduler, pause, MAC FIFO.
#include "sc_models/switch/scheduled_port.h"

#include <algorithm>

namespace fabricsim::sw {

using core::never;
using core::packet;
using core::picoseconds;

namespace {
constexpr uint64_t dwrr_quantum_unit = 9216;  // bytes per unit of the smallest weight: one jumbo frame, so
                                              // every visit to a backlogged class sends at least one frame
// The MAC FIFO's ring mask: the least power of two at or above `frames` (at most the 64 slots), minus one.
unsigned fifo_mask(unsigned frames) {
  unsigned slots = 1;
  while (slots < frames && slots < 64) slots *= 2;
  return slots - 1;
}
}  // namespace

scheduled_port::scheduled_port(const std::string& name, unsigned index, core::link& out, const scheduler_config& config,
                               port_owner& owner, core::sim_context& ctx)
    : m_fifo_mask(uint8_t(fifo_mask(config.tx_fifo_frames))),
      m_fifo_frames(uint8_t(config.tx_fifo_frames)),
      m_out(&out),
      m_owner(owner),
      m_ctx(ctx),
      m_index(index),
      m_name(name),
      m_config(config) {
  core::require(config.tx_fifo_frames >= 1 && config.tx_fifo_frames <= fifo_slots, name,
                "tx_fifo_frames must be in [1, 64]");
  m_busy_until = out.wire_free_at();
  uint32_t min_weight = UINT32_MAX;
  for (unsigned tc = 0; tc < traffic_classes; ++tc)
    if (!config.strict[tc] && config.weight[tc] > 0) min_weight = std::min(min_weight, config.weight[tc]);
  for (unsigned tc = 0; tc < traffic_classes; ++tc)
    if (!config.strict[tc] && config.weight[tc] > 0)
      m_quantum[tc] = (uint64_t(config.weight[tc]) * dwrr_quantum_unit + min_weight - 1) / min_weight;

  auto& s = ctx.stats;
  s.counter(m_name, "tx_packets", "packets", "frames sent, control frames included", &m_tx_packets);
  s.counter(m_name, "tx_bytes", "bytes", "wire bytes sent", &m_tx_bytes);
  s.counter(m_name, "dropped", "packets", "frames dropped at admission to any of the port's queues",
            &m_dropped_total);
  s.counter(m_name, "ecn_marked", "packets", "frames marked CE in any of the port's queues", &m_ecn_total);
  s.counter(m_name, "max_queue_bytes", "bytes", "deepest the port's queues plus MAC FIFO got, at an enqueue",
            &m_max_queue_bytes);
  s.counter(m_name, "pause_frames_sent", "frames", "PFC frames sent on this port (XOFF and XON)",
            &m_pause_frames_sent);
  s.counter(m_name, "pause_frames_received", "frames", "PFC frames received on this port",
            &m_pause_frames_received);
  s.hist(m_name, "queue_depth", "bytes", "port depth (queues plus MAC FIFO) seen by each arriving frame",
         &m_depth_at_enqueue);
  for (unsigned tc = 0; tc < traffic_classes; ++tc) {
    if (!config.counted[tc]) continue;
    const std::string q = m_name + ".tc" + std::to_string(tc);
    const class_queue& c = m_cq[tc];
    s.counter(q, "queue_tx_packets", "packets", "frames of this class sent", &c.tx_packets);
    s.counter(q, "queue_tx_bytes", "bytes", "wire bytes of this class sent", &c.tx_bytes);
    s.counter(q, "queue_dropped", "packets", "frames of this class dropped at admission", &m_tc[tc].dropped);
    s.counter(q, "queue_ecn_marked", "packets", "frames of this class marked CE", &m_tc[tc].ecn_marked);
    s.counter(q, "queue_max_bytes", "bytes", "deepest this class queue got, at an enqueue", &c.max_queue_bytes);
    s.gauge(q, "paused_us", "us", "time this priority was paused by the peer",
            [this, tc] { return double(paused_ps(tc)) / 1e6; });
  }
}

void scheduled_port::count_drop(unsigned tc) {
  ++m_tc[tc].dropped;
  ++m_dropped_total;
}

void scheduled_port::count_ecn_mark(unsigned tc) {
  ++m_tc[tc].ecn_marked;
  ++m_ecn_total;
}

void scheduled_port::retire_left(picoseconds t) {
  while (m_fifo_size != 0 && m_fifo_next <= t) {
    m_fifo_bytes -= m_fifo[m_fifo_head].bytes;
    m_fifo_head = uint8_t((m_fifo_head + 1) & m_fifo_mask);
    --m_fifo_size;
    m_fifo_next = m_fifo_size != 0 ? m_fifo[m_fifo_head].leaves : never;
  }
}

void scheduled_port::fifo_push(picoseconds leaves, uint32_t bytes) {
  m_fifo[(m_fifo_head + m_fifo_size) & m_fifo_mask] = {leaves, bytes};
  if (m_fifo_size == 0) m_fifo_next = leaves;
  ++m_fifo_size;
  m_fifo_bytes += bytes;
  m_busy_until = leaves;
}

bool scheduled_port::idle(picoseconds t) {
  return m_queued_total == 0 && m_busy_until <= t && !m_control_waiting;  // the same as depth(t) == 0
}

uint64_t scheduled_port::paused_ps(unsigned prio) const {
  const picoseconds end = std::min(m_class[prio].pause_until, core::now());
  return m_paused_ps[prio] + (end > m_pause_from[prio] ? (end - m_pause_from[prio]).value : 0);
}

void scheduled_port::wake_at(picoseconds t) {
  if (!(t < m_wake)) return;  // an earlier wake-up is pending and will look again
  m_wake = t;
  m_ctx.calendar.schedule(this, t);
}

void scheduled_port::commit(packet* p, unsigned tc, picoseconds start, picoseconds t) {
  m_owner.departing(p, m_index, tc, start, t);  // may append telemetry: read the size afterwards
  const uint32_t size = uint32_t(p->wire().value);
  fifo_push(m_out->transmit(p, start), size);
  ++m_tx_packets;
  m_tx_bytes += size;
  ++m_cq[tc].tx_packets;
  m_cq[tc].tx_bytes += size;
}

void scheduled_port::enqueue(packet* p, unsigned tc, picoseconds ready, picoseconds now) {
  retire(now);
  const uint64_t size = p->wire().value;
  const uint64_t before = m_queued_total + m_fifo_bytes;
  m_depth_at_enqueue.add(before);
  m_max_queue_bytes = std::max(m_max_queue_bytes, before + size);
  class_queue& cq = m_cq[tc];
  cq.max_queue_bytes = std::max(cq.max_queue_bytes, m_class[tc].queue_bytes + m_fifo_bytes + size);
  // An uncongested port: nothing waits and the MAC FIFO has room, so the frame goes straight to the MAC
  // (the order is the arrival order either way) and no wake-up is needed.
  if (m_queued_total == 0 && m_fifo_size < m_fifo_frames && !paused(tc, now) && !m_in_refill && !m_control_waiting) {
    commit(p, tc, max(ready, m_busy_until), now);
    return;
  }
  cq.queue.push_back({p, ready, size});
  m_nonempty |= 1u << tc;
  m_class[tc].queue_bytes += size;
  account_queue(now);
  m_queued_total += size;
  if (m_in_refill) return;  // the running refill picks it up
  if (paused(tc, now)) {
    wake_at(m_class[tc].pause_until);
    return;
  }
  if (m_fifo_size < m_fifo_frames)
    refill(now);
  else
    wake_at(refill_time());
}

void scheduled_port::send_control(packet* p) {
  m_control.push_back(p);
  m_control_waiting = true;
  if (m_in_refill) return;
  retire(core::now());
  if (m_fifo_size < m_fifo_frames)
    refill(core::now());
  else
    wake_at(refill_time());
}

void scheduled_port::pause(unsigned prio, picoseconds until) {
  const picoseconds t = core::now();
  m_paused_ps[prio] = paused_ps(prio);
  m_pause_from[prio] = t;
  m_class[prio].pause_until = max(until, t);
  ++m_pause_frames_received;
  if (m_cq[prio].queue.empty() || m_in_refill) return;
  if (until > t) {
    wake_at(until);  // resumes then unless an XON comes first
    return;
  }
  retire(t);
  if (m_fifo_size < m_fifo_frames)
    refill(t);
  else
    wake_at(refill_time());
}

int scheduled_port::pick(picoseconds horizon, picoseconds t) {
  auto ready = [&](unsigned tc) { return eligible(tc, t) && m_cq[tc].queue.front().ready <= horizon; };
  if ((m_nonempty & (m_nonempty - 1)) == 0) {  // one class waiting (the common case): no arbitration
    const unsigned tc = unsigned(__builtin_ctz(m_nonempty));
    if (!eligible(tc, t)) return -1;
    if (m_owing >> tc & 1) {  // alone, it owes nobody (only a weighted class, served by DWRR, has a deficit)
      m_deficit[tc] = 0;
      m_owing = uint8_t(m_owing & ~(1u << tc));
    }
    return int(tc);
  }
  for (unsigned tc = traffic_classes; tc-- > 0;)
    if (m_config.strict[tc] && ready(tc)) return int(tc);
  bool weighted = false;
  for (unsigned tc = 0; tc < traffic_classes; ++tc)
    weighted = weighted || (!m_config.strict[tc] && m_quantum[tc] > 0 && ready(tc));
  if (weighted) {
    // Deficit round robin: a class earns its quantum once per visit and sends while its deficit covers
    // the head frame. Terminates: some visited class is ready, and its deficit grows every round.
    for (;;) {
      const unsigned c = m_rr;
      if (!m_config.strict[c] && m_quantum[c] > 0 && ready(c)) {
        if (m_rr_fresh) {
          m_deficit[c] += m_quantum[c];
          m_owing = uint8_t(m_owing | 1u << c);
          m_rr_fresh = false;
        }
        const uint64_t size = m_cq[c].queue.front().bytes;
        if (size <= m_deficit[c]) {
          m_deficit[c] -= size;
          return int(c);
        }
      }
      m_rr = (m_rr + 1) % traffic_classes;
      m_rr_fresh = true;
    }
  }
  for (unsigned tc = traffic_classes; tc-- > 0;)
    if (!m_config.strict[tc] && m_quantum[tc] == 0 && ready(tc)) return int(tc);
  // Nothing is ready by the time the wire frees: serve whichever eligible head becomes ready first.
  int best = -1;
  for (unsigned tc = 0; tc < traffic_classes; ++tc)
    if (eligible(tc, t) && (best < 0 || m_cq[tc].queue.front().ready < m_cq[unsigned(best)].queue.front().ready))
      best = int(tc);
  return best;
}

void scheduled_port::refill(picoseconds t) {
  if (m_in_refill) return;
  if (!(t < m_wake)) m_wake = never;  // this is the pending wake-up (or a later one superseded by it)
  m_in_refill = true;
  retire(t);
  // The frames about to be committed waited microseconds and are cold: start fetching them all now rather
  // than miss on each in turn (at most as many per class as the MAC FIFO has room for).
  const size_t room = size_t(m_fifo_frames) - m_fifo_size;
  for (uint32_t mask = m_nonempty; mask != 0; mask &= mask - 1) {
    const core::ring<queued>& q = m_cq[unsigned(__builtin_ctz(mask))].queue;
    const size_t n = std::min(q.size(), room);
    for (size_t i = 0; i < n; ++i) __builtin_prefetch(q[i].p);
  }
  while (m_fifo_size < m_fifo_frames) {
    const picoseconds horizon = max(t, m_busy_until);
    if (m_control_waiting) {
      packet* p = m_control.front();
      m_control.pop_front();
      m_control_waiting = !m_control.empty();
      const uint32_t size = uint32_t(p->wire().value);
      fifo_push(m_out->transmit(p, horizon), size);
      ++m_tx_packets;
      m_tx_bytes += size;
      ++m_pause_frames_sent;
      continue;
    }
    if (m_nonempty == 0) break;
    const int tc = pick(horizon, t);
    if (tc < 0) break;
    core::ring<queued>& queue = m_cq[unsigned(tc)].queue;
    const queued q = queue.front();
    queue.pop_front();
    const uint64_t size = q.bytes;
    m_class[unsigned(tc)].queue_bytes -= size;
    account_queue(std::max(t, m_queue_changed_at));
    m_queued_total -= size;
    if (queue.empty()) {
      if (m_owing >> tc & 1) {
        m_deficit[unsigned(tc)] = 0;
        m_owing = uint8_t(m_owing & ~(1u << unsigned(tc)));
      }
      m_nonempty &= ~(1u << unsigned(tc));
    }
    commit(q.p, unsigned(tc), max(q.ready, horizon), t);
  }
  bool more = m_control_waiting;
  picoseconds resume = never;
  // The classes still holding frames (m_nonempty: bit tc set while m_queue[tc] is not empty), without
  // reading the eight queues' rings, which span four cache lines.
  for (uint32_t mask = m_nonempty; mask != 0; mask &= mask - 1) {
    const unsigned tc = unsigned(__builtin_ctz(mask));
    if (paused(tc, t))
      resume = std::min(resume, m_class[tc].pause_until);
    else
      more = true;
  }
  if (more) {
    wake_at(refill_time());  // the FIFO is full: the loop stopped for want of room
  }
  if (resume != never) wake_at(resume);
  m_in_refill = false;
}

}  // namespace fabricsim::sw
