// The transmitting side of one NVLink port.
#include "sc_models/nvlink/nvlink_port.h"

namespace fabricsim::nvlink {

using core::picoseconds;

void nvlink_port::enqueue(core::packet* p, picoseconds ready) {
  m_queue.push_back({p, ready});
  serve(core::now());
}

void nvlink_port::credit(uint64_t fccl_flits, picoseconds t) {
  m_sender.update(0, fccl_flits);
  serve(t);
}

// Head first, in order: a packet waits for its ready time, then the wire, then credit for all its flits
// (credit is checked last so that a stall counts only time the packet could otherwise have left).
void nvlink_port::serve(picoseconds t) {
  if (m_serving || m_out == nullptr) return;  // re-entered from departed() through the owner
  m_serving = true;
  for (;;) {
    if (m_queue.empty()) {
      core::packet* p = m_owner.pull(m_index);
      if (p == nullptr) break;
      m_queue.push_back({p, t});
    }
    const entry head = m_queue.front();
    if (head.ready > t) {
      wake(head.ready);
      break;
    }
    if (m_out->wire_free_at() > t) {
      wake(m_out->wire_free_at());
      break;
    }
    const uint64_t flits = flits_of(*head.p);
    if (!m_sender.can_send(0, flits)) {
      m_sender.stall(0, true, t);  // credit() serves again
      break;
    }
    m_sender.stall(0, false, t);
    m_sender.sent(0, flits);
    m_queue.pop_front();
    ++m_tx_packets;
    m_tx_bytes += head.p->wire().value;
    m_out->transmit(head.p, t);
    m_owner.departed(head.p, m_index, t);
  }
  m_serving = false;
}

void nvlink_port::wake(picoseconds t) {
  if (t >= m_wake) return;  // an earlier wake-up is pending and serves again
  m_wake = t;
  m_calendar.schedule(this, t);
}

void nvlink_port::on_due(picoseconds t) {
  if (t < m_wake) return;  // stale entry
  m_wake = picoseconds(UINT64_MAX);
  serve(t);
}

}  // namespace fabricsim::nvlink
