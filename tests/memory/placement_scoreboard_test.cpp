// The payload pattern and the placement scoreboard, by hand: a pattern word recomputed here from the
// definition in payload_pattern.h, unaligned fills as slices of aligned ones, and coverage counts of hand-made
// landings (a duplicate, an overlapping resend, a byte past the end, a partial operation, a misplaced and a
// wrong-host payload, a stray write).
#include "sc_models/memory/placement_scoreboard.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <stdexcept>
#include <vector>

#include "sc_models/memory/payload_pattern.h"

namespace placement_scoreboard_test {

using fabricsim::memory::payload_pattern;
using fabricsim::memory::placement_scoreboard;

std::vector<uint8_t> bytes_of(const payload_pattern& p, uint32_t host, uint64_t addr, uint64_t length) {
  std::vector<uint8_t> out(length);
  p.fill(out.data(), host, addr, length);
  return out;
}

// splitmix64 (Steele, Lea and Flood 2014), written out here.
uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

TEST(payload_pattern, a_word_is_the_documented_mix_of_seed_host_and_address) {
  const payload_pattern p(42);
  for (const uint32_t host : {0u, 7u}) {
    const uint64_t key = splitmix(42 ^ splitmix(host + 1));
    for (const uint64_t w : {0ull, 1ull, 1000003ull}) {
      uint64_t z = (w ^ key) * 0x9E3779B97F4A7C15ull;
      z ^= z >> 29;
      z *= 0xBF58476D1CE4E5B9ull;
      EXPECT_EQ(p.word(host, w), z ^ (z >> 32)) << host << " " << w;
    }
  }
  // Little-endian: byte 8w + b of memory is byte b of word w.
  const std::vector<uint8_t> b = bytes_of(p, 3, 8 * 5, 8);
  uint64_t w5;
  std::memcpy(&w5, b.data(), 8);
  EXPECT_EQ(w5, p.word(3, 5));
}

TEST(payload_pattern, any_slice_is_the_same_bytes_as_the_aligned_whole) {
  const payload_pattern p(9);
  const std::vector<uint8_t> whole = bytes_of(p, 1, 4096, 256);
  for (const uint64_t at : {0u, 1u, 5u, 7u, 8u, 13u})
    for (const uint64_t len : {0u, 1u, 3u, 8u, 9u, 100u}) {
      const std::vector<uint8_t> part = bytes_of(p, 1, 4096 + at, len);
      EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + long(at))) << at << " " << len;
    }
  // Two instances of one seed agree (what every MPI rank relies on); another seed or host does not.
  EXPECT_EQ(bytes_of(payload_pattern(9), 1, 4096, 256), whole);
  EXPECT_GT(payload_pattern(9).mismatches(whole.data(), 2, 4096, 256), 200u);
  EXPECT_GT(payload_pattern(10).mismatches(whole.data(), 1, 4096, 256), 200u);
  EXPECT_EQ(p.mismatches(whole.data(), 1, 4096, 256), 0u);
}

TEST(payload_pattern, mismatches_counts_each_wrong_byte_at_any_alignment) {
  const payload_pattern p(3);
  for (const uint64_t addr : {4096u, 4099u}) {  // word against word, and byte against byte
    std::vector<uint8_t> b = bytes_of(p, 0, addr, 77);
    b[0] ^= 1;  // four bytes: in the first two words, and in the tail
    b[9] ^= 0x80;
    b[15] ^= 0xff;
    b[76] ^= 2;
    EXPECT_EQ(p.mismatches(b.data(), 0, addr, 77), 4u) << addr;
    EXPECT_EQ(p.mismatches(b.data() + 1, 0, addr + 1, 9), 1u) << addr;  // [1, 10) holds only b[9]
  }
}

// Byte `a` of `host`'s memory, one at a time from word() (a second implementation of fill's slicing).
uint8_t byte_at(const payload_pattern& p, uint32_t host, uint64_t a) {
  return uint8_t(p.word(host, a / 8) >> (8 * (a % 8)));
}

