// The PFC unit of the Spectrum-4 switch (IEEE 802.1Qbb): the buffer accounting per (ingress port, lossless
// priority) and the decisions taken from it: where an arriving lossless frame is held (the shared pool up to
// XOFF, then the port's headroom, else dropped as a headroom overflow), when to pause the upstream port
// (XOFF), when to let it go (XON), and when to refresh a pause before it expires. The switch owns the shared
// pool and sends the frames; this unit says what to send and keeps the pause timeline the report shows.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "sc_models/core/units.h"
#include "sc_models/switch/scheduled_port.h"

namespace fabricsim::sw {

class pfc_unit {
 public:
  static constexpr core::picoseconds never{UINT64_MAX};

  // `xoff_bytes`/`xon_bytes`: per (ingress port, priority) thresholds (switch.pfc_xoff_bytes, pfc_xon_bytes).
  pfc_unit(unsigned ports, uint64_t xoff_bytes, uint64_t xon_bytes);

  // A port's headroom (buffer beyond XOFF for what is in flight) and how soon a pause it sent must be
  // refreshed (half the pause time at its rate). Elaboration, when the port is connected.
  void configure_port(unsigned port, uint64_t headroom_bytes, core::picoseconds refresh_interval);
  uint64_t headroom_size(unsigned port) const { return m_headroom.at(port); }

  enum class held { shared, headroom, overflow };
  struct admission {
    held where = held::overflow;
    bool xoff = false;  // the priority just became paused: send XOFF upstream (its refresh is due at
                        // refresh_at(port, prio))
  };
  // A lossless frame of `size` wire bytes arrives on `port` at priority `prio` at `t`; `shared_room`: the
  // shared pool can take it. Nothing is counted for an overflow.
  admission admit(unsigned port, unsigned prio, uint64_t size, bool shared_room, core::picoseconds t);

  struct release {
    uint64_t from_shared = 0;  // bytes the shared pool gets back (headroom drains first)
    bool xon = false;          // the priority is no longer paused: send XON upstream
  };
  // A frame admitted from `port` at `prio` leaves the buffer at `t`.
  release depart(unsigned port, unsigned prio, uint64_t size, core::picoseconds t);

  // Every paused priority of `port` whose refresh is due at `t`: send(prio) re-sends its XOFF, and its next
  // refresh is one interval later. Returns the port's next refresh (never: nothing paused).
  template <class Send>
  core::picoseconds refresh(unsigned port, core::picoseconds t, Send&& send) {
    core::picoseconds next = never;
    for (unsigned prio = 0; prio < traffic_classes; ++prio) {
      account& a = m_in[port][prio];
      if (!a.xoff) continue;
      if (a.refresh_at <= t) {
        send(prio);
        a.refresh_at = t + m_refresh_interval[port];
      }
      next = std::min(next, a.refresh_at);
    }
    return next;
  }

  uint64_t ingress_bytes(unsigned port, unsigned prio) const { return m_in[port][prio].bytes; }
  uint64_t headroom_used(unsigned port, unsigned prio) const { return m_in[port][prio].headroom; }
  bool xoff_asserted(unsigned port, unsigned prio) const { return m_in[port][prio].xoff; }
  core::picoseconds refresh_at(unsigned port, unsigned prio) const { return m_in[port][prio].refresh_at; }

  // Pause timeline (report only): one interval per XOFF, from the moment it is asserted on ingress `port` for
  // `prio` until XON (`end` = never while still asserted). Only the first `pause_log_limit` of the run are
  // kept; pause_log_complete_until() says up to when the log is complete (never: it holds every XOFF).
  struct pause_interval {
    uint32_t port;
    uint8_t prio;
    core::picoseconds start, end;
  };
  static constexpr size_t pause_log_limit = 4096;
  const std::vector<pause_interval>& pause_log() const { return m_pause_log; }
  core::picoseconds pause_log_complete_until() const { return m_pause_log_complete_until; }

 private:
  struct account {
    uint64_t bytes = 0;     // held in the buffer, from this ingress port and priority
    uint64_t headroom = 0;  // of which in the headroom (beyond XOFF)
    bool xoff = false;      // the upstream port is told to pause
    core::picoseconds refresh_at{};
    uint32_t log_index = UINT32_MAX;  // this XOFF's entry in m_pause_log (UINT32_MAX: not recorded)
  };

  uint64_t m_xoff_bytes, m_xon_bytes;
  std::vector<std::array<account, traffic_classes>> m_in;
  std::vector<uint64_t> m_headroom;
  std::vector<core::picoseconds> m_refresh_interval;
  std::vector<pause_interval> m_pause_log;
  core::picoseconds m_pause_log_complete_until = never;
};

}  // namespace fabricsim::sw
