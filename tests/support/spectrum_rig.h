// A bare Spectrum-4 switch for white-box tests: every egress link ends in a capturing sink, every port has
// an ingress link for timed injection, and frames are built by hand. Frames can also be handed to
// receive() at time 0 without running the kernel; ports can be frozen with a long pause. Build it inside
// run_in_child (sc_fork.h): SystemC elaborates once per process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "sc_models/core/link.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/switch/spectrum/spectrum_switch.h"

namespace fabricsim::test {

// What the sink saw: a copy of the frame as it arrived, where and when.
struct arrival {
  unsigned port;
  core::picoseconds at;
  core::packet frame;
};

class capture_sink : public core::packet_sink {
 public:
  explicit capture_sink(core::packet_pool& pool) : m_pool(pool) {}
  void receive(core::packet* p, unsigned port) override {
    log.push_back({port, core::now(), *p});
    if (hold)
      held.push_back(p);
    else
      m_pool.release(p);
  }
  std::vector<arrival> log;
  bool hold = false;  // keep the descriptors (to send them through again) instead of releasing them
  std::vector<core::packet*> held;

 private:
  core::packet_pool& m_pool;
};

constexpr core::picoseconds frozen{UINT64_MAX / 2};  // a pause that outlasts any test

struct spectrum_rig {
  // `links[i]` (or `link` for all) is the cable of port i, both directions.
  spectrum_rig(const sw::spectrum_params& sp, unsigned ports, const core::link_params& link = {},
               std::vector<core::link_params> links = {}, uint64_t seed = 1)
      : ctx(seed), sink(ctx.pool), sw("sw0", sp, ports, ctx) {
    for (unsigned i = 0; i < ports; ++i) {
      const core::link_params& lp = i < links.size() ? links[i] : link;
      const std::string h = "h" + std::to_string(i);
      to_host.push_back(std::make_unique<core::link>(("sw0_to_" + h).c_str(), lp, ctx));
      from_host.push_back(std::make_unique<core::link>((h + "_to_sw0").c_str(), lp, ctx));
      sw.connect_port(i, *to_host.back());
      to_host.back()->bind(sink, i);
      from_host.back()->bind(sw, i);
    }
  }

  // Host i sits behind port i at 10.0.0.(i+1).
  static core::ip_address host(unsigned i) { return core::ip_address::v4(0x0a000001 + i); }
  void route_each_host() {
    for (unsigned i = 0; i < sw.ports(); ++i) sw.add_route(host(i), {i});
  }

  // A RoCEv2 WRITE-only frame without RETH: 82 + payload bytes on the wire (84 at least).
  core::packet* frame(const core::ip_address& dst, unsigned priority, uint32_t payload, uint8_t ecn = 0,
                      uint16_t sport = 49152, const core::ip_address& src = host(0)) {
    core::packet* p = ctx.pool.acquire();
    p->ip.dst = dst;
    p->ip.src = src;
    p->udp.src_port = sport;
    p->ip.dscp = uint8_t(priority * 8);
    p->ip.ecn = ecn;
    p->payload_bytes = payload;
    p->seal();
    return p;
  }

  void run() { sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC), sc_core::SC_EXIT_ON_STARVATION); }
  uint64_t counter(const std::string& inst, const std::string& name) const {
    return ctx.stats.counter_value(inst, name);
  }

  struct seeded_context : core::sim_context {
    explicit seeded_context(uint64_t s) { seed = s; }
  };
  seeded_context ctx;  // first: the switch's hash and ECN streams derive from its seed
  capture_sink sink;
  std::vector<std::unique_ptr<core::link>> to_host;
  std::vector<std::unique_ptr<core::link>> from_host;
  sw::spectrum_switch sw;
};

}  // namespace fabricsim::test