TEST(payload_pattern, long_fills_and_counts_agree_byte_by_byte_at_every_alignment) {
  // Lengths past the blocks the word loops work in (64 words), every start alignment, and wrong bytes at
  // block edges, in the partial first and last words and in runs: each counted here byte by byte.
  const payload_pattern p(77);
  for (uint64_t head = 0; head < 8; ++head)
    for (const uint64_t len : {0u, 5u, 8u, 511u, 512u, 513u, 1500u, 4096u, 4103u}) {
      const uint64_t addr = (1ull << 40) + 8 * 1021 + head;  // a far address, as a NIC's buffers are
      std::vector<uint8_t> b = bytes_of(p, 6, addr, len);
      for (uint64_t k = 0; k < len; ++k) ASSERT_EQ(b[k], byte_at(p, 6, addr + k)) << head << " " << len << " " << k;
      ASSERT_EQ(p.mismatches(b.data(), 6, addr, len), 0u) << head << " " << len;
      std::set<uint64_t> at;  // distinct positions, each made wrong once (xor with a byte that is never 0)
      for (const uint64_t a :
           std::initializer_list<uint64_t>{0, 1, 7, 8, 511, 512, 1023, 1499, 2000, 2001, 2002, len - 1})
        if (a < len) at.insert(a);
      uint64_t x = head * 1000 + len;
      for (const uint64_t a : at) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;  // an LCG (Knuth's MMIX constants)
        b[a] ^= uint8_t(1 + (x >> 56) % 255);
      }
      const uint64_t planted = at.size();
      uint64_t wrong = 0;
      for (uint64_t k = 0; k < len; ++k) wrong += b[k] != byte_at(p, 6, addr + k);
      ASSERT_EQ(wrong, planted) << head << " " << len;
      EXPECT_EQ(p.mismatches(b.data(), 6, addr, len), wrong) << head << " " << len;
    }
}

TEST(payload_pattern, no_two_words_of_a_host_are_equal) {
  const payload_pattern p(1);
  std::set<uint64_t> seen;
  for (uint64_t w = 0; w < 100000; ++w) seen.insert(p.word(4, w));
  EXPECT_EQ(seen.size(), 100000u);
}

// One 64 KiB operation: lands at h1 [4096, +65536), comes from h0 [8192, +65536); 16 packets of 4096.
struct one_write : ::testing::Test {
  payload_pattern pattern{5};
  placement_scoreboard sb{pattern, 3};
  size_t op = sb.add_region({1, 4096, 0, 8192, 65536});
  // Packet k's correct bytes, written where packet k belongs (or `shift` further).
  void land(uint64_t offset, uint64_t length, int64_t shift = 0, uint32_t from_host = 0) {
    const std::vector<uint8_t> b = bytes_of(pattern, from_host, 8192 + offset, length);
    sb.observer(1).landed(uint64_t(int64_t(4096 + offset) + shift), b.data(), length);
  }
};

TEST_F(one_write, in_order_landings_cover_it_once) {
  for (uint64_t k = 0; k < 16; ++k) land(k * 4096, 4096);
  EXPECT_EQ(sb.check(op).checked, 65536u);
  EXPECT_EQ(sb.check(op).mismatched, 0u);
  EXPECT_EQ(sb.check(op).duplicate, 0u);
  EXPECT_TRUE(sb.covered(op));
  land(3 * 4096, 4096);  // a resend after the whole is there
  EXPECT_EQ(sb.check(op).checked, 65536u);
  EXPECT_EQ(sb.check(op).duplicate, 4096u);
  EXPECT_EQ(sb.landings(), 17u);
}

TEST_F(one_write, a_duplicate_and_an_overlapping_resend_count_once) {
  land(0, 4096);
  land(0, 4096);     // the same packet twice
  land(2048, 4096);  // a resend cut at another boundary: [2048, 4096) again, [4096, 6144) new
  EXPECT_EQ(sb.check(op).checked, 6144u);
  EXPECT_EQ(sb.check(op).duplicate, 4096u + 2048u);
  EXPECT_EQ(sb.check(op).mismatched, 0u);
  land(12288, 4096);  // out of order: a gap [6144, 12288) between
  land(4096, 8192);   // fills the gap and overlaps both sides by 2048 and 0
  EXPECT_EQ(sb.check(op).checked, 16384u);
  EXPECT_EQ(sb.check(op).duplicate, 4096u + 2048u + 2048u);
  EXPECT_FALSE(sb.covered(op));  // a partial operation: 16 KiB of 64 checked
}

