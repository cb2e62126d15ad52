// ECN marking of the Spectrum-4 switch against the RED line computed by hand: the egress port is frozen
// (paused), its class queue prefilled to a known depth, then ECT probes arrive and each sees the depth
// left by those before it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "tests/support/sc_fork.h"
#include "tests/support/spectrum_rig.h"

namespace fabricsim::test {
namespace spectrum_ecn_test {

using nlohmann::json;
namespace hb = core::header_bytes;

constexpr uint8_t not_ect = 0, ect1 = 1, ect0 = 2, ce = 3;

// Wire size of a WRITE-only frame without RETH, from the header sizes (IEEE 802.3 minimum frame included).
uint64_t roce_wire(uint64_t payload) {
  const uint64_t frame = hb::ethernet + hb::ipv4 + hb::udp + hb::bth + payload + hb::icrc + hb::fcs;
  return std::max(frame, hb::min_frame) + hb::preamble_sfd + hb::inter_frame_gap;
}

constexpr uint64_t kmin = 1'000'000, kmax = 5'000'000;
constexpr double pmax = 0.5;
constexpr uint32_t fill_payload = 4096, probe_payload = 0;
constexpr unsigned probes = 3000;

sw::spectrum_params red_params() {
  sw::spectrum_params sp;
  sp.lossless_priorities = "";  // lossy: admission by dynamic threshold, never a pause
  sp.ecn_classes = "3";
  sp.ecn_kmin_bytes = kmin;
  sp.ecn_kmax_bytes = kmax;
  sp.ecn_pmax = pmax;
  sp.ecn_mark_at = "enqueue";  // the probes are judged by the queue they join, and never leave
  return sp;
}

// Frames needed to prefill a queue to at least `target` bytes.
uint64_t fill_frames(uint64_t target) { return (target + roce_wire(fill_payload) - 1) / roce_wire(fill_payload); }

// Prefills class 3 of frozen port 1 with `fill` non-ECT frames, then sends `probes` ECT(0) frames.
json run_red(uint64_t fill) {
  const child_result c = run_in_child([&] {
    spectrum_rig rig(red_params(), 2);
    rig.route_each_host();
    rig.sw.port(1).pause(3, frozen);
    for (uint64_t i = 0; i < fill; ++i) rig.sw.receive(rig.frame(rig.host(1), 3, fill_payload, not_ect), 0);
    json out;
    out["depth_after_fill"] = rig.sw.port(1).depth(3);
    std::vector<core::packet*> sent;
    for (unsigned i = 0; i < probes; ++i) {
      sent.push_back(rig.frame(rig.host(1), 3, probe_payload, ect0, uint16_t(i)));
      rig.sw.receive(sent.back(), 0);
    }
    unsigned marked = 0;
    for (core::packet* p : sent) marked += p->ip.ecn == ce;  // still queued: the port never ran
    out["marked"] = marked;
    out["counted"] = rig.counter("sw0.port1.tc3", "queue_ecn_marked");
    out["dropped"] = rig.counter("sw0.port1", "dropped");
    return out.dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  return c.ok ? json::parse(c.output) : json::object();
}

class red_line : public ::testing::TestWithParam<uint64_t> {};

TEST_P(red_line, marks_match_the_expected_count_within_four_sigma) {
  const uint64_t fill = fill_frames(GetParam());
  const json r = run_red(fill);
  ASSERT_FALSE(r.empty());
  const uint64_t q0 = fill * roce_wire(fill_payload);
  ASSERT_EQ(r["depth_after_fill"].get<uint64_t>(), q0);
  ASSERT_EQ(r["dropped"].get<uint64_t>(), 0u);
  // RED: probe i finds q = q0 + i probes ahead of it; p = 0 at or below Kmin, Pmax (q - Kmin) / (Kmax - Kmin)
  // in between, 1 at or above Kmax.
  double mean = 0, var = 0;
  for (unsigned i = 0; i < probes; ++i) {
    const uint64_t q = q0 + i * roce_wire(probe_payload);
    const double p = q <= kmin ? 0.0 : q >= kmax ? 1.0 : pmax * double(q - kmin) / double(kmax - kmin);
    mean += p;
    var += p * (1 - p);
  }
  const double marked = r["marked"].get<double>();
  EXPECT_LE(std::fabs(marked - mean), 4 * std::sqrt(var) + 1e-9)
      << "q0 " << q0 << ": marked " << marked << ", expected " << mean << " +- " << 4 * std::sqrt(var);
  EXPECT_EQ(r["counted"].get<uint64_t>(), r["marked"].get<uint64_t>());
}

// Marking at dequeue (the default): a frozen queue of N equal frames is released; the i-th to leave sees
// the N-1-i frames behind it plus what the MAC FIFO still holds (0 to tx_fifo_frames frames). With Kmin 0,
// Pmax 1 and Kmax above the queue, p = depth / Kmax, so the marks fall between the two sums below.
TEST(spectrum_ecn, dequeue_marking_judges_the_queue_a_frame_leaves_behind) {
  constexpr unsigned n = 2000;
  constexpr uint64_t kmax_dq = 20'000'000;
  const child_result c = run_in_child([&] {
    sw::spectrum_params sp;
    sp.lossless_priorities = "";
    sp.ecn_kmin_bytes = 0;
    sp.ecn_kmax_bytes = kmax_dq;
    sp.ecn_pmax = 1.0;
    spectrum_rig rig(sp, 2);
    rig.route_each_host();
    rig.sw.port(1).pause(3, frozen);
    for (unsigned i = 0; i < n; ++i) rig.sw.receive(rig.frame(rig.host(1), 3, fill_payload, ect0, uint16_t(i)), 0);
    rig.sw.port(1).pause(3, core::picoseconds{});  // XON
    rig.run();
    unsigned marked = 0, received = 0;
    for (const arrival& a : rig.sink.log) {
      ++received;
      marked += a.frame.ip.ecn == ce;
    }
    return json{{"marked", marked}, {"received", received}, {"fifo", sp.tx_fifo_frames}}.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  ASSERT_EQ(r["received"].get<unsigned>(), n);
  const double s = double(roce_wire(fill_payload)), k = r["fifo"].get<double>();
  double low = 0, high = 0, var = 0;
  for (unsigned i = 0; i < n; ++i) {
    const double p_low = (n - 1 - i) * s / kmax_dq, p_high = std::min(1.0, ((n - 1 - i) * s + k * s) / kmax_dq);
    low += p_low;
    high += p_high;
    var += p_high * (1 - p_low);
  }
  const double marked = r["marked"].get<double>();
  EXPECT_GE(marked, low - 4 * std::sqrt(var)) << "expected " << low << " .. " << high;
  EXPECT_LE(marked, high + 4 * std::sqrt(var)) << "expected " << low << " .. " << high;
}

// Below Kmin (the probes never reach it), across Kmin, between, just below Kmax (probes cross it), at and
// above Kmax.
INSTANTIATE_TEST_SUITE_P(depths, red_line,
                         ::testing::Values(500'000, 900'000, 2'000'000, 3'500'000, 4'900'000, 5'000'000,
                                           6'000'000));

TEST(spectrum_ecn, only_ect_frames_of_ecn_classes_are_marked_and_ce_stays_ce) {
  const child_result c = run_in_child([&] {
    sw::spectrum_params sp = red_params();
    spectrum_rig rig(sp, 3);
    rig.route_each_host();
    // Both queues above Kmax: every ECT frame of an ECN class must be marked.
    rig.sw.port(1).pause(3, frozen);
    rig.sw.port(2).pause(0, frozen);
    for (uint64_t i = 0; i < fill_frames(kmax + 100'000); ++i) {
      rig.sw.receive(rig.frame(rig.host(1), 3, fill_payload, not_ect), 0);
      rig.sw.receive(rig.frame(rig.host(2), 0, fill_payload, not_ect), 0);
    }
    json out;
    auto send = [&](unsigned port, unsigned prio, uint8_t ecn) {
      std::vector<uint8_t> seen;
      std::vector<core::packet*> sent;
      for (unsigned i = 0; i < 200; ++i) {
        sent.push_back(rig.frame(rig.host(port), prio, 256, ecn, uint16_t(i)));
        rig.sw.receive(sent.back(), 0);
      }
      json codes = json::array();
      for (core::packet* p : sent) codes.push_back(p->ip.ecn);
      return codes;
    };
    out["class3_not_ect"] = send(1, 3, not_ect);
    out["class3_ce"] = send(1, 3, ce);
    out["class3_ect1"] = send(1, 3, ect1);
    out["class3_ect0"] = send(1, 3, ect0);
    out["class0_ect0"] = send(2, 0, ect0);
    out["class0_marks"] = rig.counter("sw0.port2.tc0", "queue_ecn_marked");
    out["class3_marks"] = rig.counter("sw0.port1.tc3", "queue_ecn_marked");
    return out.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  for (const auto& e : r["class3_not_ect"]) EXPECT_EQ(e, not_ect);
  for (const auto& e : r["class3_ce"]) EXPECT_EQ(e, ce);
  for (const auto& e : r["class3_ect1"]) EXPECT_EQ(e, ce);
  for (const auto& e : r["class3_ect0"]) EXPECT_EQ(e, ce);
  for (const auto& e : r["class0_ect0"]) EXPECT_EQ(e, ect0);
  EXPECT_EQ(r["class0_marks"], 0);
  EXPECT_EQ(r["class3_marks"], 400);  // the ECT(1) and ECT(0) probes; a CE frame is not marked again
}

}  // namespace spectrum_ecn_test
}  // namespace fabricsim::test
