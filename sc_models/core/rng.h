// Seeded random streams, one per instance: the stream of "leaf3" depends only on the run's seed and the
// instance's name, so adding a block elsewhere never perturbs another block's draws.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>

namespace fabricsim::core {

constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  return h;
}

// The seed of an instance's stream (and of a stream's purpose, e.g. "ecmp", inside it).
constexpr uint64_t stream_seed(uint64_t run_seed, std::string_view instance, std::string_view purpose = {}) {
  return splitmix64(run_seed ^ splitmix64(fnv1a64(instance) ^ splitmix64(fnv1a64(purpose))));
}

using rng_stream = std::mt19937_64;

inline rng_stream make_stream(uint64_t run_seed, std::string_view instance, std::string_view purpose = {}) {
  return rng_stream(stream_seed(run_seed, instance, purpose));
}

}  // namespace fabricsim::core
