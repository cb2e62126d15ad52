// What a DMA engine tells about each payload write as it lands: the address it wrote (after every fault and
// translation) and the bytes. A verification component (memory::placement_scoreboard) checks them there and
// then, so that data need not be kept in memory to be checked. A generated payload (memory::payload_pattern)
// is told by its name instead: the source bytes it is, which an observer that knows the pattern can compare
// with what belongs there without making either.
#pragma once

#include <cstdint>
#include <vector>

#include "sc_models/memory/payload_pattern.h"

namespace fabricsim::memory {

class landing_observer {
 public:
  virtual ~landing_observer() = default;
  // `length` bytes at `bytes` were written at [va, va + length) of this host's memory.
  virtual void landed(uint64_t va, const uint8_t* bytes, uint64_t length) = 0;
  // The `length` bytes at [source_va, +length) of `source_host`'s memory under `pattern` were written at
  // [va, va + length). By default they are made and told to landed().
  virtual void landed_generated(uint64_t va, const payload_pattern& pattern, uint32_t source_host, uint64_t source_va,
                                uint64_t length) {
    static thread_local std::vector<uint8_t> scratch;  // one MTU, once per process
    if (scratch.size() < length) scratch.resize(length);
    pattern.fill(scratch.data(), source_host, source_va, length);
    landed(va, scratch.data(), length);
  }
};

}  // namespace fabricsim::memory
