// One direction of a cable: serialization at line rate, propagation and FEC latency. Links are the only way
// devices meet. A packet put on a link is delivered to the far device's packet_sink when its last bit has
// arrived. The packets in flight are a ring in arrival order; its head waits in the kernel's arrival
// calendar, so a link costs no kernel event of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>

#include "sc_models/core/fault_injector.h"
#include "sc_models/core/packet.h"
#include "sc_models/core/params.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/rng.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/core/units.h"

namespace fabricsim::core {

// Whatever receives packets from a link: a NIC or a switch port.
class packet_sink {
 public:
  virtual ~packet_sink() = default;
  // Called at the time the last bit of `p` has arrived at port `port` of the sink; the sink owns `p` now.
  virtual void receive(packet* p, unsigned port) = 0;
};

class link;

// Scale-out (docs/scale_out.md): the transmitting half of a link whose far end lives in another process.
// Instead of the link's own ring, each frame goes to the proxy with its arrival time; the far process
// injects it into its copy of the link (link::inject) before that time.
class link_proxy {
 public:
  virtual ~link_proxy() = default;
  // `p` was put on `l` and arrives at `arrival`; the proxy owns `p` now. `flags`: link::frame_flags.
  virtual void forward(link& l, packet* p, picoseconds arrival, uint8_t flags) = 0;
  // An InfiniBand credit update (FCCL `fccl` blocks for virtual lane `vl`) sent along `l` by the port that
  // transmits on it, for the device that sinks `l` (the sender whose buffer space it reports), arriving at
  // `arrival`. The far process delivers it then (docs/scale_out.md). A proxy that carries no credits throws.
  virtual void forward_credit(link& l, unsigned vl, uint64_t fccl, picoseconds arrival);
};

// Watches the frames a link puts on the wire (packet captures). Called once per frame from transmit(),
// before loss injection: a frame lost on the wire still left the transmitter. The observer must not keep `p`.
class link_observer {
 public:
  virtual ~link_observer() = default;
  // `start`: when the frame's first bit (preamble) is put on the wire.
  virtual void on_transmit(const link& l, const packet& p, picoseconds start) = 0;
};

// One link's parameters. Scenarios do not set these directly: the fabric derives them per tier from
// `topology` (rates, cable lengths) and `link` (ns per metre, FEC), see topology::tier_link().
struct link_params {
  double rate_gbps = 400.0;       // MAC line rate
  double propagation_ns = 10.0;   // cable flight time (about 5 ns per metre: a 2 m cable)
  double fec_latency_ns = 100.0;  // RS-FEC encode + decode
  double drop_probability = 0.0;  // loss injection: chance that a RoCE frame is lost on the wire (never PFC)
  void visit(param_visitor& v);
  bits_per_second rate() const { return bits_per_second::from_gbps(rate_gbps); }
  picoseconds latency() const { return picoseconds::from_ns(propagation_ns + fec_latency_ns); }  // after the last bit
};

// Laid out by use (alignas(64): the calendar client's header ends at the end of a cache line, 256 bytes in,
// so the fields after it start the next): the line the arrival calendar's call reads (the in-flight ring,
// the far end, the context), then the line a transmitted frame writes (rate, latency, wire state and
// counters), then what a plain link never reads (observer, fault injector, proxy, rare counters, the loss
// stream).
class alignas(64) link : public sc_core::sc_module, public calendar_client {
 public:
  link(sc_core::sc_module_name name, const link_params& params, sim_context& ctx);
  link(const link&) = delete;
  link& operator=(const link&) = delete;

  // Connects the far end. Must be called before the simulation starts.
  void bind(packet_sink& sink, unsigned sink_port);

  // Puts `p` on the wire with its first bit at `start` (>= now, and no earlier than the previous packet's
  // last bit). Returns the time the last bit leaves, when the wire is free again.
  picoseconds transmit(packet* p, picoseconds start);

  picoseconds serialization(bytes wire_size) const { return serialization_time(wire_size, m_rate); }
  bits_per_second rate() const { return m_rate; }
  picoseconds latency() const { return m_latency; }  // propagation + FEC
  picoseconds wire_free_at() const { return m_wire_free; }
  // The far end, once bound (for wiring checks: which device and port this link feeds).
  packet_sink* sink() const { return m_sink; }
  unsigned sink_port() const { return m_sink_port; }

  // At most one observer; nullptr detaches. Unobserved links pay one null check per frame.
  void set_observer(link_observer* o) {
    m_observer = o;
    update_attached();
  }
  link_observer* observer() const { return m_observer; }

  // Fault injection (link down, flapping, loss, bit errors): at most one injector; nullptr detaches. A link
  // without one pays one null check per frame.
  void set_fault(fault_injector* f) {
    m_ctx.links_with_fault += uint64_t(f != nullptr) - uint64_t(m_fault != nullptr);
    m_fault = f;
    update_attached();
  }
  fault_injector* fault() const { return m_fault; }
  // The switch at this link's transmitting end knows the carrier is down (routing keeps clear of it).
  bool known_down(picoseconds t) const { return m_fault != nullptr && m_fault->known_down(t); }

