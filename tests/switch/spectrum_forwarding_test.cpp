// One frame through an idle Spectrum-4 switch: store-and-forward and cut-through latency against the hand
// formula, and in-band telemetry records appended at departure.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tests/support/sc_fork.h"
#include "tests/support/spectrum_rig.h"

namespace fabricsim::test {
namespace spectrum_forwarding_test {

using nlohmann::json;

constexpr uint64_t cable_ps = 110'000;     // 10 ns propagation + 100 ns FEC (link defaults)
constexpr uint64_t pipeline_ps = 400'000;  // parse 80 + classify 40 + lookup 120 + admit 80 + schedule 80 ns
constexpr uint64_t cut_through_bytes = 128;

uint64_t ps_per_byte(double gbps) { return uint64_t(8000.0 / gbps); }  // exact at 400 and 200 Gb/s

struct latency_case {
  std::string forwarding;
  double in_gbps, out_gbps;
  uint32_t payload;
};

// Puts one frame on port 0's cable at t = 0 and returns when its last bit reaches host 1.
uint64_t run_one(const latency_case& k) {
  const child_result c = run_in_child([&] {
    sw::spectrum_params sp;
    sp.forwarding = k.forwarding;
    core::link_params in, out;
    in.rate_gbps = k.in_gbps;
    out.rate_gbps = k.out_gbps;
    spectrum_rig rig(sp, 2, {}, {in, out});
    rig.route_each_host();
    rig.from_host[0]->transmit(rig.frame(rig.host(1), 3, k.payload), core::picoseconds(0));
    rig.run();
    if (rig.sink.log.size() != 1) throw std::runtime_error("expected one frame at host 1");
    return std::to_string(rig.sink.log[0].at.value);
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  return c.ok ? std::stoull(c.output) : 0;
}

class latency : public ::testing::TestWithParam<latency_case> {};

TEST_P(latency, one_frame_through_an_idle_switch_matches_the_formula) {
  const latency_case k = GetParam();
  const uint64_t wire = std::max<uint64_t>(82 + k.payload, 84);  // headers + payload, or the minimum frame
  const uint64_t ser_in = wire * ps_per_byte(k.in_gbps), ser_out = wire * ps_per_byte(k.out_gbps);
  // Store-and-forward: the last bit is in, the pipeline runs, the frame is serialized out and crosses.
  const uint64_t last_bit_in = ser_in + cable_ps;
  uint64_t expected = last_bit_in + pipeline_ps + ser_out + cable_ps;
  // Cut-through: the pipeline starts once cut_through_bytes are in, the rest of the frame still arriving;
  // only when the egress is no faster than the ingress (it would run dry) and the frame is longer.
  if (k.forwarding == "cut_through" && k.out_gbps <= k.in_gbps && wire > cut_through_bytes)
    expected -= (wire - cut_through_bytes) * ps_per_byte(k.in_gbps);
  EXPECT_EQ(run_one(k), expected);
}

INSTANTIATE_TEST_SUITE_P(
    cases, latency,
    ::testing::Values(latency_case{"store_and_forward", 400, 400, 4096}, latency_case{"cut_through", 400, 400, 4096},
                      latency_case{"cut_through", 400, 400, 0},      // 84 bytes: shorter than the parser needs
                      latency_case{"cut_through", 200, 400, 4096},   // faster egress: store-and-forward
                      latency_case{"cut_through", 400, 200, 4096},   // slower egress: cut-through
                      latency_case{"store_and_forward", 200, 400, 1000}),
    [](const ::testing::TestParamInfo<latency_case>& i) {
      const latency_case& k = i.param;
      return k.forwarding + "_" + std::to_string(int(k.in_gbps)) + "G_to_" + std::to_string(int(k.out_gbps)) +
             "G_payload_" + std::to_string(k.payload);
    });

// ---- telemetry -----------------------------------------------------------------------------------------

struct hop {
  unsigned int_hops;
  uint64_t wire, sent_at, arrived_at, record_at, rate_mbps;
};

// Sends one frame through the switch `hops` times (the sink hands it back), each time once the previous
// pass is over. Returns what it looked like after each pass.
std::vector<hop> run_hops(bool telemetry, bool requested, unsigned hops) {
  const child_result c = run_in_child([&] {
    sw::spectrum_params sp;
    sp.forwarding = "store_and_forward";
    sp.telemetry = telemetry;
    spectrum_rig rig(sp, 2);
    rig.route_each_host();
    rig.sink.hold = true;
    core::packet* p = rig.frame(rig.host(1), 3, 1000);
    p->int_requested = requested;
    p->seal();
    json out = json::array();
    for (unsigned h = 0; h < hops; ++h) {
      const uint64_t sent = core::now().value;
      rig.sw.receive(p, 0);
      rig.run();
      if (rig.sink.held.size() != 1) throw std::runtime_error("lost the frame");
      p = rig.sink.held.back();
      rig.sink.held.clear();
      const core::int_record last = p->int_hops ? rig.ctx.pool.telemetry(p)[p->int_hops - 1] : core::int_record{};
      out.push_back({p->int_hops, p->wire().value, sent, core::now().value, p->int_hops ? last.at.value : 0,
                     p->int_hops ? last.rate_mbps : 0});
    }
    rig.ctx.pool.release(p);
    return out.dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  std::vector<hop> r;
  if (c.ok)
    for (const auto& x : json::parse(c.output)) r.push_back({x[0], x[1], x[2], x[3], x[4], x[5]});
  return r;
}

TEST(spectrum_telemetry, each_hop_appends_one_record_up_to_five) {
  const unsigned hops = 7;
  const std::vector<hop> r = run_hops(true, true, hops);
  ASSERT_EQ(r.size(), hops);
  const uint64_t base = 82 + 1000 + core::header_bytes::int_shim;  // the shim is there from the sender on
  for (unsigned h = 0; h < hops; ++h) {
    const unsigned records = std::min(h + 1, core::max_int_hops);
    EXPECT_EQ(r[h].int_hops, records) << "pass " << h;
    EXPECT_EQ(r[h].wire, base + 8 * records) << "pass " << h;
    // The frame is handed to the switch whole, so it leaves one pipeline later, at the stamped time, and
    // arrives one serialization of its grown size and one cable later.
    const uint64_t departs = r[h].sent_at + pipeline_ps;
    EXPECT_EQ(r[h].arrived_at, departs + r[h].wire * 20 + cable_ps) << "pass " << h;
    if (h < core::max_int_hops) {
      EXPECT_EQ(r[h].record_at, departs) << "pass " << h;
      EXPECT_EQ(r[h].rate_mbps, 400'000u) << "pass " << h;
    }
  }
}

TEST(spectrum_telemetry, nothing_changes_without_telemetry_or_without_a_request) {
  for (const auto& [telemetry, requested] : {std::pair{false, true}, std::pair{true, false}}) {
    const std::vector<hop> r = run_hops(telemetry, requested, 2);
    ASSERT_EQ(r.size(), 2u);
    for (const hop& x : r) {
      EXPECT_EQ(x.int_hops, 0u);
      EXPECT_EQ(x.wire, 82 + 1000 + (requested ? core::header_bytes::int_shim : 0));
    }
  }
}

}  // namespace spectrum_forwarding_test
}  // namespace fabricsim::test
