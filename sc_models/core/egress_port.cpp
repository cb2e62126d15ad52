// The egress side of a port: a FIFO committed to the wire at enqueue.
#include "sc_models/core/egress_port.h"

namespace fabricsim::core {

egress_port::egress_port(const std::string& name, link& out, bytes buffer, sim_context& ctx)
    : m_name(name), m_out(out), m_buffer(buffer) {
  ctx.stats.counter(m_name, "enqueued", "packets", "packets admitted to the egress queue", &m_enqueued);
  ctx.stats.counter(m_name, "dropped", "packets", "packets tail-dropped for lack of buffer", &m_dropped);
  ctx.stats.counter(m_name, "dropped_bytes", "bytes", "wire bytes tail-dropped", &m_dropped_bytes);
  ctx.stats.counter(m_name, "max_occupancy", "bytes", "highest queue occupancy seen at an enqueue", &m_max_occupancy);
  ctx.stats.hist(m_name, "queue_delay", "ps", "time from ready to first bit on the wire", &m_queue_delay_ps);
}

void egress_port::retire(picoseconds t) {
  while (!m_held.empty() && m_held.front().leaves <= t) {
    m_occupancy -= m_held.front().size;
    m_held.pop_front();
  }
}

bytes egress_port::occupancy() {
  retire(now());
  return m_occupancy;
}

bool egress_port::enqueue(packet* p, picoseconds ready) {
  retire(now());
  const bytes size = p->wire();
  if (m_occupancy + size > m_buffer) {
    ++m_dropped;
    m_dropped_bytes += size.value;
    return false;
  }
  const picoseconds start = max(ready, m_out.wire_free_at());
  m_queue_delay_ps.add((start - ready).value);
  const picoseconds leaves = m_out.transmit(p, start);
  m_held.push_back({leaves, size});
  m_occupancy += size;
  ++m_enqueued;
  if (m_occupancy.value > m_max_occupancy) m_max_occupancy = m_occupancy.value;
  return true;
}

}  // namespace fabricsim::core