TEST_F(one_write, coverage_agrees_with_a_byte_map_under_random_landings) {
  // 2,000 landings of random offsets and lengths (seeded), counted again here with one flag per byte.
  std::vector<bool> seen(65536, false);
  uint64_t x = 12345, distinct = 0, twice = 0;
  for (int n = 0; n < 2000; ++n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;  // an LCG (Knuth's MMIX constants)
    const uint64_t offset = (x >> 33) % 65536, length = std::min<uint64_t>(1 + (x >> 13) % 700, 65536 - offset);
    land(offset, length);
    for (uint64_t b = offset; b < offset + length; ++b) {
      if (seen[b])
        ++twice;
      else
        ++distinct;
      seen[b] = true;
    }
    ASSERT_EQ(sb.check(op).checked, distinct) << n;
    ASSERT_EQ(sb.check(op).duplicate, twice) << n;
  }
  EXPECT_EQ(sb.check(op).mismatched, 0u);
  EXPECT_EQ(sb.covered(op), distinct == 65536);
}

TEST_F(one_write, bytes_past_the_end_are_counted_not_compared) {
  land(65536 - 100, 100);
  const std::vector<uint8_t> b(200, 0xab);
  sb.observer(1).landed(4096 + 65536 - 100, b.data(), 200);  // 100 inside (all wrong: 0xab), 100 past the end
  EXPECT_EQ(sb.check(op).past_end, 100u);
  EXPECT_EQ(sb.check(op).checked, 100u);
  EXPECT_EQ(sb.check(op).duplicate, 100u);
  // 0xab equals a pattern byte about once in 256: of 100, nearly all differ.
  EXPECT_GE(sb.check(op).mismatched, 90u);
  EXPECT_LE(sb.check(op).mismatched, 100u);
}

TEST_F(one_write, a_misplaced_or_foreign_payload_mismatches) {
  land(5 * 4096, 4096, 100);  // packet 5's bytes, 100 bytes past where they belong
  EXPECT_EQ(sb.check(op).checked, 4096u);
  // Compared at [a + 100, a + 4196) with the source there: a byte of one word against a byte of another
  // (100 is not a multiple of 8), equal about once in 256.
  EXPECT_GT(sb.check(op).mismatched, 4000u);
  EXPECT_LE(sb.check(op).mismatched, 4096u);
  const uint64_t before = sb.check(op).mismatched;
  land(0, 4096, 0, 2);  // the right offset from the wrong host's memory
  EXPECT_GT(sb.check(op).mismatched - before, 4000u);
}

TEST_F(one_write, a_write_outside_every_operation_is_stray) {
  land(0, 4096, -4096);  // h1 [0, 4096): before the region
  EXPECT_EQ(sb.stray_bytes(), 4096u);
  EXPECT_EQ(sb.check(op).checked, 0u);
  const std::vector<uint8_t> b(64, 0);
  sb.observer(2).landed(4096, b.data(), 64);  // h2 has no region at all
  EXPECT_EQ(sb.stray_bytes(), 4096u + 64u);
}

// A generated payload told by its name (landing_observer::landed_generated, what a NIC or GPU does) is
// counted as its bytes told by landed() are: two scoreboards, one fed bytes and one names, see the same
// landings (right ones, resends, misplaced by a word and by parts of one, from the wrong host or under another
// seed, past the end, stray) and must agree on every count; and a misplaced name's mismatches are counted again
// here byte by byte from word().
TEST(placement_scoreboard, a_payload_told_by_name_counts_as_its_bytes) {
  const payload_pattern pattern(5), other_seed(6);
  placement_scoreboard by_bytes(pattern, 3), by_name(pattern, 3);
  for (placement_scoreboard* sb : {&by_bytes, &by_name}) sb->add_region({1, 4096, 0, 8192, 65536});
  struct landing {
    int64_t shift;  // written this far from where the bytes belong
    uint64_t offset, length;
    uint32_t host;
    const payload_pattern* under;
  };
  const std::vector<landing> landings = {
      {0, 0, 4096, 0, &pattern},       {0, 0, 4096, 0, &pattern},        {0, 2048, 4096, 0, &pattern},
      {100, 20480, 4096, 0, &pattern}, {8, 8192, 1000, 0, &pattern},     {-3, 12288, 777, 0, &pattern},
      {0, 16384, 4096, 2, &pattern},   {0, 24576, 4096, 0, &other_seed}, {0, 65536 - 100, 300, 0, &pattern},
      {-4096, 0, 64, 0, &pattern},     {0, 32768, 4096, 0, &pattern}};
  for (const landing& l : landings) {
    const uint64_t va = uint64_t(int64_t(4096 + l.offset) + l.shift), src = 8192 + l.offset;
    const std::vector<uint8_t> b = bytes_of(*l.under, l.host, src, l.length);
    by_bytes.observer(1).landed(va, b.data(), l.length);
    by_name.observer(1).landed_generated(va, *l.under, l.host, src, l.length);
  }
  const auto& a = by_bytes.check(0);
  const auto& n = by_name.check(0);
  EXPECT_EQ(n.checked, a.checked);
  EXPECT_EQ(n.duplicate, a.duplicate);
  EXPECT_EQ(n.past_end, a.past_end);
  EXPECT_EQ(n.mismatched, a.mismatched);
  EXPECT_EQ(by_name.stray_bytes(), by_bytes.stray_bytes());
  EXPECT_EQ(by_name.landings(), by_bytes.landings());
  EXPECT_EQ(n.past_end, 200u);
  EXPECT_EQ(by_name.stray_bytes(), 64u);
  // Five of the landings are wrong (three misplaced, a foreign host, another seed): thousands of bytes.
  EXPECT_GT(n.mismatched, 4000u + 900u + 700u + 4000u + 4000u);

  // One misplaced name alone, its wrong bytes counted here one by one.
  placement_scoreboard one(pattern, 3);
  one.add_region({1, 4096, 0, 8192, 65536});
  one.observer(1).landed_generated(4096 + 8, pattern, 0, 8192, 4096);  // bytes [0, 4096) written at offset 8
  uint64_t wrong = 0;
  for (uint64_t k = 0; k < 4096; ++k) wrong += byte_at(pattern, 0, 8192 + k) != byte_at(pattern, 0, 8192 + 8 + k);
  EXPECT_EQ(one.check(0).mismatched, wrong);
  EXPECT_GT(wrong, 4000u);
  one.observer(1).landed_generated(4096 + 8, pattern, 0, 8192 + 8, 4096);  // the right name there: none wrong
  EXPECT_EQ(one.check(0).mismatched, wrong);
  EXPECT_EQ(one.check(0).duplicate, 4096u);
}

