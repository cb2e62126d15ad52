// The planted placement fault on its own: it moves exactly one payload write, the one after `after_packets`,
// by offset_bytes, never past the end of memory, and nothing when not armed.
#include "sc_models/nic/placement_fault.h"

#include <gtest/gtest.h>

namespace fabricsim::nic {
namespace placement_fault_test {

TEST(placement_fault, off_unless_armed) {
  placement_fault f;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(f.shift(4096u * i, 4096, 1u << 20), 0u);
  EXPECT_FALSE(f.fired());
}

TEST(placement_fault, moves_exactly_the_write_after_n) {
  placement_fault f;
  f.arm(3, 100);
  EXPECT_EQ(f.shift(0, 4096, 1u << 20), 0u);
  EXPECT_EQ(f.shift(4096, 4096, 1u << 20), 0u);
  EXPECT_EQ(f.shift(8192, 4096, 1u << 20), 0u);
  EXPECT_FALSE(f.fired());
  EXPECT_EQ(f.shift(12288, 1000, 1u << 20), 100u);  // the fourth
  EXPECT_TRUE(f.fired());
  EXPECT_EQ(f.va(), 12288u);
  EXPECT_EQ(f.length(), 1000u);
  EXPECT_EQ(f.applied_offset_bytes(), 100u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(f.shift(16384, 4096, 1u << 20), 0u);  // once only
}

TEST(placement_fault, stays_inside_memory) {
  placement_fault f;
  f.arm(0, 100);
  // 900 + 50 = 950 of a 1000-byte memory: 50 bytes of room, so it moves 50.
  EXPECT_EQ(f.shift(900, 50, 1000), 50u);
  EXPECT_EQ(f.applied_offset_bytes(), 50u);
  placement_fault g;
  g.arm(0, 100);
  EXPECT_EQ(g.shift(952, 48, 1000), 0u);  // the write ends at the last byte: no room at all
  EXPECT_TRUE(g.fired());
}

}  // namespace placement_fault_test
}  // namespace fabricsim::nic
