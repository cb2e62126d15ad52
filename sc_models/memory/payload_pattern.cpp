// Generated source bytes.
#include "sc_models/memory/payload_pattern.h"

#include <algorithm>
#include <cstring>

#include "sc_models/core/rng.h"

namespace fabricsim::memory {

// The word loops below are where a placed run spends most of its checking (two per landed packet: the NIC
// generates the payload, the scoreboard compares it), so they are written for the vectoriser (no branch
// inside, every iteration independent) and built three times, for AVX-512 (a 64-bit multiply per lane), AVX2
// and plain x86-64, the one the CPU has chosen once when the program loads. Every build computes the same
// integers: which one runs changes nothing but the speed.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define FABRICSIM_WORD_LOOP __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define FABRICSIM_WORD_LOOP
#endif

namespace {

// Words w .. w+n-1 under `key`, little-endian, into dst (any alignment).
FABRICSIM_WORD_LOOP void fill_words(uint8_t* dst, uint64_t w, uint64_t key, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t v = payload_pattern::mix(w + i, key);
    std::memcpy(dst + 8 * i, &v, 8);
  }
}

// The OR of (got xor expected) over words w .. w+n-1: zero exactly when all n words are right.
FABRICSIM_WORD_LOOP uint64_t words_differ(const uint8_t* got, uint64_t w, uint64_t key, uint64_t n) {
  uint64_t differ = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t g;
    std::memcpy(&g, got + 8 * i, 8);
    differ |= g ^ payload_pattern::mix(w + i, key);
  }
  return differ;
}

// Bytes that differ between two words.
uint64_t differing_bytes(uint64_t a, uint64_t b) {
  uint64_t n = 0;
  for (uint64_t x = a ^ b; x != 0; x >>= 8) n += (x & 0xff) != 0;
  return n;
}

// Bytes [from, from + n) of word v (little-endian: byte b of memory word w is bits 8b .. 8b+7).
uint64_t bytes_of(uint64_t v, uint64_t from, uint64_t n) {
  uint64_t out = 0;
  std::memcpy(&out, reinterpret_cast<const uint8_t*>(&v) + from, n);
  return out;
}

// The n (<= 8) bytes at p as a word, the rest zero.
uint64_t load(const uint8_t* p, uint64_t n) {
  uint64_t out = 0;
  std::memcpy(&out, p, n);
  return out;
}

constexpr uint64_t block_words = 64;  // words compared per pass of the fast loop before a wrong one is looked for

}  // namespace

uint64_t payload_pattern::key(uint32_t host) const { return core::splitmix64(m_seed ^ core::splitmix64(host + 1)); }

void payload_pattern::fill(uint8_t* dst, uint32_t host, uint64_t addr, uint64_t length) const {
  const uint64_t k = key(host);
  uint64_t w = addr / 8, done = 0;
  if (const uint64_t head = addr % 8; head != 0 && length > 0) {  // a partial first word
    const uint64_t v = mix(w++, k);
    done = std::min<uint64_t>(8 - head, length);
    std::memcpy(dst, reinterpret_cast<const uint8_t*>(&v) + head, done);
  }
  const uint64_t words = (length - done) / 8;
  fill_words(dst + done, w, k, words);
  w += words;
  done += 8 * words;
  if (done < length) {
    const uint64_t v = mix(w, k);
    std::memcpy(dst + done, &v, length - done);
  }
}

// Word against word, generated in registers (nothing materialised): a partial first and last word byte by
// byte, the whole words between in blocks, and a block's bytes counted one by one only when it differs.
uint64_t payload_pattern::mismatches(const uint8_t* bytes, uint32_t host, uint64_t addr, uint64_t length) const {
  const uint64_t k = key(host);
  uint64_t wrong = 0, w = addr / 8, done = 0;
  if (const uint64_t head = addr % 8; head != 0 && length > 0) {
    done = std::min<uint64_t>(8 - head, length);
    wrong += differing_bytes(bytes_of(mix(w++, k), head, done), load(bytes, done));
  }
  for (uint64_t words = (length - done) / 8; words > 0;) {
    const uint64_t n = std::min(words, block_words);
    if (words_differ(bytes + done, w, k, n) != 0)
      for (uint64_t i = 0; i < n; ++i) wrong += differing_bytes(load(bytes + done + 8 * i, 8), mix(w + i, k));
    w += n;
    done += 8 * n;
    words -= n;
  }
  if (done < length) wrong += differing_bytes(bytes_of(mix(w, k), 0, length - done), load(bytes + done, length - done));
  return wrong;
}

}  // namespace fabricsim::memory
