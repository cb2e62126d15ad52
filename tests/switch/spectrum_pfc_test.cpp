// Priority flow control of the Spectrum-4 switch: an 8:1 incast in the lossless class loses nothing and
// pauses the senders' NICs, the same incast in a lossy class drops and never pauses, and a received pause
// holds a port's class for exactly quanta x 512 bit times.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/sc_fork.h"
#include "tests/support/spectrum_rig.h"
#include "tests/support/switch_bench.h"

namespace fabricsim::test {
namespace spectrum_pfc_test {

using nlohmann::json;

constexpr size_t senders = 8;

json run_incast(bool lossless) {
  const child_result c = run_in_child([&] {
    switch_bench_config cfg;
    cfg.hosts = senders + 1;
    cfg.sw.buffer_bytes = 4 << 20;
    if (!lossless) cfg.sw.lossless_priorities = "";
    cfg.link.rate_gbps = 400;
    for (size_t i = 1; i <= senders; ++i) cfg.writes.push_back({i, 0, 1 << 20});
    return run_switch_bench(cfg, [](sw::spectrum_switch&, core::sim_context& ctx, json& out) {
             const json stats = ctx.stats.to_json();
             for (size_t i = 0; i <= senders; ++i)
               out["nic_paused_us"].push_back(stats["h" + std::to_string(i) + "_nic"]["paused_us"]["value"]);
           })
        .dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  return c.ok ? json::parse(c.output) : json::object();
}

TEST(spectrum_pfc, lossless_incast_loses_nothing_and_pauses_every_sender) {
  const json r = run_incast(true);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r["dropped"], 0);
  EXPECT_EQ(r["headroom_overflow"], 0);
  EXPECT_EQ(r["completed"], senders);
  EXPECT_EQ(r["mismatched_bytes"], 0);
  EXPECT_EQ(r["placed_bytes"][0], senders << 20);
  EXPECT_GT(r["pause_frames_sent"].get<uint64_t>(), 0u);
  for (size_t i = 1; i <= senders; ++i) {
    EXPECT_GT(r["nic_pause_frames"][i].get<uint64_t>(), 0u) << "sender " << i;
    EXPECT_GT(r["nic_paused_us"][i].get<double>(), 0.0) << "sender " << i;
  }
  EXPECT_EQ(r["nic_pause_frames"][0], 0);  // the receiver's port never congests
  EXPECT_EQ(r["packets_in_use"], 0);
}

TEST(spectrum_pfc, lossy_incast_drops_and_never_pauses) {
  const json r = run_incast(false);
  ASSERT_FALSE(r.empty());
  EXPECT_GT(r["dropped"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["pause_frames_sent"], 0);
  EXPECT_EQ(r["headroom_overflow"], 0);
  for (size_t i = 0; i <= senders; ++i) {
    EXPECT_EQ(r["nic_pause_frames"][i], 0);
    EXPECT_EQ(r["nic_paused_us"][i].get<double>(), 0.0);
  }
}

// A PFC frame from the peer of port 1 pausing priority `prio` for `quanta`.
core::packet* pfc_frame(core::packet_pool& pool, unsigned prio, uint16_t quanta) {
  core::packet* f = pool.acquire();
  f->kind = core::frame_kind::pfc;
  f->eth.dst_mac = core::pfc_mac_control_da;
  f->pfc.class_enable = uint8_t(1u << prio);
  f->pfc.quanta[prio] = quanta;
  f->seal();
  return f;
}

// Quanta Q of 512 bit times at 400 Gb/s: Q x 512 / 400e9 s = Q x 1280 ps.
constexpr uint64_t ps_per_quantum_400g = 512ull * 1'000'000'000'000ull / 400'000'000'000ull;
static_assert(ps_per_quantum_400g == 1280);

struct pause_result {
  uint64_t paused_until, class0_at, class3_at;
};

// At t = 0 the peer of port 1 pauses priority 3 for `quanta`; a class-3 and a class-0 frame for port 1 arrive
// at once. With `xon_at_ps` set the peer sends XON with its first bit on the cable at that time.
pause_result run_pause(uint16_t quanta, uint64_t xon_at_ps = 0) {
  const child_result c = run_in_child([&] {
    sw::spectrum_params sp;
    sp.forwarding = "store_and_forward";
    core::link_params lp;
    lp.rate_gbps = 400;
    spectrum_rig rig(sp, 2, lp);
    rig.route_each_host();
    rig.sw.receive(pfc_frame(rig.ctx.pool, 3, quanta), 1);
    json out;
    out["paused_until"] = rig.sw.port(1).paused_until(3).value;
    rig.sw.receive(rig.frame(rig.host(1), 3, 1000), 0);
    rig.sw.receive(rig.frame(rig.host(1), 0, 1000), 0);
    if (xon_at_ps) rig.from_host[1]->transmit(pfc_frame(rig.ctx.pool, 3, 0), core::picoseconds(xon_at_ps));
    rig.run();
    for (const arrival& a : rig.sink.log) out[a.frame.ip.dscp == 24 ? "class3_at" : "class0_at"] = a.at.value;
    return out.dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  if (!c.ok) return {};
  const json r = json::parse(c.output);
  return {r["paused_until"], r["class0_at"], r["class3_at"]};
}

// Store-and-forward through an idle port: first bit out after the pipeline's 400 ns (80 + 40 + 120 + 80 + 80),
// then 1082 wire bytes at 20 ps a byte, then the cable's 10 ns propagation and 100 ns FEC.
constexpr uint64_t pipeline_ps = 400'000, frame_ps = 1082 * 20, cable_ps = 110'000;

TEST(spectrum_pfc, a_pause_holds_its_class_for_quanta_times_512_bit_times) {
  const uint16_t q = 1000;
  const pause_result r = run_pause(q);
  EXPECT_EQ(r.paused_until, q * ps_per_quantum_400g);
  EXPECT_EQ(r.class0_at, pipeline_ps + frame_ps + cable_ps);                // not paused
  EXPECT_EQ(r.class3_at, q * ps_per_quantum_400g + frame_ps + cable_ps);  // leaves when the pause ends
}

TEST(spectrum_pfc, xon_ends_a_pause_early) {
  const uint16_t q = 65535;  // 83.9 us
  const uint64_t xon_start = 10'000'000;
  const pause_result r = run_pause(q, xon_start);
  EXPECT_EQ(r.paused_until, q * ps_per_quantum_400g);
  // The XON (a 64-byte frame, 84 bytes on the wire) is applied when its last bit has crossed the cable.
  const uint64_t xon_applied = xon_start + 84 * 20 + cable_ps;
  EXPECT_EQ(r.class3_at, xon_applied + frame_ps + cable_ps);
}

}  // namespace spectrum_pfc_test
}  // namespace fabricsim::test
