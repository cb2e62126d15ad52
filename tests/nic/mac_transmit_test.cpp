// The SuperNIC's MAC transmit side (sc_models/nic/mac_transmit.h): FIFO refill points, PFC pause times worked
// out by hand (a quantum is 512 bit times; at 400 Gb/s a bit is 2.5 ps, so 65535 quanta are
// 65535 x 512 x 2.5 ps = 83 884 800 ps), and InfiniBand credits in 64-byte blocks.
#include "sc_models/nic/mac_transmit.h"

#include <gtest/gtest.h>

namespace fabricsim::nic {
namespace mac_transmit_test {

using core::picoseconds;

picoseconds us(uint64_t v) { return picoseconds(v * 1'000'000); }
const core::bits_per_second rate_400g = core::bits_per_second::from_gbps(400);

TEST(mac_transmit, fifo_refills_when_one_frame_is_left) {
  mac_transmit two(2, 3, false, 0);
  EXPECT_TRUE(two.empty());
  two.committed(picoseconds(10));
  EXPECT_TRUE(two.has_room());
  two.committed(picoseconds(20));
  EXPECT_FALSE(two.has_room());
  EXPECT_EQ(two.refill_at(), picoseconds(10));  // the first has left, one is left
  EXPECT_EQ(two.last_leaves(), picoseconds(20));
  two.drain(picoseconds(9));
  EXPECT_FALSE(two.has_room());
  two.drain(picoseconds(10));
  EXPECT_TRUE(two.has_room());
  EXPECT_EQ(two.refill_at(), picoseconds(20));
  two.drain(picoseconds(20));
  EXPECT_TRUE(two.empty());

  mac_transmit one(1, 3, false, 0);
  one.committed(picoseconds(30));
  EXPECT_FALSE(one.has_room());
  EXPECT_EQ(one.refill_at(), picoseconds(30));  // a FIFO of one: refill as soon as it has left
}

TEST(mac_transmit, pfc_pauses_only_our_priority_for_its_quanta_and_xon_resumes) {
  mac_transmit mac(4, 3, false, 0);
  EXPECT_FALSE(mac.pause(0x04, 65535, rate_400g, us(1)));  // priority 2: not ours
  EXPECT_FALSE(mac.paused(us(1)));
  EXPECT_TRUE(mac.pause(0x08, 65535, rate_400g, us(1)));
  EXPECT_EQ(mac.paused_until(), picoseconds(1'000'000 + 83'884'800));
  EXPECT_TRUE(mac.paused(us(84)));
  EXPECT_FALSE(mac.paused(picoseconds(84'884'800)));
  EXPECT_DOUBLE_EQ(mac.paused_us(us(5)), 4.0);
  EXPECT_TRUE(mac.pause(0x08, 0, rate_400g, us(11)));  // XON: resume now
  EXPECT_FALSE(mac.paused(us(11)));
  EXPECT_DOUBLE_EQ(mac.paused_us(us(20)), 10.0);  // 1 us .. 11 us
  // A refresh before the pause ran out restarts it from then; the time paused counts once.
  EXPECT_TRUE(mac.pause(0x08, 1000, rate_400g, us(30)));  // 1000 x 512 x 2.5 ps = 1.28 us
  EXPECT_TRUE(mac.pause(0x08, 1000, rate_400g, us(31)));
  EXPECT_EQ(mac.paused_until(), picoseconds(31'000'000 + 1'280'000));
  EXPECT_DOUBLE_EQ(mac.paused_us(us(40)), 12.28);  // 10 + 1 (30 .. 31 us) + 1.28
}

TEST(mac_transmit, infiniband_waits_for_credit_for_the_largest_packet) {
  mac_transmit mac(4, 0, true, 70);
  EXPECT_TRUE(mac.credit_blocked(us(1)));  // no credit limit learnt yet
  mac.credits().update(0, 100);
  EXPECT_FALSE(mac.credit_blocked(us(2)));
  mac.sent(130, us(2));  // 130 bytes: 3 blocks of 64
  EXPECT_EQ(mac.credits().fctbs(0), 3u);
  mac.sent(64 * 28, us(3));  // 31 blocks sent: 69 left < 70
  EXPECT_TRUE(mac.credit_blocked(us(3)));
  EXPECT_EQ(mac.credits().violations(), 0u);

  mac_transmit eth(4, 0, false, 70);  // Ethernet: no credits
  EXPECT_FALSE(eth.credit_blocked(us(1)));
  eth.sent(130, us(1));
  EXPECT_EQ(eth.credits().fctbs(0), 0u);
}

}  // namespace mac_transmit_test
}  // namespace fabricsim::nic
