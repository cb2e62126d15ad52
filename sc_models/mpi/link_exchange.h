// The links that cross between ranks, and the conservative window protocol that keeps the ranks' kernels in
// step (docs/scale_out.md). A frame put on a crossing link is serialized (descriptor, telemetry records and,
// when data is placed, its payload bytes once) into the buffer for the far rank with its arrival time; at
// the end of each window the ranks swap buffers and inject what they received into their copies of those
// links. A window is never longer than the lookahead (the smallest latency of a crossing link), and every
// frame arrives more than one lookahead after it was sent, so no frame reaches a rank in its past.
// InfiniBand credit updates cross the same way: sent along a crossing link by the port that transmits on it,
// exchanged at the window end, delivered at their arrival time to the device that sinks that link.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <systemc>

#include "sc_models/core/link.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/mpi/mpi_world.h"
#include "sc_models/mpi/partition.h"
#include "sc_models/topology/fabric.h"

namespace fabricsim::mpi {

class link_exchange : public core::link_proxy {
 public:
  // Becomes the proxy of every link this rank transmits on whose far end is on another rank. With
  // `ship_payload` a frame's payload bytes travel with it (where data is placed and compared).
  link_exchange(world& w, const partition& part, topology::fabric& fab, core::sim_context& ctx, bool ship_payload);
  link_exchange(const link_exchange&) = delete;
  link_exchange& operator=(const link_exchange&) = delete;
  ~link_exchange() override;

  void forward(core::link& l, core::packet* p, core::picoseconds arrival, uint8_t flags) override;
  // Throws when `arrival` is not beyond the lookahead from now (it could reach the far rank in its past).
  void forward_credit(core::link& l, unsigned vl, uint64_t fccl, core::picoseconds arrival) override;

  // Runs every rank's kernel as sc_start(stop - now, policy) runs one kernel with the whole fabric: to
  // `stop`, or, starving, until nothing is left to happen anywhere (then every rank's clock is at the last
  // event any rank had). A collective call: every rank calls it with the same arguments.
  void start(core::picoseconds stop, sc_core::sc_starvation_policy policy);
  // Anything left to happen on any rank (a collective call).
  bool pending();

  // Called on every rank at the end of every window, after the frames are swapped and injected: work that
  // depends on what other ranks did in the window (the collective engine's barrier and credits) is done
  // here, at a time no later than anything it schedules. A collective call in the hook is allowed.
  void on_window_end(std::function<void()> hook) { m_window_end = std::move(hook); }
  // Whether the ranks run in windows (more than one rank and some link crosses): otherwise the hook never runs.
  bool windowed() const { return m_active; }
  // Crossing link `link` into this rank: `l` is told of every frame a fault destroyed on it (its verdict made
  // on the transmitting rank, which has no sink to tell), as the frame is injected, with the times it was on
  // the wire; in one process the link's injector tells it as it judges (InfiniBand credit recovery).
  void on_arrival_loss(size_t link, core::wire_loss_listener* l);
  // A buffer besides the hosts' memories that frames' payloads point into (a SHARP aggregation unit's partial
  // results), named by `id` alike on every rank, and never moved or resized while frames may point into it. On
  // the rank that owns it, add_payload_space: a payload in it travels as (id, offset) with its bytes, always
  // (they exist nowhere else). On a rank that receives such frames, add_payload_mirror: where they land, at the
  // same offset, and where the injected descriptor then points (as a host's mirror does for its payloads).
  void add_payload_space(uint32_t id, const uint8_t* base, uint64_t size);
  void add_payload_mirror(uint32_t id, uint8_t* base, uint64_t size);