TEST(placement_scoreboard, regions_of_one_host_may_not_overlap) {
  placement_scoreboard sb(payload_pattern(1), 2);
  sb.add_region({1, 0, 0, 0, 8192});
  sb.add_region({1, 4096, 0, 8192, 4096});
  const uint8_t b[8] = {};
  EXPECT_THROW(sb.landed(1, 0, b, 8), std::logic_error);
  EXPECT_THROW(sb.add_region({5, 0, 0, 0, 1}), std::logic_error);

  // An overlapping region added after landings have found (and remembered) the first is refused all the same.
  placement_scoreboard later(payload_pattern(1), 2);
  later.add_region({1, 0, 0, 0, 8192});
  const std::vector<uint8_t> first = bytes_of(payload_pattern(1), 0, 0, 8);
  later.landed(1, 0, first.data(), 8);
  EXPECT_EQ(later.check(0).checked, 8u);
  later.add_region({1, 4096, 0, 8192, 4096});
  EXPECT_THROW(later.landed(1, 8, first.data(), 8), std::logic_error);
}

// Landings that alternate between two regions of one host, fall between them and below them: each counted in
// its own region (or as stray), whichever region the host's previous landing fell in.
TEST(placement_scoreboard, landings_alternating_between_regions_and_gaps_count_where_they_fall) {
  const payload_pattern pattern(3);
  placement_scoreboard sb(pattern, 2);
  sb.add_region({1, 4096, 0, 0, 1024});     // region 0: [4096, 5120)
  sb.add_region({1, 8192, 0, 65536, 512});  // region 1: [8192, 8704)
  auto land = [&](uint64_t va, uint64_t src, uint64_t len) {
    const std::vector<uint8_t> b = bytes_of(pattern, 0, src, len);
    sb.landed(1, va, b.data(), len);
  };
  land(4096, 0, 256);                  // region 0
  land(8192, 65536, 256);              // region 1
  land(4096 + 256, 256, 256);          // region 0 again
  land(6000, 0, 100);                  // between the two: stray
  land(8192 + 256, 65536 + 256, 256);  // region 1 again: now covered
  land(100, 0, 50);                    // below both: stray
  land(4096 + 512, 512, 512);          // region 0: now covered
  EXPECT_EQ(sb.check(0).checked, 1024u);
  EXPECT_EQ(sb.check(1).checked, 512u);
  EXPECT_TRUE(sb.covered(0));
  EXPECT_TRUE(sb.covered(1));
  EXPECT_EQ(sb.check(0).mismatched + sb.check(1).mismatched, 0u);
  EXPECT_EQ(sb.stray_bytes(), 150u);
  EXPECT_EQ(sb.landings(), 7u);
}

}  // namespace placement_scoreboard_test
