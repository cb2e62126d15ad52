// The egress scheduler of a switch port (driven through a Spectrum-4 switch): strict priority overtakes
// everything still queued, and DWRR shares the wire by weight between backlogged classes.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "tests/support/sc_fork.h"
#include "tests/support/spectrum_rig.h"

namespace fabricsim::test {
namespace scheduled_port_test {

using nlohmann::json;

constexpr uint64_t cable_ps = 110'000;   // 10 ns propagation + 100 ns FEC (link defaults)
constexpr uint64_t pipeline_ps = 400'000;  // 80 + 40 + 120 + 80 + 80 ns of stages
constexpr uint64_t ps_per_byte = 20;     // 400 Gb/s

struct departure {
  unsigned tc;
  uint64_t bytes, last_bit_ps;
};

// Backlogs port 1 with `backlog` frames per class of classes 0 and 3 (interleaved) at t = 0; the class-6
// frame arrives at t = 0 after them, or is put on port 0's cable at `late_ps` when that is not zero.
std::vector<departure> run_strict(unsigned fifo, unsigned backlog, uint64_t late_ps) {
  const child_result c = run_in_child([&] {
    sw::spectrum_params sp;
    sp.forwarding = "store_and_forward";
    sp.lossless_priorities = "";
    sp.tx_fifo_frames = fifo;
    spectrum_rig rig(sp, 2);
    rig.route_each_host();
    for (unsigned i = 0; i < backlog; ++i) {
      rig.sw.receive(rig.frame(rig.host(1), 0, 1000), 0);
      rig.sw.receive(rig.frame(rig.host(1), 3, 1000), 0);
    }
    core::packet* urgent = rig.frame(rig.host(1), 6, 1000);
    if (late_ps)
      rig.from_host[0]->transmit(urgent, core::picoseconds(late_ps));
    else
      rig.sw.receive(urgent, 0);
    rig.run();
    json out = json::array();
    for (const arrival& a : rig.sink.log)
      out.push_back({a.frame.ip.dscp / 8, a.frame.wire().value, a.at.value - cable_ps});
    return out.dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  std::vector<departure> d;
  if (c.ok)
    for (const auto& x : json::parse(c.output)) d.push_back({x[0], x[1], x[2]});
  return d;
}

size_t position_of_class(const std::vector<departure>& d, unsigned tc) {
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i].tc == tc) return i;
  return d.size();
}

class strict_priority : public ::testing::TestWithParam<unsigned> {};

TEST_P(strict_priority, overtakes_every_frame_not_yet_in_the_mac_fifo) {
  const unsigned fifo = GetParam();
  const std::vector<departure> d = run_strict(fifo, 20, 0);
  ASSERT_EQ(d.size(), 41u);
  // Everything arrived at t = 0; the MAC FIFO took the first `fifo` frames at once, the class-6 frame goes next.
  EXPECT_EQ(position_of_class(d, 6), fifo);
}

TEST_P(strict_priority, a_late_urgent_frame_waits_only_for_the_mac_fifo) {
  const unsigned fifo = GetParam();
  const uint64_t start = 300'000, wire = 1082;
  const std::vector<departure> d = run_strict(fifo, 40, start);
  ASSERT_EQ(d.size(), 81u);
  // It reaches the class queue when its last bit is in and the pipeline has run.
  const uint64_t queued_at = start + wire * ps_per_byte + cable_ps + pipeline_ps;
  const size_t pos = position_of_class(d, 6);
  size_t done = 0;  // frames wholly sent by then
  for (const departure& x : d) done += x.tc != 6 && x.last_bit_ps <= queued_at;
  ASSERT_LT(done, 80u) << "the backlog must outlast the urgent frame's arrival";
  EXPECT_LE(pos, done + fifo);
  EXPECT_GE(pos, done);
}

INSTANTIATE_TEST_SUITE_P(tx_fifo_frames, strict_priority, ::testing::Values(1u, 2u, 4u, 8u));

TEST(dwrr, backlogged_classes_share_the_wire_by_weight) {
  const unsigned per_class = 2000, fifo = 4;
  const child_result c = run_in_child([&] {
    sw::spectrum_params sp;
    sp.forwarding = "store_and_forward";
    sp.lossless_priorities = "";
    sp.ets_weights = "0:1,3:3";
    sp.tx_fifo_frames = fifo;
    spectrum_rig rig(sp, 2);
    rig.route_each_host();
    for (unsigned i = 0; i < per_class; ++i) {
      rig.sw.receive(rig.frame(rig.host(1), 0, 4096), 0);  // different frame sizes: the share is in bytes
      rig.sw.receive(rig.frame(rig.host(1), 3, 1000), 0);
    }
    rig.run();
    json out = json::array();
    for (const arrival& a : rig.sink.log) out.push_back({a.frame.ip.dscp / 8, a.frame.wire().value});
    return out.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json d = json::parse(c.output);
  ASSERT_EQ(d.size(), 2 * per_class);
  // While both are backlogged: from the first scheduled frame (the first `fifo` went straight to the MAC)
  // to the last class-3 frame (class 3, with three times the share of smaller frames, empties first).
  size_t last3 = 0;
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i][0] == 3) last3 = i;
  uint64_t bytes0 = 0, bytes3 = 0;
  for (size_t i = fifo; i <= last3; ++i) (d[i][0] == 0 ? bytes0 : bytes3) += d[i][1].get<uint64_t>();
  ASSERT_GT(bytes0 + bytes3, 2'000'000u);
  // DRR keeps each class within one round's quantum of its share: class 3 gets 3 jumbo-frame quanta
  // (27648 bytes) a round, and each class may be short by up to one of its frames per round boundary.
  const double tolerance = 3 * 9216 + 3 * 4178 + 1082;
  EXPECT_LE(std::fabs(double(bytes3) - 3.0 * double(bytes0)), tolerance)
      << "class 0 " << bytes0 << " bytes, class 3 " << bytes3;
}

}  // namespace scheduled_port_test
}  // namespace fabricsim::test
