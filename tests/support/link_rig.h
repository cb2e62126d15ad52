// What the link and calendar tests put on a wire and at its far end. A 4,096-byte RoCEv2 WRITE MIDDLE
// descriptor from a context's pool (at 400 Gb/s it takes 83,560 ps to serialize: 4,096 bytes of payload, 62 of headers,
// ICRC and FCS, and 20 of preamble and gap).
#pragma once

#include <functional>
#include <utility>

#include "sc_models/core/link.h"
#include "sc_models/core/packet.h"
#include "sc_models/core/sim_context.h"

namespace fabricsim::test {

inline core::packet* write_middle_4096(core::sim_context& ctx) {
  core::packet* p = ctx.pool.acquire();
  p->bth.opcode = core::bth_opcode::rc_rdma_write_middle;
  p->payload_bytes = 4096;
  return p;
}

// A far end that tells `on_arrival` of each frame delivered to it, then returns the descriptor to the pool.
struct arrival_sink : core::packet_sink {
  arrival_sink(core::sim_context& c, std::function<void(const core::packet&)> f) : ctx(c), on_arrival(std::move(f)) {}
  void receive(core::packet* p, unsigned) override {
    on_arrival(*p);
    ctx.pool.release(p);
  }
  core::sim_context& ctx;
  std::function<void(const core::packet&)> on_arrival;
};

}  // namespace fabricsim::test
