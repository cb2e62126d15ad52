// The egress side of a device's port with one FIFO queue: a packet is committed to the wire when it is
// enqueued, starting when both the packet is ready and the wire is free. With a single FIFO class the
// departure order is fixed at enqueue, so committing early is exact and costs no kernel event of its own;
// the queue exists as the packets committed but not yet gone, and its occupancy is tracked for admission.
#pragma once

#include <string>

#include "sc_models/core/link.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"

namespace fabricsim::core {

class egress_port {
 public:
  // `buffer` caps the bytes (wire size) held in the queue, including the frame being serialized.
  egress_port(const std::string& name, link& out, bytes buffer, sim_context& ctx);
  egress_port(const egress_port&) = delete;
  egress_port& operator=(const egress_port&) = delete;

  // Queues `p` to leave no earlier than `ready`. Returns false, and counts a drop, when the buffer is full;
  // the caller still owns a dropped packet.
  bool enqueue(packet* p, picoseconds ready);

  // Bytes held at the current simulated time (committed frames whose last bit has not left).
  bytes occupancy();
  const std::string& name() const { return m_name; }
  link& out() { return m_out; }

 private:
  struct held {
    picoseconds leaves;  // last bit on the wire
    bytes size;
  };
  void retire(picoseconds t);

  std::string m_name;
  link& m_out;
  bytes m_buffer;
  ring<held> m_held;
  bytes m_occupancy{};
  uint64_t m_enqueued = 0;
  uint64_t m_dropped = 0;
  uint64_t m_dropped_bytes = 0;
  uint64_t m_max_occupancy = 0;
  histogram m_queue_delay_ps;
};

}  // namespace fabricsim::core
