// One direction of a PCIe link: serialization in 128b/130b blocks or 256-byte flits, credits per type.
#include "sc_models/pcie/pcie_link.h"

#include <algorithm>

namespace fabricsim::pcie {

void pcie_link_params::visit(core::param_visitor& v) {
  v.field({"generation", "", "5: 32 GT/s 128b/130b with framed TLPs; 6: 64 GT/s PAM4 flit mode", 5, 6}, generation);
  v.field({"lanes", "lanes", "link width: 1, 2, 4, 8 or 16", 1, 16}, lanes);
  v.field({"propagation_ns", "ns", "channel propagation delay, each way", 0, 1e6}, propagation_ns);
  v.field({"ecrc", "", "a 4-byte TLP digest (ECRC) on every TLP"}, ecrc);
  v.field({"stp_token_bytes", "bytes", "Gen5: STP framing token per TLP (carries the sequence number)", 0, 64},
          stp_token_bytes);
  v.field({"lcrc_bytes", "bytes", "Gen5: link CRC per TLP", 0, 64}, lcrc_bytes);
  v.field({"dllp_bytes", "bytes", "Gen5: one DLLP on the wire, SDP token included", 1, 64}, dllp_bytes);
  v.field({"skp_interval_blocks", "blocks", "Gen5: data blocks per lane between SKP ordered sets (0: none)", 0, 1e6},
          skp_interval_blocks);
  v.field({"ack_every_tlps", "TLPs", "Gen5: TLPs received per Ack DLLP sent back", 1, 1e6}, ack_every_tlps);
  v.field({"flit_bytes", "bytes", "Gen6: flit size", 64, 4096}, flit_bytes);
  v.field({"flit_tlp_bytes", "bytes", "Gen6: TLP area of a flit (the rest: DLP, CRC, FEC)", 1, 4096}, flit_tlp_bytes);
  v.field({"skp_interval_flits", "flits", "Gen6: flits between one-flit-time SKP ordered sets (0: none)", 0, 1e6},
          skp_interval_flits);
  v.field({"flit_decode_latency_ns", "ns", "Gen6: FEC decode and flit CRC check at the receiver", 0, 1e4},
          flit_decode_latency_ns);
  v.field({"posted_header_credits", "credits", "PH advertised by the receiver (0: infinite)", 0, 1e6},
          posted_header_credits);
  v.field({"posted_data_credits", "16 B", "PD advertised by the receiver (0: infinite)", 0, 1e7}, posted_data_credits);
  v.field({"non_posted_header_credits", "credits", "NPH advertised by the receiver (0: infinite)", 0, 1e6},
          non_posted_header_credits);
  v.field({"non_posted_data_credits", "16 B", "NPD advertised by the receiver (0: infinite)", 0, 1e7},
          non_posted_data_credits);
  v.field({"completion_header_credits", "credits", "CplH advertised by the receiver (0: infinite)", 0, 1e6},
          completion_header_credits);
  v.field({"completion_data_credits", "16 B", "CplD advertised by the receiver (0: infinite)", 0, 1e7},
          completion_data_credits);
  v.field({"update_fc_latency_ns", "ns", "receiver: buffer freed to UpdateFC DLLP scheduled", 0, 1e6},
          update_fc_latency_ns);
}

pcie_link::pcie_link(sc_core::sc_module_name name, const pcie_link_params& params, tlp_receiver& receiver)
    : sc_core::sc_module(name), m_params(params), m_receiver(receiver), m_in_flight(64), m_returns(64) {
  const std::string me = this->name();
  core::check_ranges(m_params, me);
  const uint64_t l = m_params.lanes;
  core::require(l == 1 || l == 2 || l == 4 || l == 8 || l == 16, me,
                "lanes " + std::to_string(l) + " is not one of 1, 2, 4, 8, 16");
  core::require(m_params.flit_tlp_bytes < m_params.flit_bytes, me,
                "flit_tlp_bytes " + std::to_string(m_params.flit_tlp_bytes) + " must be below flit_bytes " +
                    std::to_string(m_params.flit_bytes));
  // Gen5: 8 bits per byte spread over the lanes at 32 GT/s, 130 bits sent per 128: ps = n * 8 * 130 * 1000 /
  // (128 * 32 * lanes).
  m_byte_num = 8ull * 130 * 1000;
  m_byte_den = 128ull * 32 * l;
  // Gen6: one flit is flit_bytes * 8 bits over lanes at 64 GT/s.
  m_flit_ps = (m_params.flit_bytes * 8 * 1000 + 64 * l - 1) / (64 * l);
  // Gen5 SKP: one 130-bit block time per lane after skp_interval_blocks blocks of 16 bytes on every lane.
  m_skp_every_bytes = m_params.skp_interval_blocks * 16 * l;
  m_skp_ps = core::picoseconds((130ull * 1000 + 31) / 32);
  m_prop_ps = core::picoseconds::from_ns(m_params.propagation_ns).value;
  m_decode_ps = m_params.generation == 6 ? core::picoseconds::from_ns(m_params.flit_decode_latency_ns).value : 0;
  m_update_fc_ps = core::picoseconds::from_ns(m_params.update_fc_latency_ns).value;
  const uint64_t hdr[fc_classes] = {m_params.posted_header_credits, m_params.non_posted_header_credits,
                                    m_params.completion_header_credits};
  const uint64_t dat[fc_classes] = {m_params.posted_data_credits, m_params.non_posted_data_credits,
                                    m_params.completion_data_credits};
  for (unsigned c = 0; c < fc_classes; ++c) {
    // PCIe advertises header and data separately, each possibly infinite; the model takes a class as
    // infinite when its header credits are (a finite header pool with infinite data is still finite).
    m_credits[c].infinite = hdr[c] == 0;
    m_credits[c].header = hdr[c];
    m_credits[c].data = dat[c] == 0 ? UINT64_MAX / 2 : dat[c];
  }
  SC_METHOD(on_wake);
  sensitive << m_wake;
  dont_initialize();
}

void pcie_link::register_stats(core::stats_registry& stats) const {
  const std::string me = name();
  stats.counter(me, "tlps", "TLPs", "TLPs committed to the wire", &m_tlps);
  stats.counter(me, "payload_bytes", "bytes", "TLP payload bytes sent", &m_payload_bytes);
  stats.counter(me, "tlp_bytes", "bytes", "TLP bytes on the wire (headers, framing, ECRC included)", &m_tlp_bytes);
  stats.counter(me, "dllps", "DLLPs", "Ack and UpdateFC DLLPs carried for the opposite direction", &m_dllps);
  stats.counter(me, "credit_stalls", "events", "times the transmitter waited for flow-control credits",
                &m_credit_stalls);
}

uint64_t pcie_link::wire_bytes(const tlp& t) const {
  uint64_t b = uint64_t(t.header_bytes) + t.payload_bytes + (m_params.ecrc ? 4 : 0);
  if (m_params.generation == 5) b += m_params.stp_token_bytes + m_params.lcrc_bytes;
  return b;
}

uint64_t pcie_link::gen5_ps(uint64_t bytes) const { return (bytes * m_byte_num + m_byte_den - 1) / m_byte_den; }

core::picoseconds pcie_link::ready_at() const {
  if (m_params.generation == 5) return m_wire_free;
  if (!m_any_flit) return core::picoseconds(0);
  const uint64_t f = m_fill_bytes < m_params.flit_tlp_bytes ? m_fill_flit : m_fill_flit + 1;
  return core::picoseconds(f * m_flit_ps);
}

void pcie_link::send(tlp& t) {
  fifo& q = m_queue[unsigned(class_of(t.type))];
  const core::picoseconds now = core::now();
  if (q.stamp != now) {  // the first TLP of this time step: everything queued so far is older
    q.stamp = now;
    q.older = q.tail;
  }
  // Among this time step's TLPs, after those from lower-numbered (or the same) ports.
  tlp* prev = q.older;
  tlp* cur = prev ? prev->next : q.head;
  while (cur && cur->src_port <= t.src_port) {
    prev = cur;
    cur = cur->next;
  }
  t.next = cur;
  if (prev)
    prev->next = &t;
  else
    q.head = &t;
  if (!cur) q.tail = &t;
  m_wake.notify(sc_core::SC_ZERO_TIME);  // commit in this time step once every same-time arrival is queued
}

bool pcie_link::has_credits(const tlp& t) const {
  const credit_pool& c = m_credits[unsigned(class_of(t.type))];
  return c.infinite || (c.header >= 1 && c.data >= t.data_credits());
}

core::picoseconds pcie_link::commit(tlp& t) {
  const core::picoseconds now = core::now();
  const uint64_t bytes = wire_bytes(t);
  credit_pool& c = m_credits[unsigned(class_of(t.type))];
  if (!c.infinite) {
    c.header -= 1;
    c.data -= t.data_credits();
  }
  core::picoseconds start, header_end, end;
  if (m_params.generation == 5) {
    const uint64_t ser = gen5_ps(bytes);
    // Cut-through: the last byte must not leave before it has arrived.
    const core::picoseconds catch_up =
        t.last_byte_in.value > ser ? core::picoseconds(t.last_byte_in.value - ser) : core::picoseconds(0);
    start = core::max(core::max(now, m_wire_free), core::max(t.eligible_at, catch_up));
    end = start + core::picoseconds(ser);
    header_end = start + core::picoseconds(gen5_ps(m_params.stp_token_bytes + t.header_bytes));
    m_wire_free = end;
    if (m_skp_every_bytes) {
      m_bytes_since_skp += bytes;
      while (m_bytes_since_skp >= m_skp_every_bytes) {  // the SKP block follows this TLP on every lane
        m_bytes_since_skp -= m_skp_every_bytes;
        m_wire_free += m_skp_ps;
      }
    }
  } else {
    const uint64_t area = m_params.flit_tlp_bytes;
    const uint64_t T = m_flit_ps;
    auto usable = [&](uint64_t f) {  // skips SKP slots
      const uint64_t k = m_params.skp_interval_flits;
      if (k && (f + 1) % (k + 1) == 0) ++f;
      return f;
    };
    core::picoseconds earliest = core::max(now, t.eligible_at);
    const uint64_t ser_estimate = bytes * T / area;
    if (t.last_byte_in.value > ser_estimate)
      earliest = core::max(earliest, core::picoseconds(t.last_byte_in.value - ser_estimate));
    const uint64_t f0 = usable((earliest.value + T - 1) / T);
    uint64_t f, off;
    if (m_any_flit && m_fill_flit >= f0 && m_fill_bytes < area) {
      f = m_fill_flit;  // pack behind the previous TLP in a flit that has not started
      off = m_fill_bytes;
    } else {
      f = m_any_flit ? std::max(f0, usable(m_fill_flit + 1)) : f0;
      off = 0;
    }
    start = core::picoseconds(f * T);
    header_end = core::picoseconds((f + 1) * T);
    uint64_t remaining = bytes, space = area - off;
    while (remaining > space) {
      remaining -= space;
      f = usable(f + 1);
      space = area;
    }
    m_fill_flit = f;
    m_fill_bytes = area - space + remaining;
    m_any_flit = true;
    end = core::picoseconds((f + 1) * T);
    m_wire_free = end;
  }
  if (m_tlps == 0) m_first_start = start;
  ++m_tlps;
  m_payload_bytes += t.payload_bytes;
  m_tlp_bytes += bytes;
  m_last_end = end;
  const core::picoseconds lag(m_prop_ps + m_decode_ps);
  t.last_byte_in = end + lag;
  return m_deliver_at_header ? header_end + lag : end + lag;
}

core::picoseconds pcie_link::send_dllp(core::picoseconds at) {
  ++m_dllps;
  if (m_params.generation == 5) {
    // The DLLP's wire time is charged now, behind what is already committed, rather than reserved at `at`:
    // a slot reserved in the future would hold back every TLP until then, and a stream of UpdateFCs would
    // starve the TLPs. It arrives no earlier than `at` plus its own serialization.
    const core::picoseconds dllp(gen5_ps(m_params.dllp_bytes));
    const core::picoseconds start = core::max(core::now(), m_wire_free);
    m_wire_free = start + dllp;
    m_wake.notify(sc_core::SC_ZERO_TIME);  // a transmitter waiting for the old wire_free looks again
    return core::max(at, start) + dllp + core::picoseconds(m_prop_ps);
  }
  // Flit mode: in the DLP bytes of the first flit that starts at or after `at`.
  const uint64_t f = (at.value + m_flit_ps - 1) / m_flit_ps;
  return core::picoseconds((f + 1) * m_flit_ps + m_prop_ps + m_decode_ps);
}

void pcie_link::release(const tlp& t) {
  if (m_credits[unsigned(class_of(t.type))].infinite) return;  // nothing to return: no UpdateFC for the class
  const core::picoseconds at = core::now() + core::picoseconds(m_update_fc_ps);
  const core::picoseconds back = m_reverse ? m_reverse->send_dllp(at) : at;
  m_returns.push_back({back, uint8_t(class_of(t.type)), t.data_credits()});
  m_wake.notify(core::to_sc_time(back - core::now()));
}

void pcie_link::transmit_ready() {
  const core::picoseconds now = core::now();
  for (;;) {
    if (ready_at() > now) return;
    tlp* pick = nullptr;
    unsigned cls = 0;
    for (unsigned i = 0; i < fc_classes; ++i) {
      const unsigned c = (m_rr + i) % fc_classes;
      tlp* h = m_queue[c].head;
      if (!h || h->eligible_at > now) continue;
      if (!has_credits(*h)) {
        if (!m_stalled) ++m_credit_stalls;
        m_stalled = true;
        continue;
      }
      pick = h;
      cls = c;
      break;
    }
    if (!pick) return;
    m_stalled = false;
    m_rr = (cls + 1) % fc_classes;
    fifo& q = m_queue[cls];
    q.head = pick->next;
    if (!q.head) q.tail = nullptr;
    if (q.older == pick) q.older = nullptr;  // the older ones have all left: this step's start at the head
    pick->next = nullptr;
    const core::picoseconds deliver = commit(*pick);
    if (pick->held_by) {
      pcie_link* from = pick->held_by;
      pick->held_by = nullptr;
      from->release(*pick);
    }
    m_in_flight.push_back({deliver, pick});
    if (m_commit_observer) m_commit_observer->committed(*pick, *this);
  }
}

void pcie_link::on_wake() {
  const core::picoseconds now = core::now();
  while (!m_returns.empty() && m_returns.front().at <= now) {
    credit_pool& c = m_credits[m_returns.front().cls];
    c.header += 1;
    c.data += m_returns.front().data;
    m_returns.pop_front();
  }
  while (!m_in_flight.empty() && m_in_flight.front().at <= now) {
    tlp* t = m_in_flight.front().t;
    m_in_flight.pop_front();
    if (m_params.generation == 5 && m_reverse && ++m_received_since_ack >= m_params.ack_every_tlps) {
      m_received_since_ack = 0;
      m_reverse->send_dllp(now);
    }
    m_receiver.receive(*t, *this);
  }
  transmit_ready();
  reschedule();
}

void pcie_link::reschedule() {
  const core::picoseconds now = core::now();
  uint64_t next = UINT64_MAX;
  if (!m_in_flight.empty()) next = std::min(next, m_in_flight.front().at.value);
  if (!m_returns.empty()) next = std::min(next, m_returns.front().at.value);
  for (unsigned c = 0; c < fc_classes; ++c) {
    const tlp* h = m_queue[c].head;
    if (h && has_credits(*h)) next = std::min(next, core::max(ready_at(), h->eligible_at).value);
  }
  if (next == UINT64_MAX) return;
  m_wake.notify(core::to_sc_time(core::picoseconds(next > now.value ? next - now.value : 0)));
}

}  // namespace fabricsim::pcie