  uint64_t packets() const { return m_packets; }
  uint64_t wire_bytes() const { return m_wire_bytes; }
  uint64_t dropped_injected() const { return m_dropped_injected; }
  uint64_t fault_lost() const { return m_fault_lost; }
  uint64_t fcs_errors() const { return m_fcs_errors; }
  uint64_t tx_known_down() const { return m_tx_known_down; }

  // Scale-out (docs/scale_out.md). A link with a proxy hands its frames to it instead of its ring (its far
  // end is in another process); the far process calls inject() on its copy of the link, in arrival order,
  // with an arrival no earlier than its present time. The frame is then delivered, dropped or counted exactly
  // as if it had been transmitted here.
  enum frame_flags : uint8_t { frame_lost = 1, frame_corrupted = 2, frame_injected = 4 };
  void set_proxy(link_proxy* x) {
    m_proxy = x;
    update_attached();
  }
  link_proxy* proxy() const { return m_proxy; }
  void inject(packet* p, picoseconds arrival, uint8_t flags);

  // The calendar key of the credit updates that travel along this link (InfiniBand, sw::ib::credit_receiver):
  // after every link's frame arrivals at the same time, in link order, so that simultaneous updates meet
  // their receiving device in the same order however the fabric is cut across processes.
  static constexpr uint64_t credit_key_offset = uint64_t(1) << 32;
  uint64_t credit_calendar_key() const { return calendar_key() + credit_key_offset; }

  // Called by the arrival calendar at `t`: hands every packet that has arrived by `t` to the far end.
  void deliver(picoseconds t);
  void on_due(picoseconds t) override { deliver(t); }
  // The fabric numbers links for the calendar (global index + 1): kept in the line deliver() reads too.
  void set_calendar_key(uint64_t k) override;

 private:
  // A frame in flight: its arrival time and its descriptor, with the frame_flags in the pointer's low bits
  // (a descriptor is 64-byte aligned): 16 bytes, four to a cache line.
  struct in_flight {
    picoseconds arrival;
    uintptr_t tagged;
    packet* p() const { return reinterpret_cast<packet*>(tagged & ~uintptr_t(flag_mask)); }
    uint8_t flags() const { return uint8_t(tagged & flag_mask); }
  };
  static constexpr uintptr_t flag_mask = frame_lost | frame_corrupted | frame_injected;
  static_assert(alignof(packet) > flag_mask, "the frame flags live in a descriptor pointer's low bits");

  // The calendar's call (calendar_client::due_fn): straight to deliver(), without reading the vtable pointer
  // in the client's header line.
  static void due(calendar_client& c, picoseconds t) { static_cast<link&>(c).deliver(t); }
  void arrive(packet* p, picoseconds arrival, uint8_t flags);
  picoseconds transmit_attached(packet* p, picoseconds start, picoseconds end);
  bool loss_injected(const packet& p);  // loss injection's draw for `p` (link.drop_probability)
  void update_attached() { m_attached = m_observer != nullptr || m_fault != nullptr || m_proxy != nullptr; }

  void schedule_head(picoseconds at, packet* p) { m_ctx.calendar.schedule(this, at, p, m_key, &link::due); }

  // What deliver() reads (one line).
  ring<in_flight> m_in_flight{4};
  sim_context& m_ctx;
  packet_sink* m_sink = nullptr;
  uint32_t m_key = 0;        // calendar_key(), here rather than in the header's line
  uint16_t m_sink_port = 0;  // a device has fewer than 65,536 ports (bind() checks)
  bool m_attached = false;   // an observer, a fault injector or a proxy: a plain link reads none of the three
  // What transmit() reads and writes (one line).
  alignas(64) bits_per_second m_rate;
  picoseconds m_latency;
  picoseconds m_wire_free{};
  uint64_t m_packets = 0;
  uint64_t m_wire_bytes = 0;
  uint64_t m_busy_ps = 0;
  // Loss injection: the frame is serialized (it used the wire) and vanishes before the far end; the draw is
  // made when it is put on the wire, from the link's own stream, so a run is repeatable.
  uint64_t m_drop_threshold = 0;  // drop when the 53-bit draw is below this; 0: no loss injection
  // The rest.
  alignas(64) link_observer* m_observer = nullptr;
  fault_injector* m_fault = nullptr;
  link_proxy* m_proxy = nullptr;
  uint64_t m_dropped_injected = 0;
  uint64_t m_fault_lost = 0, m_fcs_errors = 0, m_tx_known_down = 0;
  // The loss stream (std::mt19937_64, 2.5 KB), made at its first draw: its seed depends only on the run's
  // seed and the link's name, so when it is made changes no draw, and a link without loss injection (all
  // but a few) holds none.
  std::unique_ptr<rng_stream> m_drop_rng;
};

}  // namespace fabricsim::core
