// One direction of a cable.
#include "sc_models/core/link.h"

#include <memory>
#include <stdexcept>

namespace fabricsim::core {

void link_proxy::forward_credit(link& l, unsigned /*vl*/, uint64_t /*fccl*/, picoseconds /*arrival*/) {
  throw std::logic_error(std::string(l.name()) + ": a credit update for another process, and this link's proxy "
                         "carries none");
}

void link_params::visit(param_visitor& v) {
  v.field({"rate_gbps", "Gb/s", "MAC line rate of every link", 1.0, 3200.0}, rate_gbps);
  v.field({"propagation_ns", "ns", "cable flight time (about 5 ns per metre)", 0.0, 1e6}, propagation_ns);
  v.field({"fec_latency_ns", "ns", "RS-FEC encode plus decode latency", 0.0, 1e5}, fec_latency_ns);
  v.field({"drop_probability", "", "chance that a RoCE frame is lost on the wire (PFC frames never are)", 0.0, 1.0},
          drop_probability);
}

link::link(sc_core::sc_module_name name, const link_params& params, sim_context& ctx)
    : sc_core::sc_module(name),
      calendar_client(&link::due),
      m_ctx(ctx),
      m_rate(params.rate()),
      m_latency(params.latency()),
      m_drop_threshold(uint64_t(params.drop_probability * double(uint64_t(1) << 53))) {
  require(params.rate_gbps > 0.0, this->name(), "rate_gbps must be positive");
  const std::string inst = this->name();
  require(params.drop_probability >= 0.0 && params.drop_probability <= 1.0, inst,
          "drop_probability " + std::to_string(params.drop_probability) + " is outside [0, 1]");
  m_ctx.stats.counter(inst, "packets", "packets", "frames carried", &m_packets);
  m_ctx.stats.counter(inst, "wire_bytes", "bytes", "bytes on the wire, preamble and gap included", &m_wire_bytes);
  m_ctx.stats.counter(inst, "busy_ps", "ps", "time the transmitter was serializing", &m_busy_ps);
  m_ctx.stats.counter(inst, "dropped_injected", "packets", "RoCE frames lost on this link by loss injection",
                      &m_dropped_injected);
  m_ctx.stats.counter(inst, "fault_lost", "packets",
                      "frames lost to an injected fault: serialized while the carrier was down, or lost at random",
                      &m_fault_lost);
  m_ctx.stats.counter(inst, "fcs_errors", "packets",
                      "frames corrupted by injected bit errors and dropped by the receiver's FCS/ICRC check",
                      &m_fcs_errors);
  m_ctx.stats.counter(inst, "tx_known_down", "packets",
                      "frames put on this link while its carrier was known down at the transmitting end",
                      &m_tx_known_down);
}

void link::bind(packet_sink& sink, unsigned sink_port) {
  if (sink_port > UINT16_MAX)
    throw std::logic_error(std::string(name()) + ": bound to port " + std::to_string(sink_port) +
                           " of its far end; a device has at most 65,536 ports");
  m_sink = &sink;
  m_sink_port = uint16_t(sink_port);
}

void link::set_calendar_key(uint64_t k) {
  if (k > UINT32_MAX)
    throw std::logic_error(std::string(name()) + ": calendar key " + std::to_string(k) +
                           " past 2^32 - 1 (a link's key is its global index + 1)");
  calendar_client::set_calendar_key(k);
  m_key = uint32_t(k);
}

picoseconds link::transmit(packet* p, picoseconds start) {
  if (m_sink == nullptr && (!m_attached || m_proxy == nullptr))
    throw std::logic_error(std::string(name()) + ": transmit on an unbound link");
  const bytes size = p->wire();
  const picoseconds ser = serialization_time(size, m_rate);
  const picoseconds end = start + ser;
  m_wire_free = end;
  ++m_packets;
  m_wire_bytes += size.value;
  m_busy_ps += ser.value;
  if (m_attached) return transmit_attached(p, start, end);
  arrive(p, end + m_latency, loss_injected(*p) ? uint8_t(frame_lost | frame_injected) : uint8_t(0));
  return end;
}

bool link::loss_injected(const packet& p) {
  if (m_drop_threshold == 0 || p.kind != frame_kind::roce) return false;
  if (!m_drop_rng) m_drop_rng = std::make_unique<rng_stream>(make_stream(m_ctx.seed, name(), "drop"));
  // A probability of 1 gives a threshold of 2^53, above every 53-bit draw: every RoCE frame is lost.
  return ((*m_drop_rng)() >> 11) < m_drop_threshold;
}

// transmit() with an observer, a fault injector or a proxy attached: the observer sees the frame first, then
// the loss draw, then the fault's verdict; a proxy takes the frame instead of the ring.
picoseconds link::transmit_attached(packet* p, picoseconds start, picoseconds end) {
  if (m_observer != nullptr) m_observer->on_transmit(*this, *p, start);
  const bool injected = loss_injected(*p);
  bool lost = injected, corrupted = false;
  if (m_fault != nullptr && !lost) {
    // The frame still occupies the wire: the transmitter cannot tell (a corrupted one is caught at the far
    // end's FCS check, on arrival).
    m_tx_known_down += m_fault->known_down(start);
    const fault_injector::verdict v = m_fault->judge(*p, start, end);
    lost = v == fault_injector::verdict::lost;
    corrupted = v == fault_injector::verdict::corrupted;
    m_fault_lost += lost;
  }
  const uint8_t flags =
      uint8_t((lost ? frame_lost : 0) | (corrupted ? frame_corrupted : 0) | (injected ? frame_injected : 0));
  if (m_proxy != nullptr) {  // the far end is in another process (docs/scale_out.md)
    m_proxy->forward(*this, p, end + m_latency, flags);
    return end;
  }
  arrive(p, end + m_latency, flags);
  return end;
}

void link::arrive(packet* p, picoseconds arrival, uint8_t flags) {
  const bool was_empty = m_in_flight.empty();
  m_in_flight.push_back({arrival, reinterpret_cast<uintptr_t>(p) | (flags & flag_mask)});
  if (was_empty) schedule_head(arrival, p);
}

void link::inject(packet* p, picoseconds arrival, uint8_t flags) {
  // A frame from the past would break causality: the window protocol guarantees this never happens.
  if (arrival < now() || (!m_in_flight.empty() && arrival < m_in_flight.back().arrival))
    throw std::logic_error(std::string(name()) + ": a frame from another process arrives at " +
                           std::to_string(arrival.value) + " ps, in this process's past (now " +
                           std::to_string(now().value) + " ps): the lookahead was violated");
  arrive(p, arrival, flags);
}

void link::deliver(picoseconds t) {
  // Delivery happens when the last bit has arrived (store-and-forward at the receiver); arrivals on one
  // link are in time order.
  while (!m_in_flight.empty() && m_in_flight.front().arrival <= t) {
    const in_flight f = m_in_flight.front();
    m_in_flight.pop_front();
    packet* p = f.p();
    if (f.flags() & (frame_lost | frame_corrupted)) {
      // The receiving MAC drops a frame whose FCS fails; a lost one never arrives.
      m_fcs_errors += (f.flags() & frame_corrupted) != 0;
      m_dropped_injected += (f.flags() & frame_injected) != 0;
      m_ctx.pool.release(p);
      continue;
    }
    ++m_ctx.packet_hops;
    m_sink->receive(p, m_sink_port);
  }
  if (!m_in_flight.empty()) schedule_head(m_in_flight.front().arrival, m_in_flight.front().p());
}

}  // namespace fabricsim::core
