// Shared-buffer accounting of the Spectrum-4 switch: bytes are conserved mid-run and all returned at the
// end, and a congested lossy queue settles at the dynamic-threshold equilibrium alpha B / (1 + alpha).
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "tests/support/sc_fork.h"
#include "tests/support/spectrum_rig.h"
#include "tests/support/switch_bench.h"

namespace fabricsim::test {
namespace spectrum_buffer_test {

using nlohmann::json;

struct incast_case {
  bool lossless;
  uint64_t buffer_bytes;
  double run_us;  // 0: to the end
};

// An 8:1 incast of 512 KB writes; the probe sums the per-queue and per-ingress accounts.
json run_incast(const incast_case& k) {
  const child_result c = run_in_child([&] {
    switch_bench_config cfg;
    cfg.hosts = 9;
    cfg.sw.buffer_bytes = k.buffer_bytes;
    if (!k.lossless) cfg.sw.lossless_priorities = "";
    cfg.run_us = k.run_us;
    for (size_t i = 1; i <= 8; ++i) cfg.writes.push_back({i, 0, 512 << 10});
    return run_switch_bench(cfg, [](sw::spectrum_switch& s, core::sim_context&, json& out) {
             uint64_t queued = 0, headroom = 0, ingress = 0;
             for (unsigned p = 0; p < s.ports(); ++p)
               for (unsigned c = 0; c < sw::traffic_classes; ++c) {
                 queued += s.port(p).queued_bytes(c);
                 headroom += s.headroom_used(p, c);
                 if (s.lossless(c)) ingress += s.ingress_bytes(p, c);
               }
             out["queued"] = queued;
             out["headroom_used"] = headroom;
             out["lossless_ingress"] = ingress;
           })
        .dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  return c.ok ? json::parse(c.output) : json::object();
}

class conservation : public ::testing::TestWithParam<incast_case> {};

TEST_P(conservation, buffer_holds_exactly_what_the_queues_hold) {
  const incast_case k = GetParam();
  const json r = run_incast(k);
  ASSERT_FALSE(r.empty());
  const uint64_t queued = r["queued"], shared = r["shared_used"], headroom = r["headroom_used"];
  const uint64_t admitted = r["admitted_bytes"], released = r["released_bytes"];
  EXPECT_EQ(shared + headroom, queued);
  EXPECT_EQ(admitted - released, queued);
  if (k.lossless) {
    EXPECT_EQ(r["lossless_ingress"].get<uint64_t>(), queued);  // every queued byte is lossless
  }
  if (k.run_us == 0) {
    EXPECT_EQ(queued, 0u);
    EXPECT_EQ(admitted, released);
    EXPECT_EQ(shared, 0u);
    EXPECT_EQ(headroom, 0u);
    // Lossless: every payload byte went through (headers on top); lossy: some did before the drops.
    EXPECT_GT(admitted, k.lossless ? 8u * (512 << 10) : 0u);
  } else {
    EXPECT_GT(queued, 0u) << "the snapshot should catch the incast congested";
  }
}

// 4 MB leaves the shared pool above 8 x XOFF; 1.5 MB does not, so lossless frames spill into headroom.
INSTANTIATE_TEST_SUITE_P(incasts, conservation,
                         ::testing::Values(incast_case{true, 4 << 20, 3}, incast_case{true, 4 << 20, 7.5},
                                           incast_case{true, 4 << 20, 0}, incast_case{true, 1536 << 10, 4},
                                           incast_case{true, 1536 << 10, 9.3}, incast_case{true, 1536 << 10, 0},
                                           incast_case{false, 1 << 20, 5}, incast_case{false, 1 << 20, 0}),
                         [](const ::testing::TestParamInfo<incast_case>& i) {
                           const incast_case& k = i.param;
                           return std::string(k.lossless ? "lossless_" : "lossy_") +
                                  std::to_string(k.buffer_bytes >> 10) + "KB_" +
                                  (k.run_us > 0 ? std::to_string(int(k.run_us * 10)) + "00ns" : "to_the_end");
                         });

TEST(spectrum_buffer, small_pool_spills_lossless_frames_into_headroom) {
  double most = 0;
  for (double t : {2.0, 3.0, 4.0, 5.0, 6.0}) {
    const json r = run_incast({true, 1536 << 10, t});
    ASSERT_FALSE(r.empty());
    most = std::max(most, r["headroom_used"].get<double>());
    EXPECT_EQ(r["headroom_overflow"], 0);
  }
  EXPECT_GT(most, 0.0);
}

// One lossy queue, frozen, offered more than the buffer: it is admitted while q + w <= alpha (B - q), so it
// stops within a frame of alpha B / (1 + alpha).
class dynamic_threshold : public ::testing::TestWithParam<double> {};

TEST_P(dynamic_threshold, a_congested_lossy_queue_stops_at_the_equilibrium) {
  const double alpha = GetParam();
  const uint64_t buffer = 1 << 20, wire = 82 + 1000;
  const unsigned offered = unsigned(buffer / wire) + 50;
  const child_result c = run_in_child([&] {
    sw::spectrum_params sp;
    sp.lossless_priorities = "";  // no headroom reserved: the shared pool is the whole buffer
    sp.buffer_bytes = buffer;
    sp.dt_alpha = alpha;
    spectrum_rig rig(sp, 2);
    rig.route_each_host();
    rig.sw.port(1).pause(0, frozen);
    json out;
    for (unsigned i = 0; i < offered; ++i) {
      rig.sw.receive(rig.frame(rig.host(1), 0, 1000), 0);
      if (i + 1 == offered - 20) out["queued_before_last_20"] = rig.sw.port(1).queued_bytes(0);
    }
    out["queued"] = rig.sw.port(1).queued_bytes(0);
    out["shared_used"] = rig.sw.shared_used();
    out["shared_size"] = rig.sw.shared_size();
    out["dropped"] = rig.counter("sw0.port1.tc0", "queue_dropped");
    return out.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  EXPECT_EQ(r["shared_size"].get<uint64_t>(), buffer);
  const double q = r["queued"].get<double>(), equilibrium = alpha * double(buffer) / (1 + alpha);
  EXPECT_LE(std::fabs(q - equilibrium), 2.0 * wire) << "alpha " << alpha << ": " << q << " vs " << equilibrium;
  EXPECT_EQ(r["queued_before_last_20"], r["queued"]);  // it had stopped growing
  EXPECT_EQ(r["shared_used"], r["queued"]);
  EXPECT_EQ(r["dropped"].get<uint64_t>() * wire + r["queued"].get<uint64_t>(), offered * wire);
}

INSTANTIATE_TEST_SUITE_P(alphas, dynamic_threshold, ::testing::Values(0.25, 0.5, 1.0, 2.0, 8.0));

}  // namespace spectrum_buffer_test
}  // namespace fabricsim::test
