// Generated source bytes.
#include "sc_models/memory/payload_pattern.h"

#include <algorithm>
#include <cstring>

#include "sc_models/core/rng.h"

namespace fabricsim::memory {

uint64_t payload_pattern::key(uint32_t host) const { return core::splitmix64(m_seed ^ core::splitmix64(host + 1)); }

void payload_pattern::fill(uint8_t* dst, uint32_t host, uint64_t addr, uint64_t length) const {
  const uint64_t k = key(host);
  auto at = [k](uint64_t w) {  // word() with the key hoisted out of the loop
    uint64_t z = (w ^ k) * 0x9E3779B97F4A7C15ull;
    z ^= z >> 29;
    z *= 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 32);
  };
  uint64_t w = addr / 8, done = 0;
  if (const uint64_t head = addr % 8; head != 0 && length > 0) {  // a partial first word
    const uint64_t v = at(w++);
    const uint64_t n = std::min<uint64_t>(8 - head, length);
    std::memcpy(dst, reinterpret_cast<const uint8_t*>(&v) + head, n);
    done = n;
  }
  for (; done + 8 <= length; done += 8) {
    const uint64_t v = at(w++);
    std::memcpy(dst + done, &v, 8);
  }
  if (done < length) {
    const uint64_t v = at(w);
    std::memcpy(dst + done, &v, length - done);
  }
}

uint64_t payload_pattern::mismatches(const uint8_t* bytes, uint32_t host, uint64_t addr, uint64_t length) const {
  uint8_t expected[4096];
  uint64_t wrong = 0;
  for (uint64_t at = 0; at < length; at += sizeof expected) {
    const uint64_t n = std::min<uint64_t>(sizeof expected, length - at);
    fill(expected, host, addr + at, n);
    if (std::memcmp(expected, bytes + at, n) == 0) continue;  // counted byte by byte only when they differ
    for (uint64_t k = 0; k < n; ++k) wrong += expected[k] != bytes[at + k];
  }
  return wrong;
}

}  // namespace fabricsim::memory
