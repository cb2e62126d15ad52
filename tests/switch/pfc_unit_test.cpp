// The Spectrum PFC unit (sc_models/switch/spectrum/pfc_unit): where lossless frames are held, XOFF, XON and
// the refresh, stepped by hand with XOFF 1000 B, XON 600 B, a 500 B headroom and 400 B frames.
#include "sc_models/switch/spectrum/pfc_unit.h"

#include <gtest/gtest.h>

#include <vector>

using namespace fabricsim;
using core::picoseconds;
using held = sw::pfc_unit::held;

namespace {
sw::pfc_unit make() {
  sw::pfc_unit u(2, 1000, 600);
  u.configure_port(1, 500, picoseconds(1000));
  return u;
}
}  // namespace

TEST(pfc_unit, frames_fill_the_shared_pool_to_xoff_then_the_headroom_then_overflow) {
  sw::pfc_unit u = make();
  const picoseconds t(5);
  EXPECT_EQ(u.admit(1, 3, 400, true, t).where, held::shared);  // 400
  EXPECT_EQ(u.admit(1, 3, 400, true, t).where, held::shared);  // 800, below XOFF
  EXPECT_FALSE(u.xoff_asserted(1, 3));
  // 800 + 400 = 1200 passes XOFF 1000: into the headroom (400 of 500), and the priority pauses.
  const sw::pfc_unit::admission third = u.admit(1, 3, 400, true, t);
  EXPECT_EQ(third.where, held::headroom);
  EXPECT_TRUE(third.xoff);
  EXPECT_EQ(u.ingress_bytes(1, 3), 1200u);
  EXPECT_EQ(u.headroom_used(1, 3), 400u);
  // 400 + 400 = 800 > 500: the headroom overflows, nothing is counted, and no second XOFF.
  const sw::pfc_unit::admission fourth = u.admit(1, 3, 400, true, t);
  EXPECT_EQ(fourth.where, held::overflow);
  EXPECT_FALSE(fourth.xoff);
  EXPECT_EQ(u.ingress_bytes(1, 3), 1200u);
  // Other priorities and ports are accounted apart.
  EXPECT_EQ(u.ingress_bytes(1, 4), 0u);
  EXPECT_EQ(u.ingress_bytes(0, 3), 0u);
}

TEST(pfc_unit, a_full_shared_pool_sends_a_frame_to_the_headroom_and_pauses_below_xoff) {
  sw::pfc_unit u = make();
  const sw::pfc_unit::admission a = u.admit(1, 3, 400, false, picoseconds(0));
  EXPECT_EQ(a.where, held::headroom);
  EXPECT_TRUE(a.xoff);  // 400 < XOFF, but the headroom is in use
}

TEST(pfc_unit, reaching_xoff_exactly_pauses_from_the_shared_pool) {
  sw::pfc_unit u = make();
  EXPECT_FALSE(u.admit(1, 3, 600, true, picoseconds(0)).xoff);
  const sw::pfc_unit::admission a = u.admit(1, 3, 400, true, picoseconds(0));  // 1000 = XOFF
  EXPECT_EQ(a.where, held::shared);
  EXPECT_TRUE(a.xoff);
}

TEST(pfc_unit, the_headroom_drains_first_and_xon_comes_at_or_below_xon_bytes) {
  sw::pfc_unit u = make();
  for (int i = 0; i < 3; ++i) u.admit(1, 3, 400, true, picoseconds(10));  // 800 shared + 400 headroom
  sw::pfc_unit::release r = u.depart(1, 3, 400, picoseconds(20));
  EXPECT_EQ(r.from_shared, 0u);  // the 400 came out of the headroom
  EXPECT_FALSE(r.xon);           // 800 held > XON 600
  r = u.depart(1, 3, 100, picoseconds(30));
  EXPECT_EQ(r.from_shared, 100u);
  EXPECT_FALSE(r.xon);  // 700 > 600
  r = u.depart(1, 3, 100, picoseconds(40));
  EXPECT_TRUE(r.xon);  // 600: at XON
  EXPECT_FALSE(u.xoff_asserted(1, 3));
  ASSERT_EQ(u.pause_log().size(), 1u);
  EXPECT_EQ(u.pause_log()[0].start, picoseconds(10));
  EXPECT_EQ(u.pause_log()[0].end, picoseconds(40));
  EXPECT_EQ(u.pause_log_complete_until(), sw::pfc_unit::never);
}

TEST(pfc_unit, a_pause_is_refreshed_every_interval_while_it_lasts) {
  sw::pfc_unit u = make();
  u.admit(1, 3, 1000, true, picoseconds(0));  // XOFF at 0: refresh due at 1000
  EXPECT_EQ(u.refresh_at(1, 3), picoseconds(1000));
  std::vector<unsigned> sent;
  const auto send = [&](unsigned prio) { sent.push_back(prio); };
  EXPECT_EQ(u.refresh(1, picoseconds(999), send), picoseconds(1000));
  EXPECT_TRUE(sent.empty());
  EXPECT_EQ(u.refresh(1, picoseconds(1000), send), picoseconds(2000));
  EXPECT_EQ(sent, std::vector<unsigned>{3});
  u.depart(1, 3, 1000, picoseconds(1500));  // XON
  EXPECT_EQ(u.refresh(1, picoseconds(2000), send), sw::pfc_unit::never);
  EXPECT_EQ(sent.size(), 1u);
}
