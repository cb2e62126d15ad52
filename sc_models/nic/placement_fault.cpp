// A planted fault of the SuperNIC's DMA placement: one payload written at the wrong address.
#include "sc_models/nic/placement_fault.h"

#include <algorithm>

namespace fabricsim::nic {

void placement_fault::arm(uint64_t after_packets, uint64_t offset_bytes) {
  m_armed = true;
  m_after = after_packets;
  m_offset = offset_bytes;
}

uint64_t placement_fault::fire(uint64_t va, uint64_t length, uint64_t mem_size) {
  if (m_fired || m_writes++ != m_after) return 0;
  m_fired = true;
  m_va = va;
  m_length = length;
  const uint64_t room = mem_size > va + length ? mem_size - va - length : 0;  // bytes of memory past the write
  m_applied = std::min(m_offset, room);
  m_fired_at = core::now();
  return m_applied;
}

}  // namespace fabricsim::nic
