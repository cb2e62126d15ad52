// Generated source bytes.
#include "sc_models/memory/payload_pattern.h"

#include <algorithm>
#include <cstring>

#include "sc_models/core/rng.h"

namespace fabricsim::memory {

uint64_t payload_pattern::key(uint32_t host) const { return core::splitmix64(m_seed ^ core::splitmix64(host + 1)); }

void payload_pattern::fill(uint8_t* dst, uint32_t host, uint64_t addr, uint64_t length) const {
  const uint64_t k = key(host);
  auto at = [k](uint64_t w) { return mix(w, k); };  // word() with the key hoisted out of the loop
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

namespace {
// Bytes that differ between two words.
int differing_bytes(uint64_t a, uint64_t b) {
  int n = 0;
  for (uint64_t x = a ^ b; x != 0; x >>= 8) n += (x & 0xff) != 0;
  return n;
}
}  // namespace

uint64_t payload_pattern::mismatches(const uint8_t* bytes, uint32_t host, uint64_t addr, uint64_t length) const {
  uint64_t wrong = 0;
  if (addr % 8 == 0) {  // the common case (payloads at MTU offsets of aligned buffers): word against word
    const uint64_t k = key(host), words = length / 8;
    for (uint64_t i = 0; i < words; ++i) {
      const uint64_t z = mix(addr / 8 + i, k);
      uint64_t got;
      std::memcpy(&got, bytes + 8 * i, 8);
      if (got != z) wrong += uint64_t(differing_bytes(got, z));
    }
    bytes += 8 * words;
    addr += 8 * words;
    length -= 8 * words;
  }
  uint8_t expected[4096];
  for (uint64_t at = 0; at < length; at += sizeof expected) {
    const uint64_t n = std::min<uint64_t>(sizeof expected, length - at);
    fill(expected, host, addr + at, n);
    if (std::memcmp(expected, bytes + at, n) == 0) continue;  // counted byte by byte only when they differ
    for (uint64_t k = 0; k < n; ++k) wrong += expected[k] != bytes[at + k];
  }
  return wrong;
}

}  // namespace fabricsim::memory
