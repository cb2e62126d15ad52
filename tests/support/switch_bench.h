// A one-switch bench for the Spectrum-4 model: N hosts (memory + SuperNIC) on one switch, RDMA WRITEs
// posted at given times, run to idle or for a fixed time. Used inside a forked child (sc_fork.h); returns
// what the tests assert on as JSON.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "sc_models/core/link.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/memory/host_memory.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/switch/spectrum/spectrum_switch.h"

namespace fabricsim::test {

struct bench_write {
  size_t src, dst;
  uint64_t bytes;
  double start_ns = 0;
};

struct switch_bench_config {
  size_t hosts = 2;
  sw::spectrum_params sw;
  nic::supernic_params nic;
  core::link_params link;
  std::vector<bench_write> writes;
  double run_us = 0;  // 0: until idle
  uint64_t seed = 1;
};

// Runs the bench; `probe`, when given, is called at the end with the switch and the context so a test can
// read anything before the models are destroyed.
inline nlohmann::json run_switch_bench(
    const switch_bench_config& cfg,
    const std::function<void(sw::spectrum_switch&, core::sim_context&, nlohmann::json&)>& probe = {}) {
  core::sim_context ctx;
  ctx.seed = cfg.seed;
  const size_t n = cfg.hosts;
  std::vector<uint64_t> mem(n, 4096);
  for (const auto& w : cfg.writes) {
    mem[w.src] += (w.bytes + 4095) / 4096 * 4096;
    mem[w.dst] += (w.bytes + 4095) / 4096 * 4096;
  }
  std::vector<std::unique_ptr<memory::host_memory>> mems;
  std::vector<std::unique_ptr<nic::supernic>> nics;
  std::vector<std::unique_ptr<core::link>> links;
  sw::spectrum_switch s("sw0", cfg.sw, unsigned(n), ctx);
  for (size_t i = 0; i < n; ++i) {
    const std::string h = "h" + std::to_string(i);
    mems.push_back(std::make_unique<memory::host_memory>((h + "_mem").c_str(), mem[i]));
    nics.push_back(std::make_unique<nic::supernic>((h + "_nic").c_str(), cfg.nic,
                                                   core::ip_address::v4(0x0a000001 + uint32_t(i)), 0x020000010000 + i,
                                                   ctx));
    nics[i]->dma.bind(mems[i]->socket);
    links.push_back(std::make_unique<core::link>((h + "_to_sw0").c_str(), cfg.link, ctx));
    core::link& up = *links.back();
    links.push_back(std::make_unique<core::link>(("sw0_to_" + h).c_str(), cfg.link, ctx));
    core::link& down = *links.back();
    nics[i]->connect(up);
    up.bind(s, unsigned(i));
    s.connect_port(unsigned(i), down);
    down.bind(*nics[i], 0);
  }
  for (size_t i = 0; i < n; ++i) s.add_route(core::ip_address::v4(0x0a000001 + uint32_t(i)), {unsigned(i)});
  std::vector<std::pair<uint64_t, uint64_t>> bufs;
  for (size_t i = 0; i < cfg.writes.size(); ++i) {
    const bench_write& w = cfg.writes[i];
    nic::supernic& a = *nics[w.src];
    nic::supernic& b = *nics[w.dst];
    const uint64_t src = mems[w.src]->allocate(w.bytes), dst = mems[w.dst]->allocate(w.bytes);
    for (uint64_t k = 0; k < w.bytes; ++k) mems[w.src]->data()[src + k] = uint8_t(k * 131 + i * 7 + 1);
    const uint32_t rkey = b.register_region(dst, w.bytes);
    const uint32_t qa = a.create_qp(), qb = b.create_qp();
    a.connect_qp(qa, core::ip_address::v4(0x0a000001 + uint32_t(w.dst)), qb, 0, 0);
    b.connect_qp(qb, core::ip_address::v4(0x0a000001 + uint32_t(w.src)), qa, 0, 0);
    a.post_write(qa, i, src, dst, rkey, w.bytes, core::picoseconds::from_ns(w.start_ns));
    bufs.push_back({src, dst});
  }
  if (cfg.run_us > 0)
    sc_core::sc_start(sc_core::sc_time(cfg.run_us, sc_core::SC_US));
  else
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC), sc_core::SC_EXIT_ON_STARVATION);

  nlohmann::json out;
  out["end_ns"] = core::now().ns();
  out["completed"] = 0;
  out["completions_ns"] = nlohmann::json::array();
  for (auto& nic : nics)
    for (const auto& c : nic->completions()) {
      out["completed"] = out["completed"].get<int>() + 1;
      out["completions_ns"].push_back(c.completed_at.ns());
    }
  uint64_t mismatched = 0;
  for (size_t i = 0; i < cfg.writes.size(); ++i)
    for (uint64_t k = 0; k < cfg.writes[i].bytes; ++k)
      mismatched += mems[cfg.writes[i].src]->data()[bufs[i].first + k] !=
                    mems[cfg.writes[i].dst]->data()[bufs[i].second + k];
  out["mismatched_bytes"] = mismatched;
  out["dropped"] = ctx.stats.counter_total("dropped");
  out["ecn_marked"] = ctx.stats.counter_total("ecn_marked");
  out["pause_frames_sent"] = ctx.stats.counter_total("pause_frames_sent");
  out["headroom_overflow"] = ctx.stats.counter_total("headroom_overflow");
  out["max_queue_bytes"] = ctx.stats.counter_max("max_queue_bytes");
  for (size_t i = 0; i < n; ++i) {
    const std::string h = "h" + std::to_string(i) + "_nic";
    out["nic_pause_frames"].push_back(ctx.stats.counter_value(h, "pause_frames_received"));
    out["placed_bytes"].push_back(ctx.stats.counter_value(h, "placed_bytes"));
  }
  out["admitted_bytes"] = s.admitted_bytes();
  out["released_bytes"] = s.released_bytes();
  out["shared_used"] = s.shared_used();
  out["packets_in_use"] = ctx.pool.in_use();
  if (probe) probe(s, ctx, out);
  return out;
}

}  // namespace fabricsim::test
