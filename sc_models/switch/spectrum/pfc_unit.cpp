// The Spectrum-4 switch's PFC unit: lossless accounting per (ingress port, priority), XOFF and XON.
#include "sc_models/switch/spectrum/pfc_unit.h"

#include <algorithm>

namespace fabricsim::sw {

pfc_unit::pfc_unit(unsigned ports, uint64_t xoff_bytes, uint64_t xon_bytes)
    : m_xoff_bytes(xoff_bytes), m_xon_bytes(xon_bytes), m_in(ports), m_headroom(ports, 0), m_refresh_interval(ports) {}

void pfc_unit::configure_port(unsigned port, uint64_t headroom_bytes, core::picoseconds refresh_interval) {
  m_headroom.at(port) = headroom_bytes;
  m_refresh_interval.at(port) = refresh_interval;
}

pfc_unit::admission pfc_unit::admit(unsigned port, unsigned prio, uint64_t size, bool shared_room,
                                    core::picoseconds t) {
  account& a = m_in[port][prio];
  admission r;
  if (a.bytes + size <= m_xoff_bytes && shared_room) {
    r.where = held::shared;
  } else if (a.headroom + size <= m_headroom[port]) {
    r.where = held::headroom;
    a.headroom += size;
  } else {
    return r;  // overflow: the headroom was sized too small for what was in flight
  }
  a.bytes += size;
  // Pause once the priority holds XOFF bytes, or as soon as anything had to go to the headroom (the shared
  // pool is full).
  if (!a.xoff && (a.bytes >= m_xoff_bytes || a.headroom > 0)) {
    a.xoff = true;
    r.xoff = true;
    a.log_index = UINT32_MAX;
    if (m_pause_log.size() < pause_log_limit) {
      a.log_index = uint32_t(m_pause_log.size());
      m_pause_log.push_back({port, uint8_t(prio), t, never});
    } else if (m_pause_log_complete_until == never) {
      m_pause_log_complete_until = t;
    }
    a.refresh_at = t + m_refresh_interval[port];
  }
  return r;
}

pfc_unit::release pfc_unit::depart(unsigned port, unsigned prio, uint64_t size, core::picoseconds t) {
  account& a = m_in[port][prio];
  const uint64_t from_headroom = std::min(a.headroom, size);  // headroom drains first
  a.headroom -= from_headroom;
  a.bytes -= size;
  release r;
  r.from_shared = size - from_headroom;
  if (a.xoff && a.headroom == 0 && a.bytes <= m_xon_bytes) {
    a.xoff = false;
    r.xon = true;
    if (a.log_index != UINT32_MAX) m_pause_log[a.log_index].end = t;
  }
  return r;
}

}  // namespace fabricsim::sw
