// The bytes a workload's source buffers hold, as a pure function of (run seed, host, address): a source
// need not exist as bytes at all. A NIC builds a packet's payload reference as (host, address), and the
// bytes are generated where they are placed or checked, on whichever rank does it. Word w (bytes 8w .. 8w+7
// of a host's memory, little-endian) is a bijection of w for a given host (an odd multiplier and xor-shifts),
// so no two addresses of one host hold the same word: a payload placed at any other offset of the buffer
// differs from what belongs there in (nearly) every byte. Hosts differ in their key (splitmix64 of seed and
// host), so a payload from the wrong host differs too.
#pragma once

#include <cstdint>

namespace fabricsim::memory {

class payload_pattern {
 public:
  explicit payload_pattern(uint64_t seed) : m_seed(seed) {}
  uint64_t seed() const { return m_seed; }

  // The 8-byte word at word index `w` (address 8w) of `host`'s memory.
  uint64_t word(uint32_t host, uint64_t w) const { return mix(w, key(host)); }
  // Writes the `length` bytes at [addr, addr + length) of `host`'s memory into `dst` (any alignment).
  void fill(uint8_t* dst, uint32_t host, uint64_t addr, uint64_t length) const;
  // Bytes of `bytes` that differ from [addr, addr + length) of `host`'s memory.
  uint64_t mismatches(const uint8_t* bytes, uint32_t host, uint64_t addr, uint64_t length) const;

  // Word w under a host's key: two odd multiplies and xor-shifts, each a bijection.
  static uint64_t mix(uint64_t w, uint64_t key) {
    uint64_t z = (w ^ key) * 0x9E3779B97F4A7C15ull;
    z ^= z >> 29;
    z *= 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 32);
  }

 private:
  uint64_t key(uint32_t host) const;
  uint64_t m_seed;
};

}  // namespace fabricsim::memory
