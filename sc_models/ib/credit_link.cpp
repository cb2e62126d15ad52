// InfiniBand credit-based link-level flow control.
#include "sc_models/ib/credit_link.h"

#include <algorithm>

namespace fabricsim::sw::ib {

using core::picoseconds;

void credit_params::visit(core::param_visitor& v) {
  v.field({"vl_buffer_bytes", "bytes", "receive buffer per data virtual lane: the credit limit advertised, in "
                                       "64-byte blocks (at most 2048 blocks, half the 12-bit credit space)",
           128, 131072},
          vl_buffer_bytes);
  v.field({"credit_update_period_ns", "ns", "least time between two flow control (credit) packets from one port",
           0, 1e6},
          update_period_ns);
  v.field({"credit_update_latency_ns", "ns", "building and parsing a flow control packet, beyond the cable", 0, 1e6},
          update_latency_ns);
  v.field({"fc_refresh_ns", "ns",
           "period at which a port's flow control packets carry its FCTBS even without news (IBTA: at least "
           "every 65,536 symbol times; estimate for XDR); the receiver then counts blocks lost on the wire as "
           "received, so a fault leaks no credit",
           1, 1e9},
          fc_refresh_ns);
}

void credit_params::validate(const std::string& inst) const {
  core::require(vl_buffer_bytes >= block_bytes && blocks_of(vl_buffer_bytes) <= max_vl_blocks, inst,
                "vl_buffer_bytes " + std::to_string(vl_buffer_bytes) + " is not between 64 and " +
                    std::to_string(max_vl_blocks * block_bytes) + " bytes");
}

credit_receiver::credit_receiver(const credit_params& params, unsigned vls, core::arrival_calendar& calendar)
    : m_limit(params.vl_buffer_bytes / std::max<uint64_t>(1, params.credit_bytes)),
      m_vls(vls),
      m_period(picoseconds::from_ns(params.update_period_ns)),
      m_latency(picoseconds::from_ns(params.update_latency_ns)),
      m_calendar(calendar) {}

void credit_receiver::attach(credit_peer* peer, unsigned peer_port, core::link& out) {
  m_out = &out;
  m_proxy = out.proxy();
  m_peer = m_proxy != nullptr ? nullptr : peer;
  m_peer_port = peer_port;
  m_latency = m_latency + out.latency();
  // Updates along one link are delivered at one key in every process: the far process delivers them at the
  // same key (mpi::link_exchange), so simultaneous events meet the receiving device in the same order.
  m_delivery.set_calendar_key(out.credit_calendar_key());
  if (m_peer == nullptr) return;
  for (unsigned vl = 0; vl < m_vls; ++vl) m_peer->credit_update(m_peer_port, vl, fccl(vl));
}

void credit_receiver::received(unsigned vl, uint64_t blocks) {
  m_abr[vl] += blocks;
  m_used[vl] += blocks;
  if (m_used[vl] > m_limit) ++m_overruns;
  m_max_used[vl] = std::max(m_max_used[vl], m_used[vl]);
}

void credit_receiver::released(unsigned vl, uint64_t blocks, picoseconds t) {
  m_used[vl] -= std::min(blocks, m_used[vl]);
  if (!attached()) return;
  m_dirty |= 1u << vl;
  if (t >= m_next_send) {
    send(t);  // at once: no calendar entry just to send
  } else {
    wake(m_next_send);
  }
}

void credit_receiver::resync(unsigned vl, uint64_t lost, picoseconds at) {
  m_resync.push_back({at, uint32_t(vl), lost});
  wake(at);
}

void credit_receiver::send(picoseconds t) {
  for (unsigned vl = 0; vl < m_vls; ++vl)
    if (m_dirty >> vl & 1) {
      if (m_proxy != nullptr) {
        m_proxy->forward_credit(*m_out, vl, fccl(vl), t + m_latency);  // the far end is in another process
      } else {
        if (m_flight.empty()) m_calendar.schedule(&m_delivery, t + m_latency);
        m_flight.push_back({t + m_latency, vl, fccl(vl)});
      }
      ++m_updates;
    }
  m_dirty = 0;
  m_next_send = t + m_period;
}

void credit_receiver::deliver(picoseconds t) {
  while (!m_flight.empty() && m_flight.front().arrives <= t) {
    const in_flight f = m_flight.front();
    m_flight.pop_front();
    m_peer->credit_update(m_peer_port, f.vl, f.fccl);
  }
  if (!m_flight.empty()) m_calendar.schedule(&m_delivery, m_flight.front().arrives);
}

void credit_receiver::wake(picoseconds t) {
  if (t >= m_wake) return;  // an earlier wake-up is pending and will reschedule
  m_wake = t;
  m_calendar.schedule(this, t);
}

void credit_receiver::on_due(picoseconds t) {
  if (t < m_wake) return;  // stale entry
  m_wake = picoseconds(UINT64_MAX);
  // The far sender's FCTBS has arrived: ABR = FCTBS, the lost blocks count as received and freed.
  while (!m_resync.empty() && m_resync.front().at <= t) {
    const resync_due r = m_resync.front();
    m_resync.pop_front();
    m_abr[r.vl] += r.blocks;
    m_resynced += r.blocks;
    if (attached()) m_dirty |= 1u << r.vl;
  }
  // Send what was freed, one flow control packet per VL with news, when the period allows.
  if (m_dirty != 0 && t >= m_next_send) send(t);
  picoseconds next(UINT64_MAX);
  if (m_dirty != 0) next = std::min(next, m_next_send);
  if (!m_resync.empty()) next = std::min(next, m_resync.front().at);
  if (next.value != UINT64_MAX) wake(next);
}

void wire_loss_recovery::on_wire_loss(const core::packet& p, picoseconds /*start*/, picoseconds end) {
  if (p.kind != core::frame_kind::infiniband) return;
  const uint64_t blocks = blocks_of(p.wire().value);
  const unsigned vl = p.lrh.vl < m_vls ? p.lrh.vl : 0u;
  m_lost_blocks += blocks;
  // The sender's next refresh after the frame has left, on a carrier that is up (a refresh slot inside an
  // outage is lost with the link; after it the link retrains).
  picoseconds t = end;
  for (int k = 0; k < 1000000; ++k) {
    t = m_carrier.up_at(t);
    if (t.value == UINT64_MAX) return;  // down for good: nothing will cross this cable again
    const uint64_t period = std::max<uint64_t>(1, m_refresh.value);
    t = picoseconds{(t.value + period - 1) / period * period};
    if (!m_carrier.down(t)) break;
  }
  // In order on one link: a later loss never resynchronises before an earlier one.
  t = std::max(t + m_latency, m_last);
  m_last = t;
  m_rx.resync(vl, blocks, t);
}

}  // namespace fabricsim::sw::ib