  // Where this rank's time went (docs/scale_out.md, "Where a rank's time goes"). Wall-clock figures grow with
  // the machine's load; busy_cpu_s (this thread's CPU time, CLOCK_THREAD_CPUTIME_ID) and the counts do not.
  struct rank_profile {
    double loop_s = 0.0;        // wall time inside start(): simulating, waiting and exchanging
    double busy_s = 0.0;        // wall time simulating (sc_start inside windows), packing included
    double busy_cpu_s = 0.0;    // this thread's CPU time over the same stretches
    double pack_s = 0.0;        // wall time serializing crossing frames and credit updates (part of busy_s)
    double wait_s = 0.0;        // wall time in the first collective after a window: waiting for the slowest rank
    double exchange_s = 0.0;    // wall time in the other window-end collectives (the bytes, the next-event agreement)
    double unpack_s = 0.0;      // wall time injecting what other ranks sent
    double unpack_cpu_s = 0.0;  // this thread's CPU time over the same
    double hook_s = 0.0;        // wall time in the window-end hook (the collective engine's barrier and credits)
    uint64_t windows = 0;
    uint64_t frames_sent = 0, frames_received = 0;
    uint64_t bytes_sent = 0, bytes_received = 0;
    uint64_t credits_sent = 0;
    uint64_t messages_sent = 0;  // messages sent to other ranks (one per other rank per window)
    uint64_t collectives = 0;    // MPI collective calls the window protocol made (every rank makes the same)
  };
  const rank_profile& profile() const { return m_prof; }
  uint64_t windows() const { return m_prof.windows; }
  uint64_t frames_sent() const { return m_prof.frames_sent; }
  uint64_t bytes_sent() const { return m_prof.bytes_sent; }
  uint64_t credits_sent() const { return m_prof.credits_sent; }

 private:
  uint64_t local_next() const;  // the time of this rank's next event, UINT64_MAX when none
  // The window end: every rank's frames swapped and injected; returns the earliest next event of any rank
  // (each rank's own, or the earliest arrival it sent, whichever is sooner).
  uint64_t exchange();
  void inject(const std::vector<uint8_t>& in);
  void clear_out();  // empty buffers for the next window, each with room for the protocol's 8-byte header

  // The credit updates travelling along one crossing link into this rank, in arrival order, due at the link's
  // credit_calendar_key() (the key its sending receiver uses in one process): handed to the link's sink, a
  // sw::ib::credit_peer, at their arrival time.
  class credit_inbox : public core::calendar_client {
   public:
    credit_inbox(core::link& l, core::arrival_calendar& cal) : m_link(l), m_calendar(cal) {
      set_calendar_key(l.credit_calendar_key());
    }
    void push(unsigned vl, uint64_t fccl, core::picoseconds arrival);
    void on_due(core::picoseconds t) override;

   private:
    struct update {
      core::picoseconds arrival;
      uint32_t vl;
      uint64_t fccl;
    };
    core::link& m_link;
    core::arrival_calendar& m_calendar;
    core::ring<update> m_due;
  };

  world& m_world;
  const partition& m_part;
  topology::fabric& m_fab;
  core::sim_context& m_ctx;
  bool m_ship_payload;
  bool m_active;  // more than one rank and some link crosses
  std::vector<std::vector<uint8_t>> m_out;  // [rank]: frames for it, this window, after an 8-byte header
  std::vector<std::vector<uint8_t>> m_in;   // [rank]: what it sent, last window
  uint64_t m_sent_first = UINT64_MAX;       // the earliest arrival of anything sent this window
  // Where a frame's payload refers to: a host's memory (or this rank's mirror of it), or the transmit buffer
  // of a NIC with nic.placement pcie, which keeps each payload at its memory address.
  // Or a payload space (add_payload_space), whose id stands in the host field.
  enum class payload_place : uint8_t { memory = 0, transmit_buffer = 1, space = 2 };
  struct region {
    const uint8_t* base;
    uint64_t size;
    uint32_t host;
    payload_place place;
  };
  std::vector<region> m_spaces;  // this rank's payload spaces
  struct mirror {
    uint8_t* base;
    uint64_t size;
  };
  std::vector<mirror> m_mirrors;  // [space id]: where its bytes land here ({nullptr, 0}: none)
  void map_regions();
  std::vector<region> m_regions;                       // by address, to name a payload by (host, place, offset)
  std::vector<std::unique_ptr<credit_inbox>> m_inbox;  // [link index], made at the first update on the link
  std::vector<core::wire_loss_listener*> m_arrival_loss;  // [link index] (on_arrival_loss), or empty
  std::function<void()> m_window_end;
  rank_profile m_prof;
};

}  // namespace fabricsim::mpi
