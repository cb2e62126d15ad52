// core::pause_duration (sc_models/core/units.h): the one formula for how long a PFC / 802.3x pause lasts,
// against values worked by hand from quanta x 512 bit times / line rate.
#include "sc_models/core/units.h"

#include <gtest/gtest.h>

using fabricsim::core::bits_per_second;
using fabricsim::core::pause_duration;

TEST(units, a_full_pause_at_400g_lasts_83_8848_us) {
  // 65535 x 512 = 33,553,920 bit times; at 400e9 b/s that is 83.8848 us = 83,884,800 ps exactly.
  EXPECT_EQ(pause_duration(65535, bits_per_second::from_gbps(400)).value, 83'884'800u);
  // Twice the rate, half the time: 41,942,400 ps.
  EXPECT_EQ(pause_duration(65535, bits_per_second::from_gbps(800)).value, 41'942'400u);
}

TEST(units, one_quantum_is_512_bit_times_truncated_to_the_picosecond) {
  EXPECT_EQ(pause_duration(1, bits_per_second::from_gbps(400)).value, 1280u);  // 512 / 400e9 = 1.28 ns
  EXPECT_EQ(pause_duration(1, bits_per_second::from_gbps(300)).value, 1706u);  // 1706.67 ps, truncated
  EXPECT_EQ(pause_duration(0, bits_per_second::from_gbps(400)).value, 0u);     // XON: resume at once
}

TEST(units, a_full_pause_at_1g_does_not_overflow) {
  // 65535 x 512 x 10^12 = 3.4e19 passes 2^64 = 1.8e19: a 64-bit product would wrap. The answer is
  // 33,553,920 bit times at 1 b/ns = 33,553,920 ns.
  EXPECT_EQ(pause_duration(65535, bits_per_second::from_gbps(1)).value, 33'553'920'000ull);
}
